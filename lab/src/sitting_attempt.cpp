// A sitting's attempts at a cell: its server and client planned and started,
// the client supervised and audited, and the attempt judged.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include "kite/lab/check.hpp"
#include "kite/lab/services.hpp"
#include "kite/lab/util.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

// "run J/R done: p50=... us p99=... us" (the client's progress) -> "run J/R p50=... us p99=... us"; "" otherwise.
std::string parse_run_line(const std::string& line) {
  auto at = line.find("run ");
  auto done = line.find(" done:", at == std::string::npos ? 0 : at);
  if (at == std::string::npos || done == std::string::npos) return "";
  std::string jr = line.substr(at + 4, done - at - 4);
  auto slash = jr.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == jr.size()) return "";
  for (char ch : jr)
    if (ch != '/' && (ch < '0' || ch > '9')) return "";
  return "run " + jr + " " + trim(line.substr(done + 6));
}

// Ends an attempt in error; false, for the step that failed to return.
bool fail(Attempt& a, std::string reason) {
  a.end = AttemptEnd::error;
  a.reason = std::move(reason);
  return false;
}

// Launcher prefix and environment for transports that take over an unchanged
// binary (socketxtreme's API is libvma's too, switched on at run time).
void apply_preload(const Setup& c, const std::string& transport, std::vector<std::string>& argv,
                   std::map<std::string, std::string>& env) {
  const Machine& m = c.opt.machine;
  if (transport == "onload") {
    std::vector<std::string> pre = {"onload"};
    if (!m.onload_profile.empty()) pre.push_back("--profile=" + m.onload_profile);
    argv.insert(argv.begin(), pre.begin(), pre.end());
  } else if (transport == "vma" || transport == "socketxtreme") {
    env["LD_PRELOAD"] = "libvma.so";
    if (transport == "socketxtreme") env["VMA_SOCKETXTREME"] = "1";
  }
  for (const auto& [k, v] : m.launcher_env(transport)) env[k] = v;
}

Endpoints endpoints_for(const Context& c, const std::string& transport) {
  Endpoints e;
  if (c.network == "netns" && c.netns) {
    e.bind = e.host = c.netns->server_addr();
    e.server_ns = c.netns->server_ns();
    e.client_ns = c.netns->client_ns();
  } else if (c.network == "nic") {
    if (const NicPair* p = c.opt.machine.nic_for(transport)) e.bind = e.host = p->server_addr;
    if (c.wire) {
      e.server_ns = c.wire->server_ns();
      e.client_ns = c.wire->client_ns();
    }
  }
  return e;
}

// The cores the audit lets the server use: the first server core for the
// one-thread models, else every server core (and the pool's coordinator).
CoreSet allowed_server_cores(const Machine& m, const std::string& model, int coordinator) {
  if (model == "single" || model == "mono") return {m.server.front()};
  CoreSet allowed = m.server;
  if (model == "pool") allowed.push_back(coordinator);
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  return allowed;
}

// The value of every placeholder of the flavour's args for this attempt.
ServerStart server_start(const Setup& c, const Cell& cell, const AttemptPlan& p) {
  ServerStart s;
  s.model = cell.model;
  s.transport = cell.transport;
  s.bind = p.net.bind;
  s.port = p.port;
  s.cores = c.opt.machine.server;
  s.coordinator_core = p.coordinator;
  s.sessions = p.sessions;
  s.workers = c.workers.count;
  s.busy_poll_usecs = p.busy_poll;
  s.idle = c.idle;
  s.ready_file = p.ready;
  const StoreSetting st = store_setting(cell_store(c, cell));
  s.store = st.kind;
  s.store_commit = st.commit;
  s.store_conninfo = p.store_conninfo;
  s.store_dir = p.work + "/store";
  s.flavour = cell.flavour;
  s.build_dir = c.opt.build_dir;
  s.source_dir = c.opt.source_dir;
  s.tls_cert = c.tls.cert;
  s.tls_key = c.tls.key;
  s.tls_ca = c.tls.ca;
  return s;
}

SpawnSpec server_spec(const Setup& c, const Cell& cell, const AttemptPlan& p) {
  const Flavour& fl = c.flavours.at(cell.flavour);
  SpawnSpec ss;
  ss.argv = server_argv(fl, flavour_binary(c, fl), server_start(c, cell, p));
  ss.env = fl.env;
  apply_preload(c, cell.transport, ss.argv, ss.env);
  ss.netns = p.net.server_ns;
  ss.stdout_path = p.work + "/server.out";
  ss.stderr_path = p.work + "/server.err";
  return ss;
}

