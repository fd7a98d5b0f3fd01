#include "admin.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "kite/engine/agent.hpp"

namespace kite::app {

namespace {

using link::Metrics;
using link::SessionMetrics;
using session::SessionState;

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string label_value(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// A monotonic reading as UTC (through the two clocks' present offset).
std::int64_t mono_to_utc(std::int64_t mono) {
  if (mono == 0) return 0;
  return mono + (session::SystemClock{}.now_ns() - engine::monotonic_ns());
}

std::string utc_text(std::int64_t ns) {
  if (ns == 0) return "-";
  const time_t t = static_cast<time_t>(ns / 1'000'000'000);
  tm parts;
  gmtime_r(&t, &parts);
  char b[80];
  std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, static_cast<int>((ns / 1'000'000) % 1000));
  return b;
}

// A session's state as an operator reads it.
std::string state_text(const SessionMetrics& m) {
  const auto st = static_cast<SessionState>(m.state.load(std::memory_order_relaxed));
  std::string s;
  switch (st) {
    case SessionState::disconnected: s = "disconnected"; break;
    case SessionState::awaiting_logon: s = "connected"; break;
    case SessionState::active: s = "logged-on"; break;
    case SessionState::logout_sent: s = "logging-out"; break;
    case SessionState::closing: s = "closing"; break;
  }
  if (st == SessionState::active && m.in_gap.load(std::memory_order_relaxed)) s = "in-gap";
  return s;
}

std::uint64_t rejects(const SessionMetrics& m) {
  std::uint64_t n = m.business_rejects_out.get();
  for (const auto& r : m.rejects_out) n += r.get();
  return n;
}

// SESSION: a session ID, or the counterparty's CompID when it names one session.
bool find_session(const Acceptor& a, std::string_view name, std::size_t& index, std::string& error) {
  auto& reg = const_cast<Acceptor&>(a).registry();
  std::size_t found = reg.size();
  int matches = 0;
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const session::Session& s = reg.at(i);
    if (s.id() == name) {
      index = i;
      return true;
    }
    if (s.settings().target_comp_id == name) {
      found = i;
      ++matches;
    }
  }
  if (matches == 1) {
    index = found;
    return true;
  }
  error = matches > 1 ? "\"" + std::string(name) + "\" names " + std::to_string(matches) +
                            " sessions: give the session ID (kite-admin sessions lists them)"
                      : "no session \"" + std::string(name) + "\" (kite-admin sessions lists them)";
  return false;
}

std::string cores_text(const std::vector<int>& v) {
  std::string s;
  for (const int c : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(c);
  }
  return s;
}

bool parse_seq(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v == 0) return false;
  out = v;
  return true;
}

AdminAnswer sessions_answer(const Acceptor& a, bool json) {
  auto& reg = const_cast<Acceptor&>(a).registry();
  const Metrics* mx = a.metrics();
  std::string out;
  if (json)
    out = "[";
  else {
    char b[256];
    std::snprintf(b, sizeof b, "%-28s %-12s %9s %9s %10s %10s %7s %7s  %s\n", "session", "state", "next_in", "next_out",
                  "msgs_in", "msgs_out", "rejects", "resends", "last activity");
    out = b;
  }
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const session::Session& s = reg.at(i);
    const SessionMetrics& m = mx->session(i);
    std::string state = state_text(m);
    const char* refusal = m.last_refusal.load(std::memory_order_relaxed);
    const std::uint64_t resends = m.resend_requests_in.get();
    if (json) {
      if (i != 0) out += ",";
      out += "\n {\"session\": " + json_string(s.id()) + ", \"state\": " + json_string(state) +
             ", \"next_in\": " + std::to_string(m.next_in.load()) +
             ", \"next_out\": " + std::to_string(m.next_out.load()) +
             ", \"messages_in\": " + std::to_string(m.messages_in.get()) +
             ", \"messages_out\": " + std::to_string(m.messages_out.get()) +
             ", \"bytes_in\": " + std::to_string(m.bytes_in.get()) +
             ", \"bytes_out\": " + std::to_string(m.bytes_out.get()) + ", \"rejects\": " + std::to_string(rejects(m)) +
             ", \"rejects_in\": " + std::to_string(m.rejects_in.get()) +
             ", \"resend_requests\": " + std::to_string(resends) + ", \"logons\": " + std::to_string(m.logons.get()) +
             ", \"refused_logons\": " + std::to_string(m.refused_logons.get()) +
             ", \"last_refusal\": " + (refusal != nullptr ? json_string(refusal) : std::string("null")) +
             ", \"message_log\": " + (m.message_log.load() ? "true" : "false") + ", \"last_activity\": " +
             (m.last_activity_mono_ns.load() != 0 ? json_string(utc_text(mono_to_utc(m.last_activity_mono_ns.load())))
                                                  : std::string("null")) +
             "}";
    } else {
      if (refusal != nullptr && state == "disconnected") state = "refused";
      char b[512];
      std::snprintf(
          b, sizeof b,
          "%-28s %-12s %9" PRIu64 " %9" PRIu64 " %10" PRIu64 " %10" PRIu64 " %7" PRIu64 " %7" PRIu64 "  %s%s%s\n",
          s.id().c_str(), state.c_str(), m.next_in.load(), m.next_out.load(), m.messages_in.get(), m.messages_out.get(),
          rejects(m), resends, utc_text(mono_to_utc(m.last_activity_mono_ns.load())).c_str(),
          refusal != nullptr ? "  last refusal: " : "", refusal != nullptr ? refusal : "");
      out += b;
    }
  }
  out += json ? "\n]\n" : "";
  return {true, out};
}

