// kite-acceptor's file (and libkite's acceptor's): [engine], [app], [admin],
// [message_log], [log] and [tls] through config_file.hpp's sections, then
// the sessions, then what one table's value means for another.
#include <algorithm>

#include "config_file.hpp"

#include "kite/app/acceptor.hpp"
#include "kite/app/tls_config.hpp"

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace kite::app {

using session::ConfigError;

namespace {

using detail::Setting;
using detail::Table;

// What reading the tables fills: the config, and the [engine] settings whose
// absence is decided once the sessions are known.
struct Reading {
  AcceptorConfig& c;
  detail::AcceptorEngine engine;
};

const util::Key<AcceptorConfig> kApp[] = {
    {"mode",
     [](AcceptorConfig& c, const Setting& s) {
       const std::string m = s.string();
       if (!parse_mode(m, c.mode)) s.fail("expected \"ack\", \"match\" or \"echo\", got \"" + m + "\"");
     }},
    {"shutdown_wait_ms", [](AcceptorConfig& c, const Setting& s) { c.shutdown_wait_ms = detail::shutdown_wait_ms(s); }},
};

const Table<Reading> kTables[] = {
    {"engine", [](Reading& r, const Setting& t) { detail::read_section(r.engine, t, detail::acceptor_engine_keys()); }},
    {"app", [](Reading& r, const Setting& t) { detail::read_section(r.c, t, kApp); }},
    {"admin", [](Reading& r, const Setting& t) { detail::read_section(r.c.admin, t, detail::admin_keys()); }},
    {"message_log",
     [](Reading& r, const Setting& t) { detail::read_section(r.c.message_log, t, detail::message_log_keys()); }},
    {"log", [](Reading& r, const Setting& t) { detail::read_section(r.c.log_format, t, detail::log_keys()); }},
};

// The unauthenticated budget leaves room for every configured session: by
// default it is what max_connections has beyond them (at most 16, at least 1);
// set in the file, it must fit.
void check_budget(AcceptorConfig& c, const detail::AcceptorEngine& e, const util::TomlReader& reader) {
  const std::size_t sessions = c.sessions.sessions.size();
  const std::size_t room = c.limits.max_connections > sessions ? c.limits.max_connections - sessions : 0;
  if (e.max_unauthenticated == nullptr) {
    c.limits.max_unauthenticated = std::clamp<std::size_t>(room, 1, 16);
  } else if (c.limits.max_unauthenticated > room) {
    reader.fail(*e.max_unauthenticated, "[engine]: setting max_unauthenticated",
                std::to_string(c.limits.max_unauthenticated) + " leaves no room for the " + std::to_string(sessions) +
                    " configured session(s) within max_connections " + std::to_string(c.limits.max_connections) +
                    " (at most " + std::to_string(room) + ")");
  }
  if (e.max_unauthenticated_per_address == nullptr) {
    c.limits.max_unauthenticated_per_address = std::min<std::size_t>(4, c.limits.max_unauthenticated);
  } else if (c.limits.max_unauthenticated_per_address > c.limits.max_unauthenticated) {
    reader.fail(*e.max_unauthenticated_per_address, "[engine]: setting max_unauthenticated_per_address",
                std::to_string(c.limits.max_unauthenticated_per_address) + " is more than max_unauthenticated " +
                    std::to_string(c.limits.max_unauthenticated));
  }
}

void check_message_log(const AcceptorConfig& c, const std::string& name) {
  if (!c.message_log.sessions.empty() && c.message_log.dir.empty())
    throw ConfigError(name + ": [message_log]: setting sessions: needs dir");
  for (const std::string& id : c.message_log.sessions) {
    bool known = id == "*";
    for (const session::SessionSettings& s : c.sessions.sessions) known = known || s.id() == id;
    if (!known) throw ConfigError(name + ": [message_log]: setting sessions: no session \"" + id + "\"");
  }
}

// Every session an acceptor; the listening port from [engine], else the one
// every session that names it agrees on. False when neither gives one.
bool take_port(AcceptorConfig& c, const detail::AcceptorEngine& e, const util::TomlReader& reader) {
  std::size_t i = 0;
  bool from_sessions = false;
  for (const session::SessionSettings& s : c.sessions.sessions) {
    ++i;
    const std::string where = "session " + std::to_string(i) + " (" + s.id() + "): setting ";
    if (s.role != session::Role::acceptor)
      reader.fail(where + "ConnectionType", "kite-acceptor runs acceptor sessions only");
    if (e.port == nullptr && s.socket_accept_port != 0) {
      if (from_sessions && s.socket_accept_port != c.engine.port)
        reader.fail(where + "SocketAcceptPort", std::to_string(s.socket_accept_port) +
                                                    " differs from another session's " + std::to_string(c.engine.port) +
                                                    " (one listening port per daemon)");
      c.engine.port = s.socket_accept_port;
      from_sessions = true;
    }
  }
  return e.port != nullptr || from_sessions;
}

// The engine's slots: the factory's table (evicted connections linger a turn).
void size_engine(AcceptorConfig& c) {
  const std::size_t table = c.limits.table_size();
  switch (c.engine.model) {
    case engine::Model::single: c.engine.max_connections = 1; break;
    case engine::Model::pool:
      c.engine.max_connections = static_cast<int>((table + static_cast<std::size_t>(c.engine.workers) - 1) /
                                                  static_cast<std::size_t>(c.engine.workers));
      break;
    // The kernel spreads a shard's connections by hash, unevenly: each shard
    // may hold them all; the factory caps the total.
    case engine::Model::shard:
    case engine::Model::mono: c.engine.max_connections = static_cast<int>(table); break;
  }
}

AcceptorConfig read(const detail::ConfigFile& f) {
  AcceptorConfig c;
  const std::string& name = f.reader.file();
  c.engine.idle = {engine::IdleKind::block, 0, 1000};  // a daemon sleeps unless told to spin
  c.engine.send_full = engine::SendFullPolicy::wait;
  Reading r{c, {c.engine, c.limits, nullptr, nullptr, nullptr}};
  detail::read_tables(r, f, kTables);
  // Before the sessions: a pair this build cannot run is that, whatever else is wrong.
  if (!engine::supports(c.engine.transport, c.engine.model))
    throw util::Unsupported(name + ": [engine]: setting model: " + engine::to_string(c.engine.model) +
                            " cannot run on " + transport::to_string(c.engine.transport));
  check_tls_table(f.document, f.reader, c.engine.transport == transport::Kind::tls,
                  transport::to_string(c.engine.transport));
  if (const toml::node* t = f.document.get("tls")) {
    if (t->as_table() == nullptr) f.reader.fail(*t, "[tls]", "must be a table");
    read_tls_table(*t->as_table(), f.reader, transport::TlsRole::server, {}, c.engine.tls);
  }
  c.sessions = f.sessions();
  check_message_log(c, name);
  const bool port = take_port(c, r.engine, f.reader);
  check_budget(c, r.engine, f.reader);
  if (!port) f.reader.fail("[engine]: setting port", "missing (set it, or SocketAcceptPort in the sessions)");
  if (c.mode == Mode::match && c.engine.workers > 1 &&
      (c.engine.model == engine::Model::pool || c.engine.model == engine::Model::shard))
    throw ConfigError(name +
                      ": [app]: setting mode: match needs every session on one thread (model single or mono, "
                      "or workers = 1)");
  size_engine(c);
  c.engine.log = false;
  return c;
}

}  // namespace

AcceptorConfig load_acceptor_config(const std::string& path) { return read(detail::ConfigFile::load(path)); }

AcceptorConfig parse_acceptor_config(std::string_view text, const std::string& name) {
  return read(detail::ConfigFile::parse(text, name));
}

}  // namespace kite::app