SpawnSpec client_spec(const Setup& c, const Cell& cell, const AttemptPlan& p) {
  const Matrix& mx = c.opt.matrix;
  SpawnSpec cs;
  cs.argv = {c.client_path,          "client", "--host",  p.net.host,   "--port",
             std::to_string(p.port), "--loop", cell.loop, "--sessions", std::to_string(p.sessions)};
  if (cell.loop == "open") {
    const int rate = c.step ? c.step->rate : mx.rate;
    cs.argv.insert(cs.argv.end(),
                   {"--rate", std::to_string(rate), "--max-in-flight", std::to_string(mx.max_in_flight)});
  } else {
    cs.argv.insert(cs.argv.end(), {"--think-us", std::to_string(mx.think_us)});
  }
  cs.argv.insert(cs.argv.end(), {"--warmup",
                                 num(mx.warmup_s),
                                 "--duration",
                                 num(mx.duration_s),
                                 "--runs",
                                 std::to_string(mx.runs),
                                 "--cores",
                                 comma_list(c.opt.machine.client),
                                 "--idle",
                                 c.idle,
                                 "--busy-poll-usecs",
                                 std::to_string(p.busy_poll),
                                 "--json",
                                 p.client_json,
                                 "--cell",
                                 cell.id(),
                                 "--cv-p50-limit",
                                 num(mx.thresholds.cv_p50),
                                 "--cv-p99-limit",
                                 num(mx.thresholds.cv_p99),
                                 "--rate-fraction",
                                 num(mx.thresholds.rate_fraction),
                                 "--response-over-service",
                                 num(mx.thresholds.response_over_service)});
  if (cell.transport == "tls") cs.argv.insert(cs.argv.end(), {"--tls", "--tls-ca", c.tls.ca});
  if (c.step && c.step->client_threads > 1)
    cs.argv.insert(cs.argv.end(), {"--threads", std::to_string(c.step->client_threads)});
  apply_preload(c, cell.transport, cs.argv, cs.env);
  cs.netns = p.net.client_ns;
  cs.stdout_path = p.work + "/client.out";
  cs.pipe_stderr = true;
  return cs;
}

// The cell's store as stamp.effective records it; a postgresql store gets a
// fresh database of the service's for this server (its conninfo into `conninfo`).
json plan_store(const Context& c, const Cell& cell, std::string& conninfo) {
  const std::string setting = cell_store(c, cell);
  const StoreSetting st = store_setting(setting);
  json j = {{"setting", setting}, {"kind", st.kind}, {"commit", st.commit.empty() ? json() : json(st.commit)}};
  if (service_for_store(setting).empty()) return j;
  j["service"] = "postgresql";
  std::string error;
  if (c.pg) conninfo = c.pg->create_database(database_name_for(cell), error);
  if (conninfo.empty()) j["error"] = c.pg ? error : "postgresql is not running";
  j["database"] = database_name_for(cell);
  return j;
}

// The client's stderr as it comes: kept (bounded) for the cell's error, its
// last "run J/R done" line for the progress line.
struct ClientStderr {
  std::string text, partial, run_text;

  void drain(int fd) {
    char buf[4096];
    while (true) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      partial.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = partial.find('\n')) != std::string::npos) {
        std::string line = partial.substr(0, nl);
        partial.erase(0, nl + 1);
        if (text.size() < 65536) text += line + "\n";
        if (std::string r = parse_run_line(line); !r.empty()) run_text = r;
      }
    }
  }
};

