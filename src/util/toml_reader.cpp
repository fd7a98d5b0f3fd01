#include "kite/util/toml_reader.hpp"

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kite::util {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

TomlReader::TomlReader(std::string file) : file_(std::move(file)) {}

toml::table TomlReader::parse(std::string_view text) const {
  try {
    return toml::parse(text, file_);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << file_ << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": TOML syntax: " << e.description();
    throw ConfigError(os.str());
  }
}

toml::table TomlReader::parse_file() const {
  std::ifstream in(file_, std::ios::binary);
  if (!in) fail("", std::string("cannot be read: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str());
}

void TomlReader::fail(const std::string& path, const std::string& why) const {
  throw ConfigError(file_ + ": " + (path.empty() ? "" : path + ": ") + why);
}

void TomlReader::fail(const toml::node& at, const std::string& path, const std::string& why) const {
  const auto line = at.source().begin.line;
  if (line == 0) fail(path, why);
  fail(path, why + " (line " + std::to_string(line) + ")");
}

void TomlReader::wrong_type(const toml::node& n, const std::string& path, const std::string& wanted) const {
  fail(n, path, "expected " + wanted + ", got " + type_name(n));
}

std::string TomlReader::expect_string(const toml::node& n, const std::string& path) const {
  if (const auto* v = n.as_string()) return v->get();
  wrong_type(n, path, "a string");
}

std::int64_t TomlReader::expect_integer(const toml::node& n, const std::string& path) const {
  if (const auto* v = n.as_integer()) return v->get();
  wrong_type(n, path, "an integer");
}

std::int64_t TomlReader::expect_integer(const toml::node& n, const std::string& path, std::int64_t lo,
                                        std::int64_t hi) const {
  const std::int64_t x = expect_integer(n, path);
  if (x < lo || x > hi)
    fail(n, path, "value " + std::to_string(x) + " out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

double TomlReader::expect_number(const toml::node& n, const std::string& path) const {
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_integer()) return static_cast<double>(v->get());
  wrong_type(n, path, "a number");
}

bool TomlReader::expect_boolean(const toml::node& n, const std::string& path) const {
  if (const auto* v = n.as_boolean()) return v->get();
  wrong_type(n, path, "true or false");
}

std::vector<std::string> TomlReader::expect_strings(const toml::node& n, const std::string& path) const {
  const auto* a = n.as_array();
  if (a == nullptr) wrong_type(n, path, "an array of strings");
  std::vector<std::string> out;
  for (const auto& e : *a) {
    if (const auto* s = e.as_string()) {
      out.push_back(s->get());
      continue;
    }
    const std::string element = "an element that is " + type_name(e);
    fail(e, path, "expected an array of strings, got " + element);
  }
  return out;
}

const toml::table& TomlReader::expect_table(const toml::node& n, const std::string& path) const {
  if (const auto* t = n.as_table()) return *t;
  wrong_type(n, path, "a table");
}

std::optional<std::string> TomlReader::string(const toml::table& t, std::string_view key,
                                              const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return expect_string(*n, prefix + std::string(key));
}

std::optional<std::int64_t> TomlReader::integer(const toml::table& t, std::string_view key,
                                                const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return expect_integer(*n, prefix + std::string(key));
}

std::optional<double> TomlReader::number(const toml::table& t, std::string_view key, const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return expect_number(*n, prefix + std::string(key));
}

std::optional<bool> TomlReader::boolean(const toml::table& t, std::string_view key, const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return expect_boolean(*n, prefix + std::string(key));
}

std::optional<std::vector<std::string>> TomlReader::strings(const toml::table& t, std::string_view key,
                                                            const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return expect_strings(*n, prefix + std::string(key));
}

const toml::table* TomlReader::table(const toml::table& t, std::string_view key, const std::string& prefix) const {
  const toml::node* n = t.get(key);
  if (n == nullptr) return nullptr;
  return &expect_table(*n, prefix + std::string(key));
}

void TomlReader::only(const toml::table& t, const std::string& prefix, std::initializer_list<const char*> keys) const {
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (std::any_of(keys.begin(), keys.end(), [&](const char* a) { return key == a; })) continue;
    std::string allowed;
    for (const char* a : keys) allowed += std::string(allowed.empty() ? "" : ", ") + a;
    fail(v, prefix + std::string(key), "unknown key (expected one of: " + allowed + ")");
  }
}

}  // namespace kite::util
