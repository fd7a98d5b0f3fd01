// One table of a daemon's TOML file ([engine], [app], ...) read through the
// shared TOML reader: errors read "FILE: [TABLE]: setting KEY: WHY (line N)".
// Internal to kite_app (kite-acceptor and kite-initiator).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kite/util/toml_reader.hpp"

namespace kite::app::detail {

class TableReader {
 public:
  TableReader(const util::TomlReader& r, std::string table) : r_(r), table_(std::move(table)) {}
  std::string path(std::string_view key) const {
    std::string p = "[";
    p.append(table_).append("]: setting ").append(key);
    return p;
  }
  [[noreturn]] void fail(const toml::node& n, std::string_view key, const std::string& why) const {
    r_.fail(n, path(key), why);
  }
  std::string string(const toml::node& n, std::string_view key) const { return r_.expect_string(n, path(key)); }
  bool boolean(const toml::node& n, std::string_view key) const { return r_.expect_boolean(n, path(key)); }
  std::int64_t integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
    return r_.expect_integer(n, path(key), lo, hi);
  }

 private:
  const util::TomlReader& r_;
  std::string table_;
};

}  // namespace kite::app::detail
