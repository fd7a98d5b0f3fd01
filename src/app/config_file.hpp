// A daemon's configuration file as the app reads it: the TOML document, the
// session loader's [defaults] and [[session]] (session::read_config), and
// the daemon's own top-level tables, each read through one key table
// (util/key_table.hpp). kite-acceptor, kite-initiator and libkite's acceptor
// and initiator all read their files through the sections declared here, so
// the same [engine] text is accepted or refused, with the same message, by
// each. Internal to kite_app.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/util/key_table.hpp"
#include "kite/util/toml_reader.hpp"

namespace kite::app::detail {

using util::Setting;

// The parsed file. Errors name reader.file().
struct ConfigFile {
  util::TomlReader reader;
  toml::table document;
  std::string folder;  // the file's folder, "" for text: relative paths start here

  static ConfigFile load(const std::string& path);
  static ConfigFile parse(std::string_view text, const std::string& name);
  // [defaults] and [[session]].
  session::Config sessions() const { return session::read_config(reader, document, folder); }
};

// A top-level table of a daemon's file: its name, and what reads it (the
// Setting's node is the table).
template <class Model>
using Table = util::Key<Model>;

// "[NAME]: unknown table" for a table not in `tables`, "[NAME]: must be a
// table" for a value that is not one; [defaults], [[session]] and [tls] are
// left to their own readers.
void check_tables(const ConfigFile& f, std::span<const std::string_view> tables);

// Reads each of the file's top-level tables that `tables` names into `m`
// (sorted by name, as toml++ keeps them); check_tables first.
template <class Model>
void read_tables(Model& m, const ConfigFile& f, std::type_identity_t<std::span<const Table<Model>>> tables) {
  std::vector<std::string_view> names;
  for (const Table<Model>& t : tables) names.push_back(t.name);
  check_tables(f, names);
  for (const auto& [k, v] : f.document) {
    const Table<Model>* t = util::find_key<Model>(tables, k.str());
    if (t == nullptr) continue;
    std::string path = "[";  // appended, not concatenated: g++ 12's false -Wrestrict (GCC bug 105329)
    path.append(k.str()).append("]");
    t->set(m, Setting{f.reader, v, std::move(path)});
  }
}

// The keys of `table` (a Setting read_tables made) into `m`.
template <class Model>
void read_section(Model& m, const Setting& table, std::type_identity_t<std::span<const util::Key<Model>>> keys) {
  util::read_keys<Model>(m, table.reader, *table.node.as_table(), table.path, keys);
}

// --- the sections -------------------------------------------------------------

// An acceptor's [engine]: the engine's settings and the connection limits;
// the nodes of the settings whose absence has a default computed later.
struct AcceptorEngine {
  engine::EngineConfig& engine;
  link::AcceptorLimits& limits;
  const toml::node* port = nullptr;
  const toml::node* max_unauthenticated = nullptr;
  const toml::node* max_unauthenticated_per_address = nullptr;
};
std::span<const util::Key<AcceptorEngine>> acceptor_engine_keys();

// An initiator's [engine] (kite-initiator and libkite's initiator).
std::span<const util::Key<engine::InitiatorConfig>> initiator_engine_keys();

// [admin], [message_log] and [log] (kite-acceptor; [log] kite-initiator too).
std::span<const util::Key<AdminConfig>> admin_keys();
std::span<const util::Key<MessageLogConfig>> message_log_keys();
std::span<const util::Key<LogFormat>> log_keys();

// shutdown_wait_ms of an [app] table.
int shutdown_wait_ms(const Setting& s);

// Throws Unsupported, as Setting::fail would throw ConfigError.
[[noreturn]] void unsupported(const Setting& s, const std::string& why);

}  // namespace kite::app::detail
