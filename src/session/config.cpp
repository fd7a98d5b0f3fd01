#include "kite/session/config.hpp"

#include "kite/session/timezone.hpp"

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <cmath>
#include <functional>
#include <sstream>
#include <string_view>

namespace kite::session {
namespace {

[[noreturn]] void fail(const std::string& where, std::string_view key, const std::string& why) {
  throw ConfigError(where + ": setting " + std::string(key) + ": " + why);
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

std::string get_string(const toml::node& n, const std::string& where, std::string_view key) {
  if (const auto* v = n.as_string()) return v->get();
  fail(where, key, "expected a string, got " + type_name(n));
}
bool get_bool(const toml::node& n, const std::string& where, std::string_view key) {
  if (const auto* v = n.as_boolean()) return v->get();
  if (const auto* s = n.as_string()) {  // QuickFIX files say Y/N
    if (s->get() == "Y") return true;
    if (s->get() == "N") return false;
  }
  fail(where, key, "expected true/false (or \"Y\"/\"N\"), got " + type_name(n));
}
std::int64_t get_int(const toml::node& n, const std::string& where, std::string_view key, std::int64_t lo,
                     std::int64_t hi) {
  const auto* v = n.as_integer();
  if (v == nullptr) fail(where, key, "expected an integer, got " + type_name(n));
  const std::int64_t x = v->get();
  if (x < lo || x > hi)
    fail(where, key, "value " + std::to_string(x) + " out of range " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}
double get_double(const toml::node& n, const std::string& where, std::string_view key) {
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_integer()) return static_cast<double>(v->get());
  fail(where, key, "expected a number, got " + type_name(n));
}

using Setter = std::function<void(SessionSettings&, const toml::node&, const std::string& where, std::string_view key)>;

struct Key {
  const char* name;
  Setter set;
};

template <class F>
Key str(const char* name, F f) {
  return {name, [f](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
            f(s, get_string(n, w, k), w, k);
          }};
}

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      str("ConnectionType",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            if (v == "acceptor") s.role = Role::acceptor;
            else if (v == "initiator") s.role = Role::initiator;
            else fail(w, k, "\"" + v + "\" is not acceptor or initiator");
          }),
      str("BeginString",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            if (v != "FIX.4.2" && v != "FIX.4.4" && v != "FIXT.1.1")
              fail(w, k, "\"" + v + "\" is not FIX.4.2, FIX.4.4 or FIXT.1.1");
            s.begin_string = v;
          }),
      str("SenderCompID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.sender_comp_id = v; }),
      str("TargetCompID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.target_comp_id = v; }),
      str("SenderSubID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.sender_sub_id = v; }),
      str("TargetSubID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.target_sub_id = v; }),
      str("SenderLocationID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.sender_location_id = v; }),
      str("TargetLocationID", [](SessionSettings& s, const std::string& v, auto&, auto) { s.target_location_id = v; }),
      str("DefaultApplVerID",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            if (v == "FIX.5.0SP2" || v == "9") s.default_appl_ver_id = "9";
            else if (v == "FIX.5.0SP1" || v == "8") s.default_appl_ver_id = "8";
            else if (v == "FIX.5.0" || v == "7") s.default_appl_ver_id = "7";
            else if (v == "FIX.4.4" || v == "6") s.default_appl_ver_id = "6";
            else if (v == "FIX.4.2" || v == "4") s.default_appl_ver_id = "4";
            else fail(w, k, "\"" + v + "\" is not an ApplVerID (FIX.5.0SP2, FIX.5.0SP1, FIX.5.0, FIX.4.4, FIX.4.2)");
          }),
      {"HeartBtInt", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.heart_bt_int = static_cast<std::int32_t>(get_int(n, w, k, 0, 3600));
       }},
      {"TestRequestDelayMultiplier", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         const double d = get_double(n, w, k);
         if (!(d >= 0 && d <= 10)) fail(w, k, "must be between 0 and 10");
         s.test_request_delay = d;
       }},
      {"SocketAcceptPort", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.socket_accept_port = static_cast<std::uint16_t>(get_int(n, w, k, 1, 65535));
       }},
      str("SocketConnectHost", [](SessionSettings& s, const std::string& v, auto&, auto) { s.socket_connect_host = v; }),
      {"SocketConnectPort", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.socket_connect_port = static_cast<std::uint16_t>(get_int(n, w, k, 1, 65535));
       }},
      {"ReconnectInterval", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.reconnect_interval_ms = static_cast<std::int32_t>(get_int(n, w, k, 1, 3600) * 1000);
       }},
      {"ReconnectIntervalMax", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.reconnect_max_ms = static_cast<std::int32_t>(get_int(n, w, k, 1, 3600) * 1000);
       }},
      {"ResetOnLogon", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.reset_on_logon = get_bool(n, w, k);
       }},
      {"ResetOnLogout", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.reset_on_logout = get_bool(n, w, k);
       }},
      {"ResetOnDisconnect", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.reset_on_disconnect = get_bool(n, w, k);
       }},
      {"SendResetSeqNumFlag", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.send_reset_seq_num_flag = get_bool(n, w, k);
       }},
      str("StartTime",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            try {
              s.schedule.start_sec = parse_time_of_day(v);
              s.schedule.always = false;
            } catch (const std::invalid_argument& e) {
              fail(w, k, e.what());
            }
          }),
      str("EndTime",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            try {
              s.schedule.end_sec = parse_time_of_day(v);
              s.schedule.always = false;
            } catch (const std::invalid_argument& e) {
              fail(w, k, e.what());
            }
          }),
      str("TimeZone",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            try {
              s.schedule.zone = TimeZone::load(v);
            } catch (const std::invalid_argument& e) {
              fail(w, k, e.what());
            }
          }),
      {"Days", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         const auto* a = n.as_array();
         if (a == nullptr) fail(w, k, "expected an array of day names, got " + type_name(n));
         std::uint8_t mask = 0;
         for (const auto& d : *a) {
           try {
             mask = static_cast<std::uint8_t>(mask | (1u << parse_weekday(get_string(d, w, k))));
           } catch (const std::invalid_argument& e) {
             fail(w, k, e.what());
           }
         }
         if (mask == 0) fail(w, k, "no day given");
         s.schedule.days = mask;
       }},
      str("StoreKind",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            if (v == "file") s.store.kind = StoreKind::file;
            else if (v == "memory") s.store.kind = StoreKind::memory;
            else if (v == "null") s.store.kind = StoreKind::null;
            else fail(w, k, "\"" + v + "\" is not file, memory or null");
          }),
      str("FileStorePath", [](SessionSettings& s, const std::string& v, auto&, auto) { s.store.path = v; }),
      str("FlushPolicy",
          [](SessionSettings& s, const std::string& v, const std::string& w, std::string_view k) {
            if (v == "none") s.store.flush = FlushPolicy::none;
            else if (v == "message") s.store.flush = FlushPolicy::every_message;
            else if (v == "count") s.store.flush = FlushPolicy::every_n;
            else if (v == "time") s.store.flush = FlushPolicy::every_ms;
            else fail(w, k, "\"" + v + "\" is not none, message, count or time");
          }),
      {"FlushEveryN", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.store.flush_every_n = static_cast<std::uint32_t>(get_int(n, w, k, 1, 1'000'000));
       }},
      {"FlushEveryMs", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.store.flush_every_ms = static_cast<std::uint32_t>(get_int(n, w, k, 1, 3'600'000));
       }},
      {"StoreCapacity", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.store.capacity_bytes = static_cast<std::size_t>(get_int(n, w, k, 1 << 16, std::int64_t{1} << 40));
       }},
      {"UseDataDictionary", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.validate = get_bool(n, w, k);
       }},
      str("DataDictionary", [](SessionSettings& s, const std::string& v, auto&, auto) { s.data_dictionary = v; }),
      {"MaxMessageSize", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.max_message_size = static_cast<std::uint32_t>(get_int(n, w, k, 64, 64 << 20));
       }},
      {"LogonTimeout", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.logon_timeout_ms = static_cast<std::int32_t>(get_int(n, w, k, 1, 3600) * 1000);
       }},
      {"LogoutTimeout", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.logout_timeout_ms = static_cast<std::int32_t>(get_int(n, w, k, 1, 3600) * 1000);
       }},
      {"ResendRequestTimeout", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.resend_timeout_ms = static_cast<std::int32_t>(get_int(n, w, k, 0, 3600) * 1000);
       }},
      {"ResendRequestRetries", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.resend_retries = static_cast<std::uint32_t>(get_int(n, w, k, 0, 1000));
       }},
      {"MaxQueuedWhileGap", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.max_queued = static_cast<std::uint32_t>(get_int(n, w, k, 0, 10'000'000));
       }},
      {"MaxQueuedBytes", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.queue_bytes = static_cast<std::size_t>(get_int(n, w, k, 0, std::int64_t{1} << 34));
       }},
      {"SendClaimBytes", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.send_claim_bytes = static_cast<std::size_t>(get_int(n, w, k, 256, 64 << 20));
       }},
      {"OverflowBytes", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.overflow_bytes = static_cast<std::size_t>(get_int(n, w, k, 256, std::int64_t{1} << 32));
       }},
      str("Username", [](SessionSettings& s, const std::string& v, auto&, auto) { s.username = v; }),
      str("Password", [](SessionSettings& s, const std::string& v, auto&, auto) { s.password = v; }),
      {"CheckLatency", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.check_latency = get_bool(n, w, k);
       }},
      {"MaxLatency", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         s.max_latency_s = static_cast<std::int32_t>(get_int(n, w, k, 1, 86400));
       }},
      {"TimestampPrecision", [](SessionSettings& s, const toml::node& n, const std::string& w, std::string_view k) {
         const std::int64_t p = get_int(n, w, k, 0, 9);
         if (p != 0 && p != 3 && p != 6 && p != 9) fail(w, k, "must be 0, 3, 6 or 9");
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

void apply(SessionSettings& s, const toml::table& t, const std::string& where) {
  for (const auto& [k, v] : t) {
    const Key* key = find_key(k.str());
    if (key == nullptr) fail(where, k.str(), "unknown setting");
    key->set(s, v, where, k.str());
  }
}

Config build(toml::table doc, const std::string& name) {
  Config c;
  c.path = name;
  SessionSettings defaults;
  const toml::table* defaults_table = nullptr;
  if (const auto* d = doc.get("defaults")) {
    defaults_table = d->as_table();
    if (defaults_table == nullptr) throw ConfigError(name + ": [defaults] must be a table");
    apply(defaults, *defaults_table, name + ": [defaults]");
  }
  const auto* arr = doc.get("session");
  if (arr == nullptr) throw ConfigError(name + ": no [[session]] table");
  const auto* sessions = arr->as_array();
  if (sessions == nullptr) throw ConfigError(name + ": session must be an array of tables ([[session]])");
  std::size_t i = 0;
  for (const auto& node : *sessions) {
    ++i;
    const auto* t = node.as_table();
    std::string where = name + ": session " + std::to_string(i);
    if (t == nullptr) throw ConfigError(where + ": not a table");
    SessionSettings s = defaults;
    apply(s, *t, where);
    where += " (" + s.id() + ")";
    const auto required = [&](const std::string& v, const char* key) {
      if (v.empty()) fail(where, key, "missing (required)");
    };
    required(s.sender_comp_id, "SenderCompID");
    required(s.target_comp_id, "TargetCompID");
    const auto given = [&](const char* key) {
      return t->contains(key) || (defaults_table != nullptr && defaults_table->contains(key));
    };
    if (given("StartTime") != given("EndTime"))
      fail(where, given("StartTime") ? "EndTime" : "StartTime", "missing (StartTime and EndTime go together)");
    try {
      s.check();
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      const auto colon = what.find(':');
      fail(where, what.substr(0, colon), colon == std::string::npos ? what : what.substr(colon + 2));
    }
    for (const SessionSettings& other : c.sessions)
      if (other.id() == s.id()) throw ConfigError(where + ": session " + s.id() + " configured twice");
    c.sessions.push_back(std::move(s));
  }
  c.document = std::move(doc);
  return c;
}

std::string describe(const toml::parse_error& e, const std::string& name) {
  std::ostringstream os;
  os << name << ":" << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
  return os.str();
}

}  // namespace

Config load_config(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(describe(e, path));
  }
  return build(std::move(doc), path);
}

Config parse_config(std::string_view text, const std::string& name) {
  toml::table doc;
  try {
    doc = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(describe(e, name));
  }
  return build(std::move(doc), name);
}

}  // namespace kite::session
