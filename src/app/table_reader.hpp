// One table of a daemon's TOML file ([engine], [app], ...) read through the
// shared TOML reader: errors read "FILE: [TABLE]: setting KEY: WHY (line N)".
// Internal to kite_app (kite-acceptor and kite-initiator).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kite/engine/agent.hpp"
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
  // An array of core numbers (0..4095).
  std::vector<int> cores(const toml::node& n, std::string_view key) const {
    const auto* a = n.as_array();
    if (a == nullptr) fail(n, key, "expected an array of core numbers");
    std::vector<int> out;
    for (const auto& x : *a) out.push_back(static_cast<int>(integer(x, key, 0, 4095)));
    return out;
  }
  // An idle strategy's name.
  engine::IdleKind idle(const toml::node& n, std::string_view key) const {
    engine::IdleKind kind{};
    if (!engine::parse_idle(string(n, key), kind)) fail(n, key, "expected \"busy_spin\", \"spin_yield\" or \"block\"");
    return kind;
  }

 private:
  const util::TomlReader& r_;
  std::string table_;
};

}  // namespace kite::app::detail