AdminAnswer status_answer(const Acceptor& a, bool json) {
  const auto& c = a.config();
  const auto threads = a.engine_threads();
  const auto stats = a.engine_stats();
  const double uptime = static_cast<double>(session::SystemClock{}.now_ns() - a.started_ns()) / 1e9;
  std::size_t logged_on = 0;
  const auto& reg = const_cast<Acceptor&>(a).registry();
  for (std::size_t i = 0; i < reg.size(); ++i)
    if (a.metrics()->session(i).state.load() == static_cast<std::uint8_t>(SessionState::active)) ++logged_on;
  const bool paused = reg.logons_paused();
  std::string out;
  if (json) {
    out = "{\"model\": " + json_string(engine::to_string(c.engine.model)) +
          ", \"transport\": " + json_string(transport::to_string(c.engine.transport)) +
          ", \"mode\": " + json_string(to_string(c.mode)) + ", \"port\": " + std::to_string(a.port()) +
          ", \"uptime_s\": " + std::to_string(uptime) + ", \"sessions\": " + std::to_string(reg.size()) +
          ", \"logged_on\": " + std::to_string(logged_on) +
          ", \"open_connections\": " + std::to_string(a.open_connections()) +
          ", \"logons_paused\": " + (paused ? "true" : "false") + ", \"threads\": [";
    for (std::size_t i = 0; i < threads.size(); ++i) {
      const auto& t = threads[i];
      if (i != 0) out += ", ";
      out += "{\"name\": " + json_string(t.name) + ", \"tid\": " + std::to_string(t.tid) +
             ", \"cpu\": " + std::to_string(t.cpu) + ", \"affinity\": " + json_string(cores_text(t.affinity)) + "}";
    }
    out += "], \"accepted\": " + std::to_string(stats.accepted) + ", \"refused\": " + std::to_string(stats.refused) +
           "}\n";
  } else {
    char b[512];
    std::snprintf(b, sizeof b,
                  "%s/%s on %s:%u, mode %s, up %.0f s\nsessions: %zu configured, %zu logged on, %d connection(s) "
                  "open; logons %s\nconnections accepted %" PRIu64 ", refused %" PRIu64 "\nthreads:\n",
                  transport::to_string(c.engine.transport), engine::to_string(c.engine.model),
                  c.engine.bind_address.c_str(), a.port(), to_string(c.mode), uptime, reg.size(), logged_on,
                  a.open_connections(), paused ? "PAUSED" : "accepted", stats.accepted, stats.refused);
    out = b;
    for (const auto& t : threads) out += "  " + t.describe() + "\n";
  }
  return {true, out};
}

}  // namespace

