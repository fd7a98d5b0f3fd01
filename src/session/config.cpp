#include "kite/session/config.hpp"

#include "kite/session/timezone.hpp"
#include "kite/util/dictionary_dir.hpp"
#include "kite/util/key_table.hpp"
#include "kite/util/toml_reader.hpp"

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <filesystem>
#include <string_view>

namespace kite::session {
namespace {

using util::TomlReader;

// A setting of a [defaults] or [[session]] table (util/key_table.hpp).
using At = util::Setting;
using Key = util::Key<SessionSettings>;

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      {"ConnectionType",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (v == "acceptor")
           s.role = Role::acceptor;
         else if (v == "initiator")
           s.role = Role::initiator;
         else
           a.fail("\"" + v + "\" is not acceptor or initiator");
       }},
      {"BeginString",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (!known_begin_string(v)) a.fail("\"" + v + "\" is not " + kBeginStringList);
         s.begin_string = v;
       }},
      {"SenderCompID", [](SessionSettings& s, const At& a) { s.sender_comp_id = a.string(); }},
      {"TargetCompID", [](SessionSettings& s, const At& a) { s.target_comp_id = a.string(); }},
      {"SenderSubID", [](SessionSettings& s, const At& a) { s.sender_sub_id = a.string(); }},
      {"TargetSubID", [](SessionSettings& s, const At& a) { s.target_sub_id = a.string(); }},
      {"SenderLocationID", [](SessionSettings& s, const At& a) { s.sender_location_id = a.string(); }},
      {"TargetLocationID", [](SessionSettings& s, const At& a) { s.target_location_id = a.string(); }},
      {"DefaultApplVerID",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (v == "FIX.5.0SP2" || v == "9")
           s.default_appl_ver_id = "9";
         else if (v == "FIX.5.0SP1" || v == "8")
           s.default_appl_ver_id = "8";
         else if (v == "FIX.5.0" || v == "7")
           s.default_appl_ver_id = "7";
         else if (v == "FIX.4.4" || v == "6")
           s.default_appl_ver_id = "6";
         else if (v == "FIX.4.2" || v == "4")
           s.default_appl_ver_id = "4";
         else
           a.fail("\"" + v + "\" is not an ApplVerID (FIX.5.0SP2, FIX.5.0SP1, FIX.5.0, FIX.4.4, FIX.4.2)");
       }},
      {"HeartBtInt",
       [](SessionSettings& s, const At& a) { s.heart_bt_int = static_cast<std::int32_t>(a.integer(0, 3600)); }},
      {"TestRequestDelayMultiplier",
       [](SessionSettings& s, const At& a) {
         const double d = a.number();
         if (!(d >= 0 && d <= 10)) a.fail("must be between 0 and 10");
         s.test_request_delay = d;
       }},
      {"SocketAcceptPort",
       [](SessionSettings& s, const At& a) { s.socket_accept_port = static_cast<std::uint16_t>(a.integer(1, 65535)); }},
      {"SocketConnectHost", [](SessionSettings& s, const At& a) { s.socket_connect_host = a.string(); }},
      {"SocketConnectPort",
       [](SessionSettings& s, const At& a) {
         s.socket_connect_port = static_cast<std::uint16_t>(a.integer(1, 65535));
       }},
      {"ReconnectInterval",
       [](SessionSettings& s, const At& a) {
         s.reconnect_interval_ms = static_cast<std::int32_t>(a.integer(1, 3600) * 1000);
       }},
      {"ReconnectIntervalMax",
       [](SessionSettings& s, const At& a) {
         s.reconnect_max_ms = static_cast<std::int32_t>(a.integer(1, 3600) * 1000);
       }},
      {"ResetOnLogon", [](SessionSettings& s, const At& a) { s.reset_on_logon = a.flag(); }},
      {"ResetOnLogout", [](SessionSettings& s, const At& a) { s.reset_on_logout = a.flag(); }},
      {"ResetOnDisconnect", [](SessionSettings& s, const At& a) { s.reset_on_disconnect = a.flag(); }},
      {"SendResetSeqNumFlag", [](SessionSettings& s, const At& a) { s.send_reset_seq_num_flag = a.flag(); }},
      {"StartTime",
       [](SessionSettings& s, const At& a) {
         s.schedule.start_sec = a.parsed([](const std::string& v) { return parse_time_of_day(v); });
         s.schedule.always = false;
       }},
      {"EndTime",
       [](SessionSettings& s, const At& a) {
         s.schedule.end_sec = a.parsed([](const std::string& v) { return parse_time_of_day(v); });
         s.schedule.always = false;
       }},
      {"TimeZone",
       [](SessionSettings& s, const At& a) {
         s.schedule.zone = a.parsed([](const std::string& v) { return TimeZone::load(v); });
       }},
      {"Days",
       [](SessionSettings& s, const At& a) {
         const auto* days = a.node.as_array();
         if (days == nullptr) a.reader.wrong_type(a.node, a.path, "an array of day names");
         std::uint8_t mask = 0;
         for (const auto& d : *days) {
           const At day{a.reader, d, a.path};
           mask = static_cast<std::uint8_t>(mask |
                                            (1u << day.parsed([](const std::string& v) { return parse_weekday(v); })));
         }
         if (mask == 0) a.fail("no day given");
         s.schedule.days = mask;
       }},
      {"StoreKind",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (v == "file")
           s.store.kind = StoreKind::file;
         else if (v == "memory")
           s.store.kind = StoreKind::memory;
         else if (v == "null")
           s.store.kind = StoreKind::null;
         else if (v == "postgresql")
           s.store.kind = StoreKind::postgresql;
         else
           a.fail("\"" + v + "\" is not file, memory, null or postgresql");
       }},
      {"PostgreSQLStoreDatabase", [](SessionSettings& s, const At& a) { s.store.pg_database = a.string(); }},
      {"PostgreSQLStoreUser", [](SessionSettings& s, const At& a) { s.store.pg_user = a.string(); }},
      {"PostgreSQLStorePassword", [](SessionSettings& s, const At& a) { s.store.pg_password = a.string(); }},
      {"PostgreSQLStoreHost", [](SessionSettings& s, const At& a) { s.store.pg_host = a.string(); }},
      {"PostgreSQLStorePort",
       [](SessionSettings& s, const At& a) { s.store.pg_port = static_cast<std::uint16_t>(a.integer(1, 65535)); }},
      {"PostgreSQLStoreConnectionString", [](SessionSettings& s, const At& a) { s.store.pg_conninfo = a.string(); }},
      {"PostgreSQLStoreCommit",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (v == "async")
           s.store.pg_commit = CommitPolicy::async;
         else if (v == "sync")
           s.store.pg_commit = CommitPolicy::sync;
         else
           a.fail("\"" + v + "\" is not async or sync");
       }},
      {"PostgreSQLStoreGroupMax",
       [](SessionSettings& s, const At& a) {
         s.store.pg_group_max = static_cast<std::uint32_t>(a.integer(1, 1'000'000));
       }},
      {"PostgreSQLStoreAsyncWindow",
       [](SessionSettings& s, const At& a) {
         s.store.pg_async_window = static_cast<std::uint32_t>(a.integer(1, 1'000'000));
       }},
      {"PostgreSQLStoreKeepaliveIdle",
       [](SessionSettings& s, const At& a) { s.store.pg_keepalive_idle_s = static_cast<std::uint32_t>(a.integer(1, 3600)); }},
      {"PostgreSQLStoreKeepaliveInterval",
       [](SessionSettings& s, const At& a) {
         s.store.pg_keepalive_interval_s = static_cast<std::uint32_t>(a.integer(1, 3600));
       }},
      {"RefreshOnLogon", [](SessionSettings& s, const At& a) { s.store.refresh_on_logon = a.flag(); }},
      {"PostgreSQLStoreKeepaliveCount",
       [](SessionSettings& s, const At& a) { s.store.pg_keepalive_count = static_cast<std::uint32_t>(a.integer(1, 100)); }},
      {"FileStorePath", [](SessionSettings& s, const At& a) { s.store.path = a.string(); }},
      {"FlushPolicy",
       [](SessionSettings& s, const At& a) {
         const std::string v = a.string();
         if (v == "none")
           s.store.flush = FlushPolicy::none;
         else if (v == "message")
           s.store.flush = FlushPolicy::every_message;
         else if (v == "count")
           s.store.flush = FlushPolicy::every_n;
         else if (v == "time")
           s.store.flush = FlushPolicy::every_ms;
         else
           a.fail("\"" + v + "\" is not none, message, count or time");
       }},
      {"FlushEveryN", [](SessionSettings& s,
                         const At& a) { s.store.flush_every_n = static_cast<std::uint32_t>(a.integer(1, 1'000'000)); }},
      {"FlushEveryMs",
       [](SessionSettings& s, const At& a) {
         s.store.flush_every_ms = static_cast<std::uint32_t>(a.integer(1, 3'600'000));
       }},
      {"StoreCapacity",
       [](SessionSettings& s, const At& a) {
         s.store.capacity_bytes = static_cast<std::size_t>(a.integer(1 << 16, std::int64_t{1} << 40));
       }},
      {"UseDataDictionary", [](SessionSettings& s, const At& a) { s.validate = a.flag(); }},
      {"ValidateFieldsHaveValues", [](SessionSettings& s, const At& a) { s.validate_fields_have_values = a.flag(); }},
      {"ValidateUserDefinedFields", [](SessionSettings& s, const At& a) { s.validate_user_defined_fields = a.flag(); }},
      {"ValidateFieldsOutOfOrder", [](SessionSettings& s, const At& a) { s.validate_fields_out_of_order = a.flag(); }},
      {"AllowUnknownMsgFields", [](SessionSettings& s, const At& a) { s.allow_unknown_msg_fields = a.flag(); }},
      {"CheckCompID", [](SessionSettings& s, const At& a) { s.check_comp_id = a.flag(); }},
      {"DataDictionary", [](SessionSettings& s, const At& a) { s.data_dictionary = a.string(); }},
      {"MaxMessageSize", [](SessionSettings& s,
                            const At& a) { s.max_message_size = static_cast<std::uint32_t>(a.integer(64, 64 << 20)); }},
      {"LogonTimeout", [](SessionSettings& s,
                          const At& a) { s.logon_timeout_ms = static_cast<std::int32_t>(a.integer(1, 3600) * 1000); }},
      {"LogoutTimeout",
       [](SessionSettings& s, const At& a) {
         s.logout_timeout_ms = static_cast<std::int32_t>(a.integer(1, 3600) * 1000);
       }},
      {"ResendRequestTimeout",
       [](SessionSettings& s, const At& a) {
         s.resend_timeout_ms = static_cast<std::int32_t>(a.integer(0, 3600) * 1000);
       }},
      {"ResendRequestRetries",
       [](SessionSettings& s, const At& a) { s.resend_retries = static_cast<std::uint32_t>(a.integer(0, 1000)); }},
      {"MaxQueuedWhileGap",
       [](SessionSettings& s, const At& a) { s.max_queued = static_cast<std::uint32_t>(a.integer(0, 10'000'000)); }},
      {"MaxQueuedBytes",
       [](SessionSettings& s, const At& a) {
         s.queue_bytes = static_cast<std::size_t>(a.integer(0, std::int64_t{1} << 34));
       }},
      {"SendClaimBytes", [](SessionSettings& s,
                            const At& a) { s.send_claim_bytes = static_cast<std::size_t>(a.integer(256, 64 << 20)); }},
      {"OverflowBytes",
       [](SessionSettings& s, const At& a) {
         s.overflow_bytes = static_cast<std::size_t>(a.integer(256, std::int64_t{1} << 32));
       }},
      {"Username", [](SessionSettings& s, const At& a) { s.username = a.string(); }},
      {"Password", [](SessionSettings& s, const At& a) { s.password = a.string(); }},
      {"CheckLatency", [](SessionSettings& s, const At& a) { s.check_latency = a.flag(); }},
      {"MaxLatency",
       [](SessionSettings& s, const At& a) { s.max_latency_s = static_cast<std::int32_t>(a.integer(1, 86400)); }},
      {"TimestampPrecision",
       [](SessionSettings& s, const At& a) {
         const std::int64_t p = a.integer(0, 9);
         if (p != 0 && p != 3 && p != 6 && p != 9) a.fail("must be 0, 3, 6 or 9");
         s.timestamp_precision = static_cast<codec::TimePrecision>(p);
       }},
  };
  return k;
}

