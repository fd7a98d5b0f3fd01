#include "config_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "kite/engine/agent.hpp"
#include "kite/transport/transport.hpp"

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace kite::app::detail {

using util::Key;

ConfigFile ConfigFile::load(const std::string& path) {
  util::TomlReader r(path);
  toml::table doc = r.parse_file();
  return {std::move(r), std::move(doc), std::filesystem::path(path).parent_path().string()};
}

ConfigFile ConfigFile::parse(std::string_view text, const std::string& name) {
  util::TomlReader r(name);
  toml::table doc = r.parse(text);
  return {std::move(r), std::move(doc), {}};
}

void check_tables(const ConfigFile& f, std::span<const std::string_view> tables) {
  for (const auto& [k, v] : f.document) {
    const std::string_view key = k.str();
    if (key == "defaults" || key == "session" || key == "tls") continue;
    const std::string table = "[" + std::string(key) + "]";
    bool known = false;
    for (const std::string_view t : tables) known = known || t == key;
    if (!known) f.reader.fail(table, "unknown table");
    if (v.as_table() == nullptr) f.reader.fail(v, table, "must be a table");
  }
}

void unsupported(const Setting& s, const std::string& why) {
  try {
    s.fail(why);
  } catch (const util::ConfigError& e) {
    throw util::Unsupported(e.what());
  }
}

int shutdown_wait_ms(const Setting& s) { return static_cast<int>(s.integer(0, 60000)); }

namespace {

// --- values more than one section takes ---------------------------------------

transport::Kind transport_kind(const Setting& s) {
  const std::string name = s.string();
  transport::Kind kind{};
  if (!transport::parse_kind(name, kind)) s.fail("unknown transport \"" + name + "\"");
  if (!transport::compiled_in(kind)) unsupported(s, "transport " + name + " is not in this build");
  return kind;
}

std::vector<int> cores(const Setting& s) {
  const auto* a = s.node.as_array();
  if (a == nullptr) s.fail("expected an array of core numbers");
  std::vector<int> out;
  for (const auto& x : *a) out.push_back(static_cast<int>(Setting{s.reader, x, s.path}.integer(0, 4095)));
  return out;
}

engine::IdleKind idle(const Setting& s) {
  engine::IdleKind kind{};
  if (!engine::parse_idle(s.string(), kind)) s.fail("expected \"busy_spin\", \"spin_yield\" or \"block\"");
  return kind;
}

std::size_t buffer(const Setting& s) { return static_cast<std::size_t>(s.integer(4096, 1 << 30)); }

// --- [engine] -------------------------------------------------------------------

using AE = AcceptorEngine;
const Key<AE> kAcceptorEngine[] = {
    {"model",
     [](AE& e, const Setting& s) {
       if (!engine::parse_model(s.string(), e.engine.model))
         s.fail("expected \"single\", \"mono\", \"pool\" or \"shard\"");
     }},
    {"transport", [](AE& e, const Setting& s) { e.engine.transport = transport_kind(s); }},
    {"bind", [](AE& e, const Setting& s) { e.engine.bind_address = s.string(); }},
    {"port",
     [](AE& e, const Setting& s) {
       e.engine.port = static_cast<std::uint16_t>(s.integer(0, 65535));
       e.port = &s.node;
     }},
    {"workers", [](AE& e, const Setting& s) { e.engine.workers = static_cast<int>(s.integer(1, 1024)); }},
    {"cores", [](AE& e, const Setting& s) { e.engine.cores = cores(s); }},
    {"coordinator_core",
     [](AE& e, const Setting& s) { e.engine.coordinator_core = static_cast<int>(s.integer(-1, 4095)); }},
    {"idle", [](AE& e, const Setting& s) { e.engine.idle.kind = idle(s); }},
    {"busy_poll_usecs",
     [](AE& e, const Setting& s) { e.engine.busy_poll_usecs = static_cast<int>(s.integer(0, 1000000)); }},
    {"quickack", [](AE& e, const Setting& s) { e.engine.quickack = s.boolean(); }},
    {"uring_sqpoll", [](AE& e, const Setting& s) { e.engine.uring_sqpoll = s.boolean(); }},
    {"max_connections",
     [](AE& e, const Setting& s) { e.limits.max_connections = static_cast<std::size_t>(s.integer(1, 100000)); }},
    {"logon_timeout",
     [](AE& e, const Setting& s) { e.limits.logon_timeout_ms = static_cast<std::int32_t>(s.integer(1, 3600) * 1000); }},
    {"max_message_size",
     [](AE& e, const Setting& s) { e.limits.max_message_size = static_cast<std::uint32_t>(s.integer(256, 64 << 20)); }},
    {"max_unauthenticated",
     [](AE& e, const Setting& s) {
       e.limits.max_unauthenticated = static_cast<std::size_t>(s.integer(1, 100000));
       e.max_unauthenticated = &s.node;
     }},
    {"logon_grace_ms",
     [](AE& e, const Setting& s) { e.limits.logon_grace_ms = static_cast<std::int32_t>(s.integer(0, 3600000)); }},
    {"max_unauthenticated_per_address",
     [](AE& e, const Setting& s) {
       e.limits.max_unauthenticated_per_address = static_cast<std::size_t>(s.integer(1, 100000));
       e.max_unauthenticated_per_address = &s.node;
     }},
    {"send_buffer", [](AE& e, const Setting& s) { e.engine.send_buffer = buffer(s); }},
    {"recv_buffer", [](AE& e, const Setting& s) { e.engine.recv_buffer = buffer(s); }},
};

using IE = engine::InitiatorConfig;
const Key<IE> kInitiatorEngine[] = {
    {"transport",
     [](IE& e, const Setting& s) {
       e.transport = transport_kind(s);
       if (e.transport != transport::Kind::kernel && e.transport != transport::Kind::uring &&
           e.transport != transport::Kind::tls)
         s.fail("an initiator connects over kernel, uring or tls");
     }},
    {"threads", [](IE& e, const Setting& s) { e.threads = static_cast<int>(s.integer(1, 1024)); }},
    {"cores", [](IE& e, const Setting& s) { e.cores = cores(s); }},
    {"idle", [](IE& e, const Setting& s) { e.idle.kind = idle(s); }},
    {"connect_timeout_ms",
     [](IE& e, const Setting& s) { e.connect_timeout_ms = static_cast<int>(s.integer(1, 600000)); }},
    {"send_buffer", [](IE& e, const Setting& s) { e.send_buffer = buffer(s); }},
    {"recv_buffer", [](IE& e, const Setting& s) { e.recv_buffer = buffer(s); }},
};

// --- [admin], [message_log], [log] ------------------------------------------------

const Key<AdminConfig> kAdmin[] = {
    {"socket",
     [](AdminConfig& a, const Setting& s) {
       a.socket = s.string();
       if (a.socket.empty()) s.fail("empty path");
     }},
    {"socket_mode",
     [](AdminConfig& a, const Setting& s) {
       const std::string m = s.string();
       unsigned mode = 0;
       bool ok = !m.empty() && m.size() <= 4;
       for (const char ch : m) ok = ok && ch >= '0' && ch <= '7', mode = mode * 8 + static_cast<unsigned>(ch - '0');
       if (!ok || mode > 0777) s.fail("expected an octal file mode such as \"0600\", got \"" + m + "\"");
       if ((mode & 0600) != 0600) s.fail("the owner must be able to read and write the socket (0600 at least)");
       a.socket_mode = mode;
     }},
    {"metrics_port",
     [](AdminConfig& a, const Setting& s) { a.metrics_port = static_cast<std::uint16_t>(s.integer(0, 65535)); }},
    {"metrics_bind", [](AdminConfig& a, const Setting& s) { a.metrics_bind = s.string(); }},
};

const Key<MessageLogConfig> kMessageLog[] = {
    {"dir",
     [](MessageLogConfig& l, const Setting& s) {
       l.dir = s.string();
       struct stat st {};
       if (::stat(l.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) s.fail("\"" + l.dir + "\" is not a folder");
       if (::access(l.dir.c_str(), W_OK) != 0) s.fail("\"" + l.dir + "\" is not writable");
     }},
    {"max_bytes",
     [](MessageLogConfig& l, const Setting& s) {
       l.max_bytes = static_cast<std::uint64_t>(s.integer(4096, std::int64_t{1} << 40));
     }},
    {"keep", [](MessageLogConfig& l, const Setting& s) { l.keep = static_cast<int>(s.integer(0, 1000)); }},
    {"sessions",
     [](MessageLogConfig& l, const Setting& s) {
       const auto* a = s.node.as_array();
       if (a == nullptr) s.fail("expected an array of session IDs (or [\"*\"])");
       for (const auto& x : *a) l.sessions.push_back(Setting{s.reader, x, s.path}.string());
     }},
};

const Key<LogFormat> kLog[] = {
    {"format",
     [](LogFormat& f, const Setting& s) {
       const std::string v = s.string();
       if (v == "text")
         f = LogFormat::text;
       else if (v == "json")
         f = LogFormat::json;
       else
         s.fail("expected \"text\" or \"json\", got \"" + v + "\"");
     }},
};

}  // namespace

std::span<const Key<AcceptorEngine>> acceptor_engine_keys() { return kAcceptorEngine; }
std::span<const Key<engine::InitiatorConfig>> initiator_engine_keys() { return kInitiatorEngine; }
std::span<const Key<AdminConfig>> admin_keys() { return kAdmin; }
std::span<const Key<MessageLogConfig>> message_log_keys() { return kMessageLog; }
std::span<const Key<LogFormat>> log_keys() { return kLog; }

}  // namespace kite::app::detail