namespace {

// Prometheus text exposition: a family's HELP and TYPE lines, then its samples.
struct MetricsWriter {
  std::string out;
  void family(const char* name, const char* type, const char* help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
  }
  void sample(const char* name, const std::string& labels, std::uint64_t v) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += ' ';
    out += std::to_string(v);
    out += '\n';
  }
};

bool logged_on(const SessionMetrics& m) { return m.state.load() == static_cast<std::uint8_t>(SessionState::active); }

void session_counters(MetricsWriter& w, const Metrics& mx, const std::vector<std::string>& sl) {
  struct PerSession {
    const char* name;
    const char* help;
    const link::Counter SessionMetrics::*field;
  };
  static const PerSession counters[] = {
      {"kite_messages_received_total", "FIX messages received.", &SessionMetrics::messages_in},
      {"kite_messages_sent_total", "FIX messages sent (resent ones included).", &SessionMetrics::messages_out},
      {"kite_bytes_received_total", "Bytes of FIX messages received.", &SessionMetrics::bytes_in},
      {"kite_bytes_sent_total", "Bytes committed to the send buffer.", &SessionMetrics::bytes_out},
      {"kite_business_rejects_sent_total", "BusinessMessageRejects (35=j) sent.",
       &SessionMetrics::business_rejects_out},
      {"kite_rejects_received_total", "Rejects (35=3) and BusinessMessageRejects (35=j) received.",
       &SessionMetrics::rejects_in},
      {"kite_resend_requests_received_total", "ResendRequests received.", &SessionMetrics::resend_requests_in},
      {"kite_resend_requests_sent_total", "ResendRequests sent.", &SessionMetrics::resend_requests_out},
      {"kite_sequence_resets_received_total", "SequenceResets received (gap fills included).",
       &SessionMetrics::sequence_resets_in},
      {"kite_sequence_resets_sent_total", "SequenceResets sent (gap fills included).",
       &SessionMetrics::sequence_resets_out},
      {"kite_garbled_received_total", "Frames discarded as garbled.", &SessionMetrics::garbled_in},
      {"kite_logons_total", "Logons completed.", &SessionMetrics::logons},
      {"kite_logons_refused_total", "Logons refused (wrong password, paused, already logged on, schedule).",
       &SessionMetrics::refused_logons},
  };
  for (const PerSession& c : counters) {
    w.family(c.name, "counter", c.help);
    for (std::size_t i = 0; i < sl.size(); ++i) w.sample(c.name, sl[i], (mx.session(i).*c.field).get());
  }
}

// Counters with a second label: rejects by reason, disconnects by cause.
void session_breakdowns(MetricsWriter& w, const Metrics& mx, const std::vector<std::string>& sl) {
  w.family("kite_rejects_sent_total", "counter",
           "Session-level Rejects (35=3) sent, by SessionRejectReason (none: no 373).");
  for (std::size_t i = 0; i < sl.size(); ++i)
    for (std::size_t r = 0; r < link::kRejectReasonSlots; ++r) {
      const std::uint64_t v = mx.session(i).rejects_out[r].get();
      if (v != 0)
        w.sample("kite_rejects_sent_total", sl[i] + ",reason=\"" + std::string(link::reject_slot_label(r)) + "\"", v);
    }
  w.family("kite_disconnects_total", "counter", "Connections of the session that ended, by cause.");
  for (std::size_t i = 0; i < sl.size(); ++i) {
    const SessionMetrics& m = mx.session(i);
    for (std::size_t k = 0; k < link::kDisconnectCauses; ++k) {
      const char* cause = m.disconnect_cause[k].load(std::memory_order_acquire);
      if (cause == nullptr) break;
      w.sample("kite_disconnects_total", sl[i] + ",cause=\"" + label_value(cause) + "\"", m.disconnects[k].get());
    }
    if (const std::uint64_t v = m.disconnects[link::kDisconnectCauses].get(); v != 0)
      w.sample("kite_disconnects_total", sl[i] + ",cause=\"other\"", v);
  }
}