ServerUsage server_usage(pid_t pid) {
  ServerUsage u;
  const std::string stat = read_text_or_empty("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(stat.substr(close + 2));
    std::string field;
    double utime = -1, stime = -1;
    for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 14 and 15: utime, stime in clock ticks
      if (i == 14) utime = std::atof(field.c_str());
      if (i == 15) stime = std::atof(field.c_str());
    }
    if (utime >= 0 && stime >= 0) u.cpu_s = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::istringstream status(read_text_or_empty("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_kb = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) u.hwm_kb = std::atol(line.c_str() + 6);
  }
  return u;
}

// The SO_BUSY_POLL the server's connected sockets carry, read once the
// client has logged on: what was applied, not what was asked for.
json busy_poll_read_back(pid_t server, int expected) {
  std::string why;
  const std::map<int, int> by_peer = read_server_busy_poll(server, why);
  if (by_peer.empty()) return {{"sockets", 0}, {"why", why.empty() ? "no connected socket found" : why}};
  std::map<int, int> counts;
  for (const auto& [peer, usecs] : by_peer) ++counts[usecs];
  json values = json::object();
  for (const auto& [usecs, n] : counts) values[std::to_string(usecs)] = n;
  return {{"sockets", by_peer.size()}, {"values", values}, {"matches", counts.size() == 1 && counts.count(expected)}};
}

// The server's CPU time over the client's life (connect, warm-up, runs) per
// order answered in it, and its memory as the client ended. A spinning server
// burns its core whatever the load: its CPU per order is then the core's time
// divided among the orders.
json server_json(const ClientRun& run, double orders) {
  const ServerUsage& b = run.server_before;
  const ServerUsage& e = run.server_after;
  json j = {{"rss_kb", e.rss_kb >= 0 ? json(e.rss_kb) : json()}, {"hwm_kb", e.hwm_kb >= 0 ? json(e.hwm_kb) : json()}};
  const bool cpu = b.cpu_s >= 0 && e.cpu_s >= b.cpu_s;
  j["cpu_s"] = cpu ? json(e.cpu_s - b.cpu_s) : json();
  j["cpu_us_per_order"] = cpu && orders > 0 ? json((e.cpu_s - b.cpu_s) * 1e6 / orders) : json();
  return j;
}

Attempt run_attempt(Context& c, const Cell& cell, std::size_t index, int attempt_no) {
  AttemptPlan plan = plan_attempt(c, cell, attempt_no);
  const CellProgress progress{c, cell, index, attempt_no};
  Attempt a;
  a.effective = plan.effective;
  Child server;
  if (!start_process(plan.server, "server", server, a)) return a;
  progress.show("starting server");
  if (!wait_for_server(c, plan, server, a)) return a;
  point_client_at_ready_port(plan, a);
  Child client;
  if (!start_process(plan.client, "client", client, a)) {
    server.stop(5.0);
    return a;
  }
  ClientRun run = supervise_client(progress, plan, server, client);
  judge_client_run(c, plan, run, a);
  return a;
}

}  // namespace

// SO_BUSY_POLL of a cell: --busy-poll-usecs on every kernel cell, else the machine file's for its model.
int cell_busy_poll(const Setup& c, const Cell& cell) {
  if (cell.transport != "kernel") return 0;
  return c.opt.busy_poll_usecs ? *c.opt.busy_poll_usecs : c.opt.machine.busy_poll_for(cell.transport, cell.model);
}

std::string cell_busy_poll_source(const Setup& c, const Cell& cell) {
  if (cell.transport == "kernel" && c.opt.busy_poll_usecs) return "--busy-poll-usecs";
  return c.opt.machine.busy_poll_source(cell.transport, cell.model);
}

// Builds the cell's specs; clears the files the last attempt left.
AttemptPlan plan_attempt(const Context& c, const Cell& cell, int attempt_no) {
  const Machine& m = c.opt.machine;
  AttemptPlan p;
  p.work = c.step ? c.dir + "/.work/" + c.step->dir + "/" + c.step->name
                  : c.dir + "/.work/" + cell.member() + "_" + cell.transport + "_" + cell.model + "_" + cell.loop;
  fs::create_directories(p.work + "/store");
  p.ready = p.work + "/ready";
  p.client_json = p.work + "/client.json";
  fs::remove(p.ready);
  fs::remove(p.client_json);
  p.sessions = c.step ? c.step->sessions : c.opt.matrix.sessions.at(cell.model);
  p.port = pick_free_port();
  p.net = endpoints_for(c, cell.transport);
  p.coordinator = m.coordinator ? *m.coordinator : m.server.front();
  p.allowed_server = allowed_server_cores(m, cell.model, p.coordinator);
  p.busy_poll = cell_busy_poll(c, cell);
  p.read_busy_poll = cell.transport == "kernel";
  p.store = plan_store(c, cell, p.store_conninfo);
  p.server = server_spec(c, cell, p);
  p.client = client_spec(c, cell, p);
  p.effective = effective_stamp(c, cell, p, attempt_no);
  return p;
}

