// A TOML table's keys as data: each key's name and the function that reads
// its value into a model. The session's [defaults]/[[session]] settings and
// the daemons' [engine], [app], ... tables are each read through one table
// of keys, so a file's mistakes all read the same way:
//
//     FILE: WHERE: setting KEY: WHY (line N)
//
// WHERE is "session 2" or "[engine]"; the line is the value's. Set-up code
// only: every call may allocate.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "kite/util/toml_reader.hpp"

namespace kite::util {

// One setting's value being read: its node and its path in messages
// ("session 2: setting HeartBtInt", "[engine]: setting port").
struct Setting {
  const TomlReader& reader;
  const toml::node& node;
  std::string path;

  [[noreturn]] void fail(const std::string& why) const { reader.fail(node, path, why); }
  std::string string() const { return reader.expect_string(node, path); }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const { return reader.expect_integer(node, path, lo, hi); }
  double number() const { return reader.expect_number(node, path); }
  // true or false.
  bool boolean() const { return reader.expect_boolean(node, path); }
  // true or false, or QuickFIX's "Y" / "N".
  bool flag() const;
  // parse(string()), its std::invalid_argument reported at this setting.
  template <class Parse>
  auto parsed(Parse parse) const {
    const std::string v = string();
    try {
      return parse(v);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }
};

// A key of a table whose values go into a Model.
template <class Model>
struct Key {
  const char* name;
  void (*set)(Model&, const Setting&);
};

template <class Model>
const Key<Model>* find_key(std::span<const Key<Model>> keys, std::string_view name) {
  for (const Key<Model>& k : keys)
    if (name == k.name) return &k;
  return nullptr;
}

// "a, b, c": the names of `keys`, for an unknown key's message.
template <class Model>
std::string key_names(std::span<const Key<Model>> keys) {
  std::string out;
  for (const Key<Model>& k : keys) out.append(out.empty() ? "" : ", ").append(k.name);
  return out;
}

// "WHERE: setting KEY".
std::string setting_path(std::string_view where, std::string_view key);

// Reads every key of `t` into `m` (in toml++'s order: sorted by key). A key that is not in
// `keys` throws "FILE: WHERE: setting KEY: unknown setting (expected one of:
// ...) (line N)"; a bad value throws what its setter says.
template <class Model>
void read_keys(Model& m, const TomlReader& r, const toml::table& t, std::string_view where,
               std::type_identity_t<std::span<const Key<Model>>> keys) {
  for (const auto& [k, v] : t) {
    const Setting at{r, v, setting_path(where, k.str())};
    const Key<Model>* key = find_key<Model>(keys, k.str());
    if (key == nullptr) at.fail("unknown setting (expected one of: " + key_names<Model>(keys) + ")");
    key->set(m, at);
  }
}

}  // namespace kite::util