const Key* find_key(std::string_view name) {
  for (const Key& k : keys())
    if (name == k.name) return &k;
  return nullptr;
}

std::string setting(const std::string& where, std::string_view key) { return where + ": setting " + std::string(key); }

// SocketConnectHost<n> / SocketConnectPort<n>: n (1..99) from a key with
// that prefix, 0 when the key is not one of them.
std::size_t alternate_number(std::string_view key, std::string_view prefix) {
  if (key.size() <= prefix.size() || key.size() > prefix.size() + 2 || key.substr(0, prefix.size()) != prefix) return 0;
  std::size_t n = 0;
  for (const char ch : key.substr(prefix.size())) {
    if (ch < '0' || ch > '9') return 0;
    n = n * 10 + static_cast<std::size_t>(ch - '0');
  }
  return n;
}

// QuickFIX's alternate addresses of an initiator; true when `key` is one.
bool apply_alternate(SessionSettings& s, std::string_view key, const At& a) {
  const std::size_t host = alternate_number(key, "SocketConnectHost");
  const std::size_t port = alternate_number(key, "SocketConnectPort");
  const std::size_t n = host != 0 ? host : port;
  if (n == 0) return false;
  if (s.socket_connect_alternates.size() < n) s.socket_connect_alternates.resize(n);
  if (host != 0)
    s.socket_connect_alternates[n - 1].host = a.string();
  else
    s.socket_connect_alternates[n - 1].port = static_cast<std::uint16_t>(a.integer(1, 65535));
  return true;
}