void session_gauges(MetricsWriter& w, const Metrics& mx, const std::vector<std::string>& sl) {
  w.family("kite_session_logged_on", "gauge", "1 while the session is logged on.");
  for (std::size_t i = 0; i < sl.size(); ++i) w.sample("kite_session_logged_on", sl[i], logged_on(mx.session(i)));
  w.family("kite_next_seq_in", "gauge", "The MsgSeqNum expected next from the counterparty.");
  for (std::size_t i = 0; i < sl.size(); ++i) w.sample("kite_next_seq_in", sl[i], mx.session(i).next_in.load());
  w.family("kite_next_seq_out", "gauge", "The MsgSeqNum of the next message sent.");
  for (std::size_t i = 0; i < sl.size(); ++i) w.sample("kite_next_seq_out", sl[i], mx.session(i).next_out.load());
}

void acceptor_gauges(MetricsWriter& w, const Acceptor& a, const Metrics& mx, std::size_t sessions) {
  const auto& reg = const_cast<Acceptor&>(a).registry();
  const engine::EngineStats st = a.engine_stats();
  std::uint64_t on = 0;
  for (std::size_t i = 0; i < sessions; ++i) on += logged_on(mx.session(i));
  w.family("kite_sessions_logged_on", "gauge", "Sessions logged on.");
  w.sample("kite_sessions_logged_on", "", on);
  w.family("kite_connections_open", "gauge", "Connections open (logged on or not).");
  w.sample("kite_connections_open", "", static_cast<std::uint64_t>(a.open_connections()));
  w.family("kite_logons_paused", "gauge", "1 while logons are paused (kite-admin pause-logons).");
  w.sample("kite_logons_paused", "", reg.logons_paused() ? 1 : 0);
  w.family("kite_connections_accepted_total", "counter", "Connections accepted by the engine.");
  w.sample("kite_connections_accepted_total", "", st.accepted);
  w.family("kite_connections_refused_total", "counter", "Connections refused at accept (MaxConnections).");
  w.sample("kite_connections_refused_total", "", st.refused);
  w.family("kite_slow_consumers_total", "counter", "Connections closed because their send buffer stayed full.");
  w.sample("kite_slow_consumers_total", "", st.slow_consumers);
  w.family("kite_send_full_events_total", "counter", "Times a send buffer had no room for a message (back-pressure).");
  w.sample("kite_send_full_events_total", "", st.send_full_events);
  w.family("kite_send_buffer_high_water_bytes", "gauge", "Most bytes pending in one connection's send buffer.");
  w.sample("kite_send_buffer_high_water_bytes", "", st.tx_high_water);
}

void reply_latency(MetricsWriter& w, const Metrics& mx) {
  w.family("kite_reply_latency_seconds", "histogram",
           "Time from inbound bytes reaching the session to its first reply, per engine thread.");
  for (std::size_t t = 0; t < Metrics::kMaxThreads; ++t) {
    const link::ThreadLatency& h = mx.thread(t);
    if (!h.claimed.load(std::memory_order_acquire)) continue;
    const std::string th = "thread=\"" + label_value(h.name) + "\"";
    std::uint64_t cum = 0;
    for (int b = 0; b <= link::ThreadLatency::kBuckets; ++b) {
      cum += h.buckets[b].get();
      char le[32];
      if (b == link::ThreadLatency::kBuckets)
        std::snprintf(le, sizeof le, "+Inf");
      else
        std::snprintf(le, sizeof le, "%.9g", static_cast<double>(link::ThreadLatency::bucket_bound_ns(b)) / 1e9);
      w.out += "kite_reply_latency_seconds_bucket{" + th + ",le=\"" + le + "\"} " + std::to_string(cum) + "\n";
    }
    char sum[48];
    std::snprintf(sum, sizeof sum, "%.9f", static_cast<double>(h.sum_ns.get()) / 1e9);
    w.out += "kite_reply_latency_seconds_sum{" + th + "} " + sum + "\n";
    w.out += "kite_reply_latency_seconds_count{" + th + "} " + std::to_string(h.count.get()) + "\n";
  }
}

}  // namespace

