// Strict, typed reads of a TOML document with one-line errors. The session
// loader's files and the lab's machine, matrix and flavour files are read
// through a TomlReader, so each reports a mistake the same way:
//
//     FILE: PATH: WHAT (line N)
//
// PATH names the key as the caller sees it ("cores.server", "session 2:
// setting HeartBtInt"); the line is the offending value's, when the reader
// knows it. Syntax errors read "FILE:LINE:COLUMN: TOML syntax: ...".
// Set-up code only: every call may allocate.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kite/util/config_error.hpp"
#include "kite/util/toml.hpp"

namespace kite::util {

// "a string", "an integer", "a number", "a boolean", "an array", "a table",
// "a date or time": a node's type as an error message says it.
std::string type_name(const toml::node& n);

class TomlReader {
 public:
  // `file` is the path or the name that starts every message. A value of
  // the wrong type reads "PATH: expected an integer, got a string (line N)".
  explicit TomlReader(std::string file);

  const std::string& file() const noexcept { return file_; }

  // Parses `text`, or the file named `file`. Throws ConfigError (as every
  // call below does) on a syntax error or an unreadable file.
  toml::table parse(std::string_view text) const;
  toml::table parse_file() const;

  // Throws ConfigError "FILE: PATH: WHY" (no PATH part when empty); with a
  // node, the node's line is added.
  [[noreturn]] void fail(const std::string& path, const std::string& why) const;
  [[noreturn]] void fail(const toml::node& at, const std::string& path, const std::string& why) const;
  // "... PATH: expected WANTED, got <n's type>".
  [[noreturn]] void wrong_type(const toml::node& n, const std::string& path, const std::string& wanted) const;

  // One value of a required type; anything else throws through wrong_type.
  std::string expect_string(const toml::node& n, const std::string& path) const;
  std::int64_t expect_integer(const toml::node& n, const std::string& path) const;
  // The same, and "value X out of range LO..HI" outside [lo, hi].
  std::int64_t expect_integer(const toml::node& n, const std::string& path, std::int64_t lo, std::int64_t hi) const;
  double expect_number(const toml::node& n, const std::string& path) const;  // an integer is a number too
  bool expect_boolean(const toml::node& n, const std::string& path) const;
  std::vector<std::string> expect_strings(const toml::node& n, const std::string& path) const;
  const toml::table& expect_table(const toml::node& n, const std::string& path) const;

  // t[key] when present (nullopt, or nullptr for a table, when absent),
  // typed as above; PATH is prefix + key ("transports." + "kernel").
  std::optional<std::string> string(const toml::table& t, std::string_view key, const std::string& prefix) const;
  std::optional<std::int64_t> integer(const toml::table& t, std::string_view key, const std::string& prefix) const;
  std::optional<double> number(const toml::table& t, std::string_view key, const std::string& prefix) const;
  std::optional<bool> boolean(const toml::table& t, std::string_view key, const std::string& prefix) const;
  std::optional<std::vector<std::string>> strings(const toml::table& t, std::string_view key,
                                                  const std::string& prefix) const;
  const toml::table* table(const toml::table& t, std::string_view key, const std::string& prefix) const;

  // Throws "PREFIX+KEY: unknown key (expected one of: ...)" for a key of t
  // not in `keys`.
  void only(const toml::table& t, const std::string& prefix, std::initializer_list<const char*> keys) const;

 private:
  std::string file_;
};

}  // namespace kite::util