void apply(SessionSettings& s, const TomlReader& r, const toml::table& t, const std::string& where) {
  for (const auto& [k, v] : t) {
    const At at{r, v, setting(where, k.str())};
    const Key* key = find_key(k.str());
    if (key == nullptr) {
      if (apply_alternate(s, k.str(), at)) continue;
      r.fail(v, setting(where, k.str()), "unknown setting");
    }
    key->set(s, at);
  }
}

// `folder` is the configuration file's: a relative DataDictionary is taken
// from there (empty for text, where it stays relative to the working
// directory). A session that validates without naming one reads Kite's
// dictionaries (util::dictionary_dir()).
Config build(const TomlReader& r, const toml::table& doc, const std::filesystem::path& folder) {
  Config c;
  c.path = r.file();
  SessionSettings defaults;
  const toml::table* defaults_table = r.table(doc, "defaults", "");
  if (defaults_table != nullptr) apply(defaults, r, *defaults_table, "[defaults]");
  const auto* arr = doc.get("session");
  if (arr == nullptr) r.fail("", "no [[session]] table");
  const auto* sessions = arr->as_array();
  if (sessions == nullptr) r.fail(*arr, "session", "must be an array of tables ([[session]])");
  std::size_t i = 0;
  for (const auto& node : *sessions) {
    ++i;
    std::string where = "session " + std::to_string(i);
    const toml::table& t = r.expect_table(node, where);
    SessionSettings s = defaults;
    apply(s, r, t, where);
    where += " (" + s.id() + ")";
    const auto required = [&](const std::string& v, const char* key) {
      if (v.empty()) r.fail(setting(where, key), "missing (required)");
    };
    required(s.sender_comp_id, "SenderCompID");
    required(s.target_comp_id, "TargetCompID");
    const auto given = [&](const char* key) {
      return t.contains(key) || (defaults_table != nullptr && defaults_table->contains(key));
    };
    if (given("StartTime") != given("EndTime"))
      r.fail(setting(where, given("StartTime") ? "EndTime" : "StartTime"),
             "missing (StartTime and EndTime go together)");
    if (s.validate && s.data_dictionary.empty())
      s.data_dictionary = util::dictionary_dir();
    else if (!s.data_dictionary.empty() && !folder.empty() && std::filesystem::path(s.data_dictionary).is_relative())
      s.data_dictionary = (folder / s.data_dictionary).lexically_normal().string();
    try {
      s.check();
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      const auto colon = what.find(':');
      r.fail(setting(where, what.substr(0, colon)), colon == std::string::npos ? what : what.substr(colon + 2));
    }
    for (const SessionSettings& other : c.sessions)
      if (other.id() == s.id()) r.fail(where, "session " + s.id() + " configured twice");
    c.sessions.push_back(std::move(s));
  }
  return c;
}

}  // namespace

Config load_config(const std::string& path) {
  const TomlReader r(path);
  return build(r, r.parse_file(), std::filesystem::path(path).parent_path());
}

Config parse_config(std::string_view text, const std::string& name) {
  const TomlReader r(name);
  return build(r, r.parse(text), {});
}

Config read_config(const TomlReader& reader, const toml::table& document, const std::string& folder) {
  return build(reader, document, folder);
}

}  // namespace kite::session