std::string cell_prefix(std::size_t index, std::size_t total) {
  return "[cell " + std::to_string(index + 1) + "/" + std::to_string(total) + "] ";
}

// What the progress line calls a cell: its id, or a sweep step's label.
std::string cell_label(const Setup& c, const Cell& cell) { return c.step ? c.step->label : cell.id(); }

void CellProgress::show(const std::string& what) const {
  const Matrix& mx = c.opt.matrix;
  std::size_t left_cells = 1 + (index < c.to_run_after.size() ? c.to_run_after[index] : 0);
  double per = mx.warmup_s + mx.runs * mx.duration_s + 2.0;
  if (!c.cell_times.empty()) {
    double s = 0;
    for (double t : c.cell_times) s += t;
    per = s / static_cast<double>(c.cell_times.size());
  }
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, cell) +
                      (attempt_no > 1 ? " (attempt " + std::to_string(attempt_no) + ")" : "") + "  " + what +
                      "  elapsed " + hms(since(c.progress.start)) + "  left ~" +
                      hms(per * static_cast<double>(left_cells)),
                  false);
}

bool start_process(const SpawnSpec& spec, const char* what, Child& child, Attempt& a) {
  try {
    child = Child::spawn(spec);
    return true;
  } catch (const std::exception& e) {
    return fail(a, std::string(what) + " did not start: " + e.what());
  }
}