std::string metrics_text(const Acceptor& a) {
  const Metrics& mx = *a.metrics();
  const auto& reg = const_cast<Acceptor&>(a).registry();
  std::vector<std::string> sl;  // each session's label
  for (std::size_t i = 0; i < reg.size(); ++i) sl.push_back("session=\"" + label_value(reg.at(i).id()) + "\"");
  MetricsWriter w;
  session_counters(w, mx, sl);
  session_breakdowns(w, mx, sl);
  session_gauges(w, mx, sl);
  acceptor_gauges(w, a, mx, sl.size());
  reply_latency(w, mx);
  w.family("kite_uptime_seconds", "gauge", "Seconds since the acceptor started.");
  w.sample("kite_uptime_seconds", "",
           static_cast<std::uint64_t>((session::SystemClock{}.now_ns() - a.started_ns()) / 1'000'000'000));
  return w.out;
}

AdminAnswer admin_command(Acceptor& a, const std::vector<std::string>& w) {
  static const char* kUsage =
      "commands: sessions [--json] | status [--json] | metrics | logout SESSION [--text TEXT] | disconnect SESSION "
      "| set-seq SESSION [--in N] [--out M] [--force] | reset SESSION [--force] | pause-logons | resume-logons | "
      "message-log SESSION on|off";
  if (w.empty()) return {false, std::string("no command; ") + kUsage};
  const std::string& cmd = w[0];
  auto flag_only = [&](std::size_t from, std::initializer_list<const char*> allowed, std::string& bad) {
    for (std::size_t i = from; i < w.size(); ++i) {
      bool ok = false;
      for (const char* f : allowed) ok = ok || w[i] == f;
      if (!ok) {
        bad = w[i];
        return false;
      }
    }
    return true;
  };
  std::string bad;
  if (cmd == "help") return {true, std::string(kUsage) + "\n"};
  if (cmd == "sessions" || cmd == "status") {
    if (!flag_only(1, {"--json"}, bad)) return {false, cmd + ": unknown argument \"" + bad + "\""};
    const bool json = w.size() > 1;
    return cmd == "sessions" ? sessions_answer(a, json) : status_answer(a, json);
  }
  if (cmd == "metrics") {
    if (w.size() != 1) return {false, "metrics: takes no argument"};
    return {true, metrics_text(a)};
  }
  if (cmd == "pause-logons" || cmd == "resume-logons") {
    if (w.size() != 1) return {false, cmd + ": takes no argument"};
    const bool pause = cmd == "pause-logons";
    const bool was = a.registry().logons_paused();
    a.registry().pause_logons(pause);
    return {true, std::string(pause ? (was ? "logons were already paused"
                                           : "logons paused: new Logons are refused; "
                                             "logged-on sessions carry on")
                                    : (was ? "logons resumed" : "logons were not paused")) +
                      "\n"};
  }
  if (cmd == "logout" || cmd == "disconnect" || cmd == "set-seq" || cmd == "reset" || cmd == "message-log") {
    if (w.size() < 2) return {false, cmd + ": SESSION missing"};
    std::size_t index = 0;
    std::string error;
    if (!find_session(a, w[1], index, error)) return {false, cmd + ": " + error};
    if (cmd == "message-log") {
      if (w.size() != 3 || (w[2] != "on" && w[2] != "off")) return {false, "message-log: expected SESSION on|off"};
      const CommandResult r = a.set_message_log(index, w[2] == "on");
      return {r.ok, r.text + "\n"};
    }
    SessionCommand sc;
    std::string text;
    bool in_given = false, out_given = false;
    for (std::size_t i = 2; i < w.size(); ++i) {
      const std::string& f = w[i];
      const bool has_value = i + 1 < w.size();
      if (f == "--force" && (cmd == "set-seq" || cmd == "reset")) {
        sc.force = true;
      } else if (f == "--text" && cmd == "logout" && has_value) {
        text = w[++i];
      } else if ((f == "--in" || f == "--out") && cmd == "set-seq" && has_value) {
        std::uint64_t v = 0;
        if (!parse_seq(w[i + 1], v))
          return {false, "set-seq: " + f + ": expected a sequence number from 1, got \"" + w[i + 1] + "\""};
        (f == "--in" ? sc.next_in : sc.next_out) = v;
        (f == "--in" ? in_given : out_given) = true;
        ++i;
      } else {
        return {false, cmd + ": unknown or incomplete argument \"" + f + "\""};
      }
    }
    if (cmd == "set-seq" && !in_given && !out_given) return {false, "set-seq: give --in N, --out M or both"};
    sc.kind = cmd == "logout"       ? SessionCommand::Kind::logout
              : cmd == "disconnect" ? SessionCommand::Kind::disconnect
              : cmd == "set-seq"    ? SessionCommand::Kind::set_seq
                                    : SessionCommand::Kind::reset;
    sc.text = text;
    const CommandResult r = a.run(index, sc);
    return {r.ok, a.registry().at(index).id() + ": " + r.text + "\n"};
  }
  return {false, "unknown command \"" + cmd + "\"; " + kUsage};
}

// ------------------------------------------------------------------ server

namespace {
// Reads until an empty line (or the peer's shutdown), at most 64 KiB, 2 s.
bool read_request(int fd, std::string& req, bool http) {
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (req.size() < 65536) {
    if (http ? req.find("\r\n\r\n") != std::string::npos || req.find("\n\n") != std::string::npos
             : req.find("\n\n") != std::string::npos || req == "\n")
      return true;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return !req.empty();
    req.append(buf, static_cast<std::size_t>(n));
  }
  return false;
}

void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}
}  // namespace

bool AdminServer::start(std::string& error) {
  if (!config_.socket.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (config_.socket.size() >= sizeof addr.sun_path) {
      error = "admin socket " + config_.socket + ": path longer than " + std::to_string(sizeof addr.sun_path - 1) +
              " bytes";
      return false;
    }
    std::memcpy(addr.sun_path, config_.socket.c_str(), config_.socket.size() + 1);
    unix_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // A socket file left by a process that is gone is replaced; a live one is not.
    if (::connect(unix_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      error = "admin socket " + config_.socket + ": another process is serving it";
      ::close(unix_fd_);
      unix_fd_ = -1;
      return false;
    }
    ::close(unix_fd_);
    unix_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct stat st {};
    if (::lstat(config_.socket.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        error = "admin socket " + config_.socket + ": exists and is not a socket";
        ::close(unix_fd_);
        unix_fd_ = -1;
        return false;
      }
      ::unlink(config_.socket.c_str());
    }
    // Created with the configured mode from the start: never briefly open to others.
    const mode_t old = ::umask(static_cast<mode_t>(~config_.socket_mode & 0777));
    const int b = ::bind(unix_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    const int e = errno;
    ::umask(old);
    if (b != 0 || ::listen(unix_fd_, 16) != 0) {
      error = "admin socket " + config_.socket + ": " + std::strerror(b != 0 ? e : errno);
      ::close(unix_fd_);
      unix_fd_ = -1;
      return false;
    }
    ::chmod(config_.socket.c_str(), config_.socket_mode);
  }
  if (config_.metrics_port != 0) {
    http_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(http_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(config_.metrics_port);
    if (::inet_pton(AF_INET, config_.metrics_bind.c_str(), &in.sin_addr) != 1) {
      error = "[admin] metrics_bind: not an IPv4 address: " + config_.metrics_bind;
      stop();
      return false;
    }
    if (::bind(http_fd_, reinterpret_cast<sockaddr*>(&in), sizeof in) != 0 || ::listen(http_fd_, 16) != 0) {
      error = "metrics port " + config_.metrics_bind + ":" + std::to_string(config_.metrics_port) + ": " +
              std::strerror(errno);
      stop();
      return false;
    }
    socklen_t len = sizeof in;
    ::getsockname(http_fd_, reinterpret_cast<sockaddr*>(&in), &len);
    http_port_ = ntohs(in.sin_port);
  }
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    error = std::string("admin: pipe: ") + std::strerror(errno);
    stop();
    return false;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

void AdminServer::stop() noexcept {
  if (thread_.joinable()) {
    [[maybe_unused]] const ssize_t w = ::write(wake_[1], "x", 1);
    thread_.join();
  }
  for (int* fd : {&unix_fd_, &http_fd_, &wake_[0], &wake_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (!config_.socket.empty()) {
    struct stat st {};
    if (::lstat(config_.socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(config_.socket.c_str());
  }
}

void AdminServer::run() noexcept {
  pthread_setname_np(pthread_self(), "kite-admin");
  for (;;) {
    pollfd p[3] = {{wake_[0], POLLIN, 0}, {unix_fd_, POLLIN, 0}, {http_fd_, POLLIN, 0}};
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[0].revents != 0) return;
    if (unix_fd_ >= 0 && (p[1].revents & POLLIN)) {
      const int fd = ::accept4(unix_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        serve_admin(fd);
        ::close(fd);
      }
    }
    if (http_fd_ >= 0 && (p[2].revents & POLLIN)) {
      const int fd = ::accept4(http_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        serve_http(fd);
        ::close(fd);
      }
    }
  }
}

void AdminServer::serve_admin(int fd) noexcept {
  try {
    ucred cred{};
    socklen_t len = sizeof cred;
    const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    std::string req;
    if (!read_request(fd, req, false)) {
      write_all(fd, "error\nrequest not ended by an empty line within 2 s\n");
      return;
    }
    std::vector<std::string> words;
    std::size_t at = 0;
    while (at < req.size()) {
      const std::size_t nl = req.find('\n', at);
      if (nl == std::string::npos || nl == at) break;
      words.push_back(req.substr(at, nl - at));
      at = nl + 1;
    }
    const AdminAnswer ans = admin_command(acceptor_, words);
    std::string said;
    for (const auto& w : words) {
      if (!said.empty()) said += ' ';
      said += w;
    }
    std::string outcome = ans.text.substr(0, ans.text.find('\n'));
    if (words.empty() || words[0] == "sessions" || words[0] == "status" || words[0] == "metrics" || words[0] == "help")
      outcome = "answered";
    log_.logf(ans.ok ? session::LogLevel::info : session::LogLevel::warn, "admin", "uid %s: %s: %s: %s",
              known ? std::to_string(cred.uid).c_str() : "?", said.c_str(), ans.ok ? "ok" : "error", outcome.c_str());
    write_all(fd, ans.ok ? "ok\n" : "error\n");
    write_all(fd, ans.text);
  } catch (...) {
    write_all(fd, "error\nout of memory\n");
  }
}

void AdminServer::serve_http(int fd) noexcept {
  try {
    std::string req;
    if (!read_request(fd, req, true)) return;
    const bool get = req.rfind("GET ", 0) == 0;
    const std::size_t sp = req.find(' ', 4);
    const std::string path = get && sp != std::string::npos ? req.substr(4, sp - 4) : "";
    std::string body, status = "200 OK";
    if (!get) {
      status = "405 Method Not Allowed";
      body = "only GET\n";
    } else if (path != "/metrics") {
      status = "404 Not Found";
      body = "the metrics are at /metrics\n";
    } else {
      body = metrics_text(acceptor_);
    }
    write_all(fd, "HTTP/1.0 " + status +
                      "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  } catch (...) {}
}

}  // namespace kite::app