// Waits for the server's ready file, which holds the port it listens on.
// False when the server exited, the wait timed out, or the sitting was interrupted.
bool wait_for_server(const Setup& c, AttemptPlan& p, Child& server, Attempt& a) {
  const double timeout_s = c.opt.matrix.ready_timeout_s;
  auto t0 = Clock::now();
  while (true) {
    std::string r = read_text_or_empty(p.ready);
    if (!r.empty() && r.find('\n') != std::string::npos) {
      int port = std::atoi(r.c_str());
      if (port > 0) p.port = port;
      return true;
    }
    if (auto code = server.exit_code()) {
      std::string err = read_text_or_empty(p.work + "/server.err");
      auto pos = err.find("unsupported:");
      if (*code == 3 && pos != std::string::npos) {
        a.end = AttemptEnd::unsupported;
        a.reason = trim(err.substr(pos, err.find('\n', pos) - pos));
        return false;
      }
      return fail(a, "server exited with code " + std::to_string(*code) + " before it was ready: " + tail(err, 300));
    }
    if (stop_requested()) {
      server.stop(3.0);
      a.end = AttemptEnd::interrupted;
      return false;
    }
    if (since(t0) > timeout_s) {
      server.stop(3.0);
      return fail(a, "server not ready after " + num(timeout_s) +
                         " s (no ready file): " + tail(read_text_or_empty(p.work + "/server.err"), 300));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The client argv was built with the chosen port; the ready file is authoritative.
void point_client_at_ready_port(AttemptPlan& p, Attempt& a) {
  for (std::size_t i = 0; i + 1 < p.client.argv.size(); ++i)
    if (p.client.argv[i] == "--port") p.client.argv[i + 1] = std::to_string(p.port);
  a.effective["client_argv"] = p.client.argv;
}

// Audits both processes while the client measures, until it exits, the sitting
// is interrupted or its deadline passes; then stops both.
ClientRun supervise_client(const CellProgress& progress, const AttemptPlan& p, Child& server, Child& client,
                           bool stop_server) {
  const Context& c = progress.c;
  const Machine& m = c.opt.machine;
  const Matrix& mx = c.opt.matrix;
  AuditOptions ao;
  ao.measured = m.measured_cores();
  ao.interval_s = mx.audit_interval_s;
  ao.burn_fraction = mx.audit_burn_fraction;
  ao.ignore = {getpid()};
  if (c.pg && c.pg->running()) ao.services.push_back({"postgresql", c.pg->root(), c.pg->declared().cores});
  Audit audit({{"server", server.pid(), {}, p.allowed_server}, {"client", client.pid(), {}, m.client}}, ao);
  bool audit_started = false, read_back_done = false;
  // Threads pin themselves before their hot loops; judge them once they have.
  // A held server (paired rounds) pinned its threads long ago; only the new client's must settle.
  double audit_delay = stop_server ? std::max(0.3, std::min(mx.warmup_s * 0.5, 1.0)) : std::min(0.05, mx.warmup_s);
  ClientRun run;
  run.deadline_s = mx.warmup_s + mx.runs * mx.duration_s * 1.5 + 30.0 + p.sessions * 0.05;
  ClientStderr err;
  err.run_text = "run 0/" + std::to_string(mx.runs);
  run.server_before = server_usage(server.pid());
  auto started = Clock::now();
  while (true) {
    pollfd pfd{client.stderr_fd(), POLLIN, 0};
    poll(&pfd, 1, 100);
    err.drain(client.stderr_fd());
    if (c.opt.audit && !audit_started && since(started) >= audit_delay) {
      audit.start();
      audit_started = true;
    }
    // Read during the warm-up, never the measured runs; again each tick until a session's socket is there.
    if (p.read_busy_poll && !read_back_done && since(started) >= std::min(audit_delay, mx.warmup_s * 0.5)) {
      run.busy_poll_read_back = busy_poll_read_back(server.pid(), p.busy_poll);
      read_back_done = run.busy_poll_read_back.value("sockets", 0) > 0 || since(started) >= mx.warmup_s;
    }
    if (client.exit_code()) break;
    if (stop_requested()) {
      run.interrupted = true;
      break;
    }
    if (since(started) > run.deadline_s) {
      run.timed_out = true;
      break;
    }
    progress.show(err.run_text);
  }
  if (audit_started) run.audit = audit.stop();
  run.audit.enabled = c.opt.audit;
  run.server_after = server_usage(server.pid());
  run.client_code = client.exit_code() ? *client.exit_code() : client.stop(3.0);
  err.drain(client.stderr_fd());
  run.err = err.text + err.partial;
  run.server_code = stop_server ? server.stop(5.0) : 0;
  write_text_atomic(p.work + "/client.err", run.err);
  return run;
}

// The attempt's end from how the client ended and what it wrote, judged by the audit.
void judge_client_run(const Setup& c, const AttemptPlan& p, const ClientRun& run, Attempt& a) {
  if (run.interrupted) {
    a.end = AttemptEnd::interrupted;
    return;
  }
  if (run.timed_out) {
    fail(a, "client still running after " + num(run.deadline_s) + " s; stopped: " + tail(run.err, 300));
    return;
  }
  if (run.client_code != 0) {
    fail(a, "client exited with code " + std::to_string(run.client_code) + ": " + tail(run.err, 300));
    return;
  }
  json r;
  try {
    r = json::parse(read_text(p.client_json));
  } catch (const std::exception& e) {
    fail(a, std::string("client result unreadable: ") + e.what());
    return;
  }
  if (!r.is_object() || !r.contains("summary") || !r.contains("runs")) {
    fail(a, "client result lacks summary or runs");
    return;
  }
  a.result = std::move(r);
  a.result["audit"] = run.audit.to_json();
  a.result["server_exit_code"] = run.server_code;
  a.result["server"] = server_json(run, a.result.value("orders_total", 0.0));
  if (p.read_busy_poll) {
    json bp = {{"usecs", p.busy_poll}, {"from", a.effective.value("busy_poll_from", "")}};
    bp["read_back"] = run.busy_poll_read_back.is_null() ? json({{"sockets", 0}, {"why", "the client ended first"}})
                                                        : run.busy_poll_read_back;
    a.result["busy_poll"] = bp;
  }
  a.end = (c.opt.audit && !run.audit.passed()) ? AttemptEnd::refused : AttemptEnd::measured;
  a.reason = c.opt.audit ? run.audit.reason() : "audit disabled";
}

Attempts run_attempts(Context& c, const Cell& cell, std::size_t index) {
  const int most = c.opt.matrix.attempts;
  auto cell_start = Clock::now();
  Attempts t;
  int attempt = 1;
  for (; attempt <= most; ++attempt) {
    t.last = run_attempt(c, cell, index, attempt);
    if (t.last.end != AttemptEnd::error) break;
    t.failures.push_back("attempt " + std::to_string(attempt) + ": " + t.last.reason);
    if (stop_requested()) break;
  }
  t.made = std::min(attempt, most);
  t.interrupted = t.last.end == AttemptEnd::interrupted || (t.last.end == AttemptEnd::error && stop_requested());
  if (!t.interrupted) c.cell_times.push_back(since(cell_start));
  return t;
}

}  // namespace kite::lab::detail
