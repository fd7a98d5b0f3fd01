#include "kite/lab/sitting.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "kite/lab/audit.hpp"
#include "kite/lab/check.hpp"
#include "kite/lab/hold.hpp"
#include "kite/lab/install.hpp"
#include "kite/lab/method.hpp"
#include "kite/lab/pairing.hpp"
#include "kite/lab/process.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/services.hpp"
#include "kite/lab/tls.hpp"
#include "kite/lab/util.hpp"
#include "kite/lab/wire.hpp"

#include "kite/bench/result.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace kite::lab {

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string hms(double s) {
  int t = static_cast<int>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
  return buf;
}

std::string rel(const std::string& path, const std::string& base) {
  std::error_code ec;
  fs::path r = fs::relative(fs::absolute(path), fs::absolute(base), ec);
  if (ec || r.empty() || r.string().rfind("..", 0) == 0) return path;
  return r.string();
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string tail(const std::string& s, std::size_t n) {
  std::string t = trim(s);
  return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

bool done_state(CellState s) { return s == CellState::measured || s == CellState::refused || s == CellState::marked; }

bool pool_or_shard(const std::string& model) { return model == "pool" || model == "shard"; }

// The files a sitting runs (binaries) or that define a flavour (artifacts),
// hashed at start and before every cell.
struct Binary {
  std::string path, sha256, version;
  std::vector<std::string> used_by;  ///< "client", "server:<flavour>", "artifact:<flavour>"
  bool run = false;                  ///< started as a program (so asked for --version)
};

// A flavour's check-flavour run at the start of the sitting, or why there was none.
struct FlavourCheck {
  bool ran = false;
  std::string why_not;  ///< when it did not run: "--no-check", "unbuilt", "no cell to run"
  CheckReport report;
  double seconds = 0;
  std::vector<std::string> transports, models;  ///< what it played
  std::string log;                              ///< its lines, relative to the sitting's folder
  bool failed() const { return ran && report.failed > 0; }
  std::string outcome() const { return !ran ? "not run: " + why_not : failed() ? "failed" : "passed"; }
};

std::string ask_version(const std::string& path) {
  CommandResult r = run_command({path, "--version"}, 5.0);
  std::string out = trim(r.output);
  if (r.code != 0 || out.empty())
    return "unavailable: '" + fs::path(path).filename().string() + " --version' exited " + std::to_string(r.code);
  return out.substr(0, 800);
}

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

struct Progress {
  bool enabled = true;
  bool tty = isatty(2) != 0;
  Clock::time_point start = Clock::now();
  std::size_t total = 0;
  std::string last;
  void show(const std::string& line, bool force) {
    if (!enabled) return;
    if (tty) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      if (force) std::fprintf(stderr, "\n");
    } else if (force || line != last) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
    last = line;
  }
};

struct Context {
  explicit Context(SittingOptions& o) : opt(o) {}
  SittingOptions& opt;
  std::map<std::string, Flavour> flavours;
  std::string dir, host, sitting;
  std::map<std::string, Binary> binaries;      // by absolute path
  Workers workers;                             // of pool and shard cells
  std::map<std::string, FlavourCheck> checks;  // by flavour
  std::string client_path;
  SittingInstalls installed;  ///< the installs measured instead of the build tree (--installed)
  int busy_poll = 0;
  std::string idle, network;
  std::unique_ptr<NetnsPair> netns;
  std::unique_ptr<WirePath> wire;  ///< the nic path's interfaces, moved into namespaces
  json sitting_stamp;
  Progress progress;
  std::vector<double> cell_times;
  std::vector<std::size_t> to_run_after;  ///< cells left to run (not marked, not done) after cell i
  const Step* step = nullptr;             ///< a stepped sitting's (a sweep's) current step; null in a sitting
  LabCertificates tls;                    ///< the tls cells' certificates, made at the start (.work/tls)
  std::uint64_t pairing_seed = 0;         ///< paired rounds' orders and intervals (recorded in sitting.json)
  std::unique_ptr<PgService> pg;          ///< [services.postgresql], started when a cell to run needs it
};

// How an attempt at a cell ended: measured or refused (a result to record), or why there is none.
enum class AttemptEnd { measured, refused, error, unsupported, interrupted };

struct Attempt {
  AttemptEnd end = AttemptEnd::error;
  std::string reason;
  json result;     ///< measured, refused: the client's result with the audit's
  json effective;  ///< what ran (the "effective" part of the cell's stamp)
};

// Ends an attempt in error; false, for the step that failed to return.
bool fail(Attempt& a, std::string reason) {
  a.end = AttemptEnd::error;
  a.reason = std::move(reason);
  return false;
}

std::string flavour_binary(const Context& c, const Flavour& f) { return find_executable(f.binary, c.opt.build_dir); }

// stamp.effective's record of where a binary the cell ran comes from.
json build_of(const Context& c, const Install* install, const std::string& path) {
  std::string abs = fs::absolute(path).lexically_normal().string();
  auto it = c.binaries.find(abs);
  return build_origin(install, rel(abs, c.opt.source_dir), it == c.binaries.end() ? "" : it->second.sha256);
}

// A sitting of installs (--installed, or the matrix's `installed`): each
// flavour's files and the client become the copies in its install.
void use_installs(Context& c) {
  const SittingOptions& opt = c.opt;
  if (!opt.installed && !opt.matrix.installed) return;
  c.installed = choose_installs(opt.results_dir, opt.machine.name, opt.matrix.flavours, opt.pinned_installs);
  for (auto& [name, f] : c.flavours) point_at_install(f, *c.installed.server(name));
  if (c.installed.client) c.client_path = c.installed.client->binary;
}

// SO_BUSY_POLL of a cell: --busy-poll-usecs on every kernel cell, else the machine file's for its model.
int cell_busy_poll(const Context& c, const Cell& cell) {
  if (cell.transport != "kernel") return 0;
  return c.opt.busy_poll_usecs ? *c.opt.busy_poll_usecs : c.opt.machine.busy_poll_for(cell.transport, cell.model);
}

std::string cell_busy_poll_source(const Context& c, const Cell& cell) {
  if (cell.transport == "kernel" && c.opt.busy_poll_usecs) return "--busy-poll-usecs";
  return c.opt.machine.busy_poll_source(cell.transport, cell.model);
}

// The launcher settings of a transport (the stamp's `launcher`, what compare
// names): the machine file's environment (EF_*, VMA_*), onload's profile, the
// core of libvma's thread. Null for transports without a launcher.
json launcher_settings(const Machine& m, const std::string& transport) {
  if (transport != "onload" && transport != "vma" && transport != "socketxtreme") return nullptr;
  json l = {{"env", m.launcher_env(transport)}};
  if (transport == "onload") {
    l["command"] = "onload";
    l["profile"] = m.onload_profile;
  } else {
    l["preload"] = "libvma.so";
    l["vma_internal_thread_core"] = m.vma_internal_thread_core ? json(*m.vma_internal_thread_core) : json(nullptr);
    if (transport == "socketxtreme") l["env"]["VMA_SOCKETXTREME"] = "1";
  }
  return l;
}

json effective_transport(const Context& c, const std::string& transport, int busy_poll) {
  const Machine& m = c.opt.machine;
  json t = {{"name", transport}};
  if (transport == "kernel") t["busy_poll_usecs"] = busy_poll;
  if (transport == "uring") t["sqpoll"] = m.uring_sqpoll;
  if (json l = launcher_settings(m, transport); !l.is_null()) {
    t["env"] = l["env"];
    if (l.contains("profile")) t["profile"] = l["profile"];
    if (l.contains("vma_internal_thread_core")) t["vma_internal_thread_core"] = l["vma_internal_thread_core"];
  }
  return t;
}

// Launcher prefix and environment for transports that take over an unchanged
// binary (socketxtreme's API is libvma's too, switched on at run time).
void apply_preload(const Context& c, const std::string& transport, std::vector<std::string>& argv,
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

// Where the server listens and the client connects, and the namespaces they run in.
struct Endpoints {
  std::string bind = "127.0.0.1", host = "127.0.0.1";
  std::string server_ns, client_ns;
};

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

// The cell's wire: the pair it crosses, its interfaces and their offloads (null off the nic path).
json cell_wire(const Context& c, const std::string& transport) {
  const NicPair* p = c.network == "nic" ? c.opt.machine.nic_for(transport) : nullptr;
  if (!p) return nullptr;
  const std::string pfx = "/" + std::to_string(p->prefix);
  return {{"pair", p->name},
          {"server", {{"interface", p->server_if}, {"address", p->server_addr + pfx}}},
          {"client", {{"interface", p->client_if}, {"address", p->client_addr + pfx}}},
          {"offloads", c.wire ? c.wire->offloads_of(p->name) : ""}};
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

// One attempt at a cell as planned before anything starts: its files, both processes and the stamp of what runs.
struct AttemptPlan {
  std::string work;         ///< the cell's scratch folder
  std::string ready;        ///< the server writes its port here once it listens
  std::string client_json;  ///< the client's result
  int port = 0;
  int sessions = 0;
  int coordinator = 0;
  int busy_poll = 0;  ///< the kernel transport's; 0 for the others
  bool read_busy_poll = false;  ///< kernel cells: read the server's SO_BUSY_POLL back while the client runs
  std::string store_conninfo;   ///< a postgresql store's database, made for this attempt
  json store;                   ///< stamp.effective.store: the setting, kind, policy and database
  Endpoints net;
  CoreSet allowed_server;
  SpawnSpec server, client;
  json effective;
};

// The store setting a cell runs with: its own (pair_on = "store"), else the matrix's.
std::string cell_store(const Context& c, const Cell& cell) {
  return cell.store.empty() ? c.opt.matrix.store : cell.store;
}

// The value of every placeholder of the flavour's args for this attempt.
ServerStart server_start(const Context& c, const Cell& cell, const AttemptPlan& p) {
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

SpawnSpec server_spec(const Context& c, const Cell& cell, const AttemptPlan& p) {
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

SpawnSpec client_spec(const Context& c, const Cell& cell, const AttemptPlan& p) {
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

json effective_stamp(const Context& c, const Cell& cell, const AttemptPlan& p, int attempt_no) {
  const Machine& m = c.opt.machine;
  return {
      {"server_argv", p.server.argv},
      {"server_env", p.server.env},
      {"client_argv", p.client.argv},
      {"client_env", p.client.env},
      {"network", c.network},
      {"bind", p.net.bind},
      {"server_netns", p.net.server_ns},
      {"client_netns", p.net.client_ns},
      {"offloads", c.netns  ? c.netns->offloads()
                   : c.wire ? cell_wire(c, cell.transport).value("offloads", "")
                            : ""},
      {"wire", cell_wire(c, cell.transport)},
      {"launcher", launcher_settings(m, cell.transport)},
      {"cores",
       {{"server", format_core_list(m.server)},
        {"server_allowed", format_core_list(p.allowed_server)},
        {"coordinator", p.coordinator},
        {"coordinator_shared", !m.coordinator.has_value()},
        {"client", format_core_list(m.client)}}},
      {"transport", effective_transport(c, cell.transport, p.busy_poll)},
      {"busy_poll_usecs", p.busy_poll},
      {"busy_poll_from", cell_busy_poll_source(c, cell)},
      {"idle", c.idle},
      {"store", p.store},
      {"sessions", p.sessions},
      {"workers", c.workers.count},
      {"cannot", c.flavours.at(cell.flavour).cannot},
      {"attempt", attempt_no},
      {"server_build", build_of(c, c.installed.server(cell.flavour), flavour_binary(c, c.flavours.at(cell.flavour)))},
      {"client_build", build_of(c, c.installed.client ? &*c.installed.client : nullptr, c.client_path)},
  };
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
std::string cell_label(const Context& c, const Cell& cell) { return c.step ? c.step->label : cell.id(); }

// The running cell's progress line: what it does, the time spent, and the
// time left at the mean cell time so far (the planned time before any).
struct CellProgress {
  Context& c;
  const Cell& cell;
  std::size_t index;
  int attempt_no;

  void show(const std::string& what) const {
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
};

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
bool wait_for_server(const Context& c, AttemptPlan& p, Child& server, Attempt& a) {
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

// The server's CPU time (all its threads) and memory, read from /proc while it runs.
struct ServerUsage {
  double cpu_s = -1;              ///< utime + stime
  long rss_kb = -1, hwm_kb = -1;  ///< VmRSS, VmHWM
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

// What supervising the client saw; both processes have ended.
struct ClientRun {
  ServerUsage server_before, server_after;  ///< as the client started, and as it ended
  int client_code = 0, server_code = 0;
  bool interrupted = false, timed_out = false;
  double deadline_s = 0;
  std::string err;  ///< the client's stderr
  AuditReport audit;
  json busy_poll_read_back;  ///< the server's SO_BUSY_POLL as read from its sockets (kernel cells)
};

// The SO_BUSY_POLL the server's connected sockets carry, read once the
// client has logged on: what was applied, not what was asked for.
json busy_poll_read_back(pid_t server, int expected) {
  std::string why;
  const std::map<int, int> by_peer = read_server_busy_poll(server, why);
  if (by_peer.empty())
    return {{"sockets", 0}, {"why", why.empty() ? "no connected socket found" : why}};
  std::map<int, int> counts;
  for (const auto& [peer, usecs] : by_peer) ++counts[usecs];
  json values = json::object();
  for (const auto& [usecs, n] : counts) values[std::to_string(usecs)] = n;
  return {{"sockets", by_peer.size()}, {"values", values}, {"matches", counts.size() == 1 && counts.count(expected)}};
}

// Audits both processes while the client measures, until it exits, the sitting
// is interrupted or its deadline passes; then stops both.
ClientRun supervise_client(const CellProgress& progress, const AttemptPlan& p, Child& server, Child& client,
                           bool stop_server = true) {
  const Context& c = progress.c;
  const Machine& m = c.opt.machine;
  const Matrix& mx = c.opt.matrix;
  AuditOptions ao;
  ao.measured = m.measured_cores();
  ao.interval_s = mx.audit_interval_s;
  ao.burn_fraction = mx.audit_burn_fraction;
  ao.ignore = {getpid()};
  if (c.pg && c.pg->running())
    ao.services.push_back({"postgresql", c.pg->root(), c.pg->declared().cores});
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

// The attempt's end from how the client ended and what it wrote, judged by the audit.
void judge_client_run(const Context& c, const AttemptPlan& p, const ClientRun& run, Attempt& a) {
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

// A result's `cell`: the four parts, and `store` when the cell has a store of its own (pair_on = "store").
json cell_json(const Cell& cell) {
  json j = {{"flavour", cell.flavour}, {"transport", cell.transport}, {"model", cell.model}, {"loop", cell.loop}};
  if (!cell.store.empty()) j["store"] = cell.store;
  return j;
}

json cell_base(const Cell& cell) { return {{"schema", 1}, {"cell", cell_json(cell)}}; }

json workers_json(const Workers& w) {
  return {{"count", w.count}, {"server_cores", w.server_cores}, {"from", w.from()}};
}

// A flavour's check as sitting.json keeps it (`full`) or as each of its cells' results repeat it.
json check_json(const Context& c, const std::string& flavour, bool full) {
  auto it = c.checks.find(flavour);
  const FlavourCheck fc = it == c.checks.end() ? FlavourCheck{} : it->second;
  json j = {{"enabled", c.opt.check}, {"outcome", fc.outcome()}};
  if (!fc.ran) return j;
  j["passed"] = fc.report.passed;
  j["failed"] = fc.report.failed;
  j["skipped"] = fc.report.skipped;
  if (!full) return j;
  json failing = json::array();
  for (const auto& l : fc.report.lines)
    if (l.status == CheckStatus::fail) failing.push_back(l.text());
  j["failing"] = failing;
  j["transports"] = fc.transports;
  j["models"] = fc.models;
  j["seconds"] = std::round(fc.seconds * 10) / 10;
  j["log"] = fc.log;
  return j;
}

// Writes a cell's result with what every result of the sitting says: its
// flavour's check and, for pool and shard, how many workers and why.
void write_cell(const Context& c, const Cell& cell, json j) {
  j["cell"] = cell_json(cell);  // the client names the cell by its id: the lab's parts replace it
  j["lab"]["check"] = check_json(c, cell.flavour, false);
  j["method"] = method_for(c.opt.matrix.pairing);
  if (c.opt.matrix.pairing == "rounds" && !j.contains("pairing"))
    j["pairing"] = {{"mode", "sequential"}, {"reason", "the only flavour of its group that ran"}};
  if (pool_or_shard(cell.model)) j["lab"]["workers"] = workers_json(c.workers);
  const std::string path =
      c.step ? c.dir + "/" + c.step->dir + "/" + c.step->name + ".json" : c.dir + "/" + cell.file_name();
  if (c.step) fs::create_directories(fs::path(path).parent_path());
  write_text_atomic(path, j.dump(1));
}

// Every binary and artifact of the sitting, hashed now; a missing one is left out.
std::map<std::string, Binary> hash_binaries(const Context& c) {
  std::map<std::string, Binary> out;
  auto add = [&](const std::string& path, const std::string& user, bool run) {
    if (path.empty()) return;
    std::string abs = fs::absolute(path).lexically_normal().string();
    Binary& b = out[abs];
    b.path = abs;
    b.used_by.push_back(user);
    b.run = b.run || run;
  };
  add(c.client_path, "client", true);
  for (const auto& [n, f] : c.flavours) {
    add(flavour_binary(c, f), "server:" + n, true);
    for (const auto& a : f.artifacts) add(find_artifact(a, c.opt.build_dir), "artifact:" + n, false);
  }
  for (auto& [p, b] : out) b.sha256 = sha256_file(p);
  return out;
}

json binaries_json(const Context& c) {
  json j = json::object();
  for (const auto& [p, b] : c.binaries) {
    json& e = j[rel(p, c.opt.source_dir)];
    e = {{"sha256", b.sha256}, {"used_by", b.used_by}};
    if (b.run) e["version"] = b.version;
  }
  return j;
}

// What changed since the sitting started: a binary or artifact ("" when nothing).
std::string changed_binary(const Context& c, const std::map<std::string, Binary>& now) {
  for (const auto& [p, b] : c.binaries) {
    auto it = now.find(p);
    std::string h = it == now.end() ? "" : it->second.sha256;
    if (h != b.sha256)
      return rel(p, c.opt.source_dir) + " changed during the sitting (sha256 " + b.sha256.substr(0, 12) +
             " at start, " + (h.empty() ? std::string("now unreadable") : h.substr(0, 12) + " now") + ")";
  }
  return "";
}

json git_stamp(const std::string& src) {
  CommandResult rev = run_command({"git", "-C", src, "rev-parse", "HEAD"}, 10.0);
  CommandResult st = run_command({"git", "-C", src, "status", "--porcelain", "--untracked-files=no"}, 10.0);
  return {{"revision", rev.code == 0 ? trim(rev.output) : "unknown"},
          {"dirty", st.code == 0 && !trim(st.output).empty()}};
}

void fill_defaults(SittingOptions& opt) {
  if (opt.results_dir.empty()) opt.results_dir = opt.source_dir + "/results";
  if (opt.flavours_dir.empty()) opt.flavours_dir = opt.source_dir + "/lab/flavours";
  if (opt.client_binary.empty()) opt.client_binary = opt.build_dir + "/bench_roundtrip";
}

// The sitting's folder: the one to resume (given, or found under the sitting's name), else a new one.
std::string sitting_dir(SittingOptions& opt) {
  if (opt.resume_dir.empty() && !opt.sitting_name.empty()) {
    std::string candidate = opt.results_dir + "/" + opt.machine.name + "/" + opt.sitting_name;
    if (fs::exists(candidate + "/sitting.json")) opt.resume_dir = candidate;
  }
  if (!opt.resume_dir.empty()) return opt.resume_dir;
  std::string name = opt.sitting_name.empty() ? utc_now_compact() : opt.sitting_name;
  return opt.results_dir + "/" + opt.machine.name + "/" + name;
}

// The stamp of the sitting to resume. A resumed sitting runs with the files
// and overrides it started with: they replace those of the options.
json resume_stamp(SittingOptions& opt, const std::string& dir) {
  json previous;
  try {
    previous = json::parse(read_text(dir + "/sitting.json"));
  } catch (const std::exception& e) {
    throw ConfigError(dir + ": cannot resume: sitting.json unreadable: " + e.what());
  }
  opt.machine = parse_machine(previous.at("machine_file").get<std::string>(),
                              previous.at("machine_source").get<std::string>() + " (recorded)");
  opt.matrix = parse_matrix(previous.at("matrix_file").get<std::string>(),
                            previous.at("matrix_source").get<std::string>() + " (recorded)");
  const json& ov = previous.value("overrides", json::object());
  if (ov.contains("installed")) opt.installed = ov["installed"].get<bool>();
  opt.pinned_installs = pinned_installs(previous.value("installs", json::array()));
  if (ov.contains("busy_poll_usecs")) opt.busy_poll_usecs = ov["busy_poll_usecs"].get<int>();
  if (ov.contains("idle")) opt.idle = ov["idle"].get<std::string>();
  if (ov.contains("network")) opt.network = ov["network"].get<std::string>();
  if (ov.contains("cells")) opt.cells = ov["cells"].get<std::vector<std::string>>();
  if (ov.contains("one_sitting_per_cell")) opt.series = ov["one_sitting_per_cell"].get<std::string>();
  if (ov.contains("audit")) opt.audit = ov["audit"].get<bool>();
  if (ov.contains("check")) opt.check = ov["check"].get<bool>();
  return previous;
}

// The nic path runs between interfaces of this host's machine file.
void check_nics(const Machine& m) {
  if (m.nics.empty()) throw ConfigError(m.source_name + ": network.nic: the nic path needs [[network.nic]] pairs");
  for (const auto& p : m.nics)
    for (const auto& i : {p.server_if, p.client_if})
      if (!fs::exists("/sys/class/net/" + i))
        throw ConfigError(m.source_name + ": network.nic." + p.name + ": interface '" + i +
                          "' does not exist on this host; this machine file describes another host "
                          "(use --machine local or --network loopback|netns here)");
}

// Puts back what a sitting that died left on the wire (the results folder's
// wire-state.json) before anything looks at the interfaces. A wire held by a
// running sitting stops this one when it takes the nic path too; one that
// cannot be put back stops any sitting, since removing the namespaces it is
// in would lose it.
WireRestore restore_wire_at_start(const SittingOptions& opt) {
  const std::string file = wire_state_path(opt.results_dir);
  WireRestore r = restore_wire(file);
  if (!r.found) return r;
  const std::string network = opt.network ? *opt.network : opt.machine.network;
  if (r.held) {
    if (network == "nic")
      throw ConfigError("network path nic: the interfaces are held by a running sitting (" + r.owner + "; " + file +
                        ")");
    return r;
  }
  for (const auto& d : r.done)
    std::fprintf(stderr, "bench-run: wire: put back what a stopped sitting (%s) moved: %s\n", r.owner.c_str(),
                 d.c_str());
  if (!r.failed.empty())
    throw ConfigError(file + ": what a stopped sitting (" + r.owner +
                      ") moved cannot all be put back: " + join(r.failed, "; ") +
                      " (the file and its namespaces are kept: put the interfaces back by hand, then remove the file)");
  return r;
}

// The settings every cell shares, checked; throws ConfigError for a wrong one.
// The tls cells' CA and server certificate, made fresh in the sitting's
// folder for every address a server may bind (loopback, the netns server,
// the NIC pairs'). Nothing is made when no cell is tls.
void make_certificates(Context& c, const std::vector<Cell>& cells) {
  if (std::none_of(cells.begin(), cells.end(), [](const Cell& x) { return x.transport == "tls"; })) return;
  const Machine& m = c.opt.machine;
  std::vector<std::string> addresses = {m.netns_server_addr};
  for (const auto& n : m.nics) addresses.push_back(n.server_addr);
  try {
    c.tls = make_lab_certificates(c.dir + "/.work/tls", addresses);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
}

void set_up_context(Context& c, const std::string& dir) {
  const SittingOptions& opt = c.opt;
  c.dir = dir;
  c.host = opt.machine.name;
  c.sitting = fs::path(dir).filename().string();
  c.progress.enabled = opt.progress;
  c.flavours = load_flavours(opt.flavours_dir, opt.matrix.flavours);
  c.busy_poll = opt.busy_poll_usecs ? *opt.busy_poll_usecs : opt.machine.kernel_busy_poll_usecs;
  c.idle = opt.idle ? *opt.idle : opt.matrix.idle;
  c.network = opt.network ? *opt.network : opt.machine.network;
  if (c.idle != "spin" && c.idle != "block") throw ConfigError("--idle: must be spin or block, not '" + c.idle + "'");
  if (c.network != "loopback" && c.network != "netns" && c.network != "nic")
    throw ConfigError("--network: must be loopback, netns or nic, not '" + c.network + "'");
  if (c.network == "nic") check_nics(opt.machine);
  if (c.network == "netns" && geteuid() != 0)
    throw ConfigError("network path netns needs root (network namespaces and a veth pair)");
  if (c.network == "nic" && geteuid() != 0)
    throw ConfigError("network path nic needs root (it moves the pairs' interfaces into two network namespaces)");
  c.client_path = find_executable(opt.client_binary, "");
  if (c.client_path.empty()) c.client_path = opt.client_binary;
  c.workers = workers_for(opt.matrix, opt.machine);
  if (std::string why = missing_services(opt.matrix, opt.machine); !why.empty()) throw ConfigError(why);
}

// For the progress line's time left: how many cells after each one will run
// (not marked, not done before, their flavour's check not failed).
void count_cells_to_run(Context& c, const std::vector<Cell>& cells) {
  c.progress.total = cells.size();
  c.to_run_after.assign(cells.size(), 0);
  for (std::size_t i = cells.size(); i-- > 1;) {
    auto check = c.checks.find(cells[i].flavour);
    bool runs = marker_for(cells[i], c.opt.machine, c.flavours.at(cells[i].flavour), c.workers).empty() &&
                !fs::exists(c.dir + "/" + cells[i].file_name()) && (check == c.checks.end() || !check->second.failed());
    c.to_run_after[i - 1] = c.to_run_after[i] + (runs ? 1 : 0);
  }
}

// Why a sitting cannot be resumed with the binaries there are now ("" when it can).
std::string resume_refusal(const Context& c, const json& previous) {
  const json& was = previous.value("binaries", json::object());
  for (const auto& [p, b] : c.binaries) {
    std::string key = rel(p, c.opt.source_dir);
    std::string then = was.contains(key) ? was[key].value("sha256", "") : "";
    if (!then.empty() && then != b.sha256)
      return "cannot resume " + c.dir + ": " + key + " is not the " + (b.run ? "binary" : "artifact") +
             " the sitting started with (sha256 " + then.substr(0, 12) + " then, " + b.sha256.substr(0, 12) +
             " now); start a new sitting";
  }
  return "";
}

json overrides_json(const SittingOptions& opt) {
  json overrides = json::object();
  if (opt.busy_poll_usecs) overrides["busy_poll_usecs"] = *opt.busy_poll_usecs;
  if (opt.idle) overrides["idle"] = *opt.idle;
  if (opt.network) overrides["network"] = *opt.network;
  if (opt.cells) overrides["cells"] = *opt.cells;
  if (!opt.series.empty()) overrides["one_sitting_per_cell"] = opt.series;
  if (opt.installed) overrides["installed"] = true;
  if (!opt.audit) overrides["audit"] = false;
  if (!opt.check) overrides["check"] = false;
  return overrides;
}

// sitting.json as the sitting starts (or resumes): the host, the binaries, the inputs, the settings.
json start_stamp(const Context& c, const json& previous) {
  const SittingOptions& opt = c.opt;
  json stamp = previous.is_null() ? json::object() : previous;
  stamp["schema"] = 1;
  stamp["sitting"] = c.sitting;
  stamp["host"] = host_name();
  stamp["machine"] = opt.machine.name;
  stamp["kernel"] = host_kernel();
  stamp["cpu_model"] = opt.machine.cpu_model;
  stamp["epoch"] = opt.machine.epoch;
  const CpuIdentity& cpu = opt.machine.cpu;
  stamp["cpu"] = {{"vendor", cpu.vendor},
                  {"family", cpu.family},
                  {"model", cpu.model},
                  {"stepping", cpu.stepping},
                  {"features", cpu.features}};
  if (opt.matrix.pairing == "rounds") {
    const Matrix::Rounds& r = opt.matrix.rounds;
    stamp["pairing"] = {{"mode", "rounds"},           {"reference", r.reference},   {"target", r.target},
                        {"resolution", r.resolution}, {"min_rounds", r.min_rounds}, {"max_rounds", r.max_rounds},
                        {"budget_rounds", r.budget_rounds > 0 ? r.budget_rounds : r.max_rounds},
                        {"seed", c.pairing_seed}};
  }
  stamp["method"] = {{"version", method_for(opt.matrix.pairing)},
                     {"summary", method_summary_for(opt.matrix.pairing)}};
  stamp["binaries"] = binaries_json(c);
  stamp["installs"] = installs_json(c.installed);
  stamp["lab_build"] = {{"compiler", lab_compiler()}, {"flags", lab_build_flags()}};
  stamp["git"] = git_stamp(opt.source_dir);
  stamp["sysctls"] = host_latency_sysctls();
  stamp["provenance"] = host_provenance(opt.machine, opt.host_sources);
  stamp["online_cores"] = format_core_list(host_online_cores());
  stamp["machine_notes"] = opt.machine.notes;
  if (!opt.machine.coordinator)
    stamp["machine_notes"].push_back("no coordinator core: the pool's front door shares the first server core");
  if (previous.is_null()) stamp["start"] = utc_now_iso();
  stamp["resumed"] = previous.is_null() ? json::array() : previous.value("resumed", json::array());
  if (!previous.is_null()) stamp["resumed"].push_back(utc_now_iso());
  stamp["end"] = nullptr;
  stamp["machine_source"] = opt.machine.source_name;
  stamp["machine_file"] = opt.machine.source_text;
  stamp["matrix_source"] = opt.matrix.source_name;
  stamp["matrix_file"] = opt.matrix.source_text;
  stamp["overrides"] = overrides_json(opt);
  json by_model = json::object();  // what each model's kernel cells are given (an override gives them all one value)
  for (const auto& model : kModels) by_model[model] = cell_busy_poll(c, {"", "kernel", model, ""});
  stamp["effective"] = {{"busy_poll_usecs", c.busy_poll},
                        {"busy_poll_by_model", by_model},
                        {"idle", c.idle},
                        {"network", c.network},
                        {"audit", opt.audit},
                        {"check", opt.check},
                        {"workers", workers_json(c.workers)}};
  // What the launchers are given (compare names any that differs), whether or not this host has the stack.
  json launchers = json::object();
  for (const char* t : {"onload", "vma", "socketxtreme"}) launchers[t] = launcher_settings(opt.machine, t);
  stamp["effective"]["launchers"] = launchers;
  const auto& vt = opt.machine.vma_internal_thread_core;
  stamp["vma_internal_thread"] = vt ? json{{"core", *vt},
                                           {"env", "VMA_INTERNAL_THREAD_AFFINITY=" + std::to_string(*vt)},
                                           {"reserved", format_core_list(opt.machine.reserved)},
                                           {"applies_to", {"vma", "socketxtreme"}}}
                                    : json(nullptr);
  stamp["command_line"] = opt.command_line;
  json flv = json::object();
  for (const auto& [n, f] : c.flavours) flv[n] = read_text_or_empty(f.source_name);
  stamp["flavour_files"] = flv;
  return stamp;
}

// The part of sitting.json every cell's stamp repeats.
json cell_sitting_stamp(const Context& c, const json& stamp) {
  return {{"sitting", c.sitting},     {"machine", c.opt.machine.name}, {"epoch", c.opt.machine.epoch},
          {"git", stamp["git"]},      {"binaries", stamp["binaries"]}, {"host", stamp["host"]},
          {"kernel", stamp["kernel"]},
          {"host_warnings", stamp["provenance"]["warnings"]}};
}

// Removes what crashed sittings left, then brings up this sitting's namespaces when it runs in them.
void set_up_network(Context& c, json& stamp) {
  // Leftovers of a crashed sitting (what 'bench-run cleanup' removes), only those whose lab is gone.
  if (auto removed = remove_orphaned_namespaces(); !removed.empty()) {
    std::fprintf(stderr, "bench-run: removed %zu network namespace(s)/link(s) left by a crashed sitting: %s\n",
                 removed.size(), join(removed).c_str());
  }
  if (c.network != "netns" && c.network != "nic") return;
  // The tag keeps names short (interface names have 15 characters) and unique per lab process.
  std::string tag = std::to_string(getpid() % 1000000);
  const Machine& m = c.opt.machine;
  if (c.network == "nic") {
    c.wire = std::make_unique<WirePath>(m, tag, wire_state_path(c.opt.results_dir), c.dir);
    c.wire->up();
    stamp["wire"] = c.wire->record();
    stamp["netns"] = {{"server", c.wire->server_ns()}, {"client", c.wire->client_ns()}};
  } else {
    c.netns = std::make_unique<NetnsPair>(tag, m.netns_server_addr, m.netns_client_addr, m.netns_prefix);
    c.netns->up();
    stamp["netns"] = {
        {"server", c.netns->server_ns()}, {"client", c.netns->client_ns()}, {"offloads", c.netns->offloads()}};
  }
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
}

// Takes the sitting's network down: the netns pair removed, the wire's
// interfaces put back where they were (recorded under wire.restored).
void take_down_network(Context& c, json* stamp) {
  if (c.netns) c.netns->down();
  if (!c.wire || !c.wire->is_up()) return;
  c.wire->down();
  const WireRestore& r = c.wire->restored();
  for (const auto& f : r.failed) std::fprintf(stderr, "bench-run: wire: NOT put back: %s\n", f.c_str());
  if (stamp && stamp->contains("wire"))
    (*stamp)["wire"]["restored"] = {{"at", utc_now_iso()}, {"done", r.done}, {"failed", r.failed}};
}

void show_outcome(Context& c, std::size_t index, const CellOutcome& o) {
  const std::string state = to_string(o.state);
  char p50[32] = "";
  if (o.p50 >= 0) std::snprintf(p50, sizeof p50, " p50=%.2f us", o.p50);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, o.cell) + ": " +
                      (o.state == CellState::marked ? o.marker : state) +
                      (o.verdict.empty() || o.verdict == state ? "" : " " + o.verdict) + p50 +
                      (o.state == CellState::measured
                           ? ""
                           : " (" + (o.reason.size() > 200 ? o.reason.substr(0, 200) + "..." : o.reason) + ")"),
                  true);
}

// The outcome of a cell an earlier run of this sitting finished, if one did
// (`quiet`: an unreadable result is not reported, as it will be when the cell comes).
std::optional<CellOutcome> done_before(const Context& c, const Cell& cell, bool quiet = false) {
  std::string path = c.dir + "/" + cell.file_name();
  if (!fs::exists(path)) return std::nullopt;
  try {
    CellOutcome o = outcome_from_json(json::parse(read_text(path)));
    if (!done_state(o.state)) return std::nullopt;
    o.reused = true;
    return o;
  } catch (const std::exception& e) {
    if (!quiet) std::fprintf(stderr, "bench-run: %s: unreadable, so the cell runs again: %s\n", path.c_str(), e.what());
    return std::nullopt;
  }
}

// The result of a cell that was not measured: its state, its marker when marked, and why.
json unmeasured_result(const Cell& cell, CellState state, const std::string& marker, const std::string& why) {
  json j = cell_base(cell);
  if (!marker.empty()) j["marker"] = marker;
  j["verdict"] = nullptr;
  j["lab"] = {{"state", to_string(state)}, {"reason", why}};
  return j;
}

// Writes the result of a cell that was never run; returns its outcome.
CellOutcome record_unrun(const Context& c, const Cell& cell, CellState state, const std::string& marker,
                         const std::string& why) {
  write_cell(c, cell, unmeasured_result(cell, state, marker, why));
  CellOutcome o;
  o.cell = cell;
  o.state = state;
  o.marker = marker;
  o.reason = why;
  return o;
}

// Why a flavour cannot run here ("" when it can): its binary, a command it
// requires, or an artifact is missing.
std::string unbuilt_flavour(const Context& c, const Flavour& fl) {
  const SittingOptions& opt = c.opt;
  if (flavour_binary(c, fl).empty())
    return "server binary '" + fl.binary + "' of flavour " + fl.name + " is not built (looked in " +
           rel(opt.build_dir, opt.source_dir) + " and PATH)";
  std::vector<std::string> tools;
  for (const auto& t : fl.required_tools)
    if (find_executable(t, "").empty()) tools.push_back(t);
  if (!tools.empty()) return "needs " + join(tools, ", ") + ", not found on PATH";
  for (const auto& a : fl.artifacts)
    if (find_artifact(a, opt.build_dir).empty())
      return "artifact '" + a + "' of flavour " + fl.name + " is missing (looked in " +
             rel(opt.build_dir, opt.source_dir) + ")";
  return "";
}

// "; <flavour> has <transport> only where its SDK is installed: ..." for a
// transport its flavour file declares build_only, else "".
std::string build_only_note(const Context& c, const Cell& cell) {
  const auto& b = c.flavours.at(cell.flavour).build_only;
  auto it = b.find(cell.transport);
  return it == b.end() ? ""
                       : "; " + cell.flavour + " has " + cell.transport +
                             " only where its SDK is installed (build_only: " + it->second + ")";
}

// Records a cell that cannot exist (nopool, noshard, unmeasurable, unsupported by its flavour, oversubscribed).
std::optional<CellOutcome> mark_if_impossible(const Context& c, const Cell& cell) {
  std::string marker = marker_for(cell, c.opt.machine, c.flavours.at(cell.flavour), c.workers);
  if (marker.empty()) return std::nullopt;
  const Workers& w = c.workers;
  std::string why = marker == "nopool"         ? cell.transport + " cannot run the pool model"
                    : marker == "noshard"      ? cell.transport + " cannot run the shard model"
                    : marker == "unmeasurable" ? "this host lacks " + cell.transport + build_only_note(c, cell)
                    : marker == "oversubscribed"
                        ? "[server] workers = " + std::to_string(w.count) + " spinning threads on " +
                              std::to_string(w.server_cores) +
                              " server core(s): that measures time slicing, not the model"
                        : cell.flavour + " does not declare " + cell.transport + "/" + cell.model;
  return record_unrun(c, cell, CellState::marked, marker, why);
}

// Whether a flavour's server can be given a postgresql store: its args pass {store_conninfo}.
bool takes_postgresql(const Flavour& f) {
  return std::any_of(f.args.begin(), f.args.end(),
                     [](const std::string& a) { return a.find("{store_conninfo}") != std::string::npos; });
}

// Records a cell whose store needs a service that is not running (it could
// not start here), or that its flavour cannot be given (no {store_conninfo}).
std::optional<CellOutcome> skip_if_no_service(Context& c, const Cell& cell, std::size_t index) {
  const std::string setting = cell_store(c, cell);
  if (service_for_store(setting).empty()) return std::nullopt;
  if (!takes_postgresql(c.flavours.at(cell.flavour)))
    return record_unrun(c, cell, CellState::marked, "unsupported",
                        cell.flavour + "'s args pass no {store_conninfo}: it cannot run store " + setting);
  if (c.pg && c.pg->running()) return std::nullopt;
  const std::string why = "store " + setting + " needs the machine's postgresql service, which " +
                          (c.pg ? "did not start: " + c.pg->why() : std::string("was not started"));
  CellOutcome o = record_unrun(c, cell, CellState::marked, "noservice", why);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, cell) + ": noservice: " + why, true);
  return o;
}

// Starts the machine's postgresql service when a cell left to run needs it;
// records it in sitting.json either way. Stopped by stop_services.
void start_services(Context& c, const std::vector<Cell>& cells, json& stamp) {
  const auto decl = c.opt.machine.services.find("postgresql");
  if (decl == c.opt.machine.services.end()) return;
  const bool needed = std::any_of(cells.begin(), cells.end(), [&](const Cell& cell) {
    return !service_for_store(cell_store(c, cell)).empty() && !done_before(c, cell, true) &&
           marker_for(cell, c.opt.machine, c.flavours.at(cell.flavour), c.workers).empty();
  });
  if (!needed) return;
  c.pg = std::make_unique<PgService>(decl->second, c.opt.source_dir + "/tests/support/pg_server.sh",
                                     c.dir + "/.work");
  c.progress.show("starting the postgresql service on core(s) " + format_core_list(decl->second.cores), true);
  if (!c.pg->start()) c.progress.show("bench-run: " + c.pg->why() + "; its cells are marked noservice", true);
  stamp["services"]["postgresql"] = c.pg->stamp();
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
}

void stop_services(Context& c, json& stamp) {
  if (!c.pg) return;
  c.pg->stop();
  stamp["services"]["postgresql"] = c.pg->stamp();
}

// Records a cell whose flavour failed its check at the start of the sitting.
std::optional<CellOutcome> check_failed_if(Context& c, const Cell& cell, std::size_t index) {
  const FlavourCheck& fc = c.checks[cell.flavour];
  if (!fc.failed()) return std::nullopt;
  std::vector<std::string> failing;
  for (const auto& l : fc.report.lines)
    if (l.status == CheckStatus::fail)
      failing.push_back((l.scope.empty() ? "" : l.scope + " ") + l.name + ": " + l.detail);
  const std::string why = "check-flavour " + cell.flavour + " failed " + std::to_string(fc.report.failed) +
                          " check(s): " + join(failing, "; ");
  CellOutcome o = record_unrun(c, cell, CellState::check_failed, "", why);
  show_outcome(c, index, o);
  return o;
}

// Records a cell whose server or client binary is not built.
std::optional<CellOutcome> unbuilt_if_missing(Context& c, const Cell& cell, std::size_t index) {
  std::string why = unbuilt_flavour(c, c.flavours.at(cell.flavour));
  if (why.empty() && find_executable(c.client_path, "").empty())
    why = "client binary " + rel(c.client_path, c.opt.source_dir) + " is not built";
  if (why.empty()) return std::nullopt;
  CellOutcome o = record_unrun(c, cell, CellState::unbuilt, "", why);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, cell) + ": unbuilt: " + why, true);
  return o;
}

// A cell's attempts: an attempt that fails in error is made again, up to the matrix's count.
struct Attempts {
  Attempt last;
  std::vector<std::string> failures;  ///< why each failed attempt failed
  int made = 0;
  bool interrupted = false;
};

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

// A measured or refused cell's result: the client's, stamped, with the verdict
// the audit and the failed attempts leave it. Notes in the sitting's stamp how
// the client says it was built.
json measured_result(const Context& c, const Attempts& t, json& stamp) {
  const Attempt& a = t.last;
  json j = a.result;
  json client_stamp = j.value("stamp", json::object());
  // A binary that cannot answer --version still says how it was built in its results.
  std::string ckey = rel(fs::absolute(c.client_path).lexically_normal().string(), c.opt.source_dir);
  if (stamp["binaries"].contains(ckey) && !stamp["binaries"][ckey].contains("reported_in_results"))
    stamp["binaries"][ckey]["reported_in_results"] = client_stamp;
  j["stamp"] = {{"client", client_stamp}, {"sitting", c.sitting_stamp}, {"effective", a.effective}};
  json reasons = j.value("verdict_reasons", json::array());
  std::string verdict = j.value("verdict", "");
  const CellState state = a.end == AttemptEnd::refused ? CellState::refused : CellState::measured;
  if (state == CellState::refused) {
    j["withheld"] = {{"runs", j["runs"]},
                     {"summary", j["summary"]},
                     {"cdf", j.value("cdf", json::array())},
                     {"client_verdict", verdict}};
    j.erase("runs");
    j.erase("summary");
    j.erase("cdf");
    verdict = "refused";
    reasons = json::array({"audit: " + a.reason});
  } else if (!t.failures.empty()) {
    if (verdict == "ok") verdict = "partial";
    reasons.push_back("repeated: " + join(t.failures, "; "));
  }
  j["verdict"] = verdict;
  j["verdict_reasons"] = reasons;
  j["lab"] = {{"state", to_string(state)}, {"reason", a.reason}, {"attempts", t.made}, {"failed_attempts", t.failures}};
  return j;
}

// Writes the cell's result file from its attempts; returns its outcome.
CellOutcome record_cell(const Context& c, const Cell& cell, const Attempts& t, json& stamp) {
  const Attempt& a = t.last;
  json j;
  CellOutcome o;
  o.cell = cell;
  if (a.end == AttemptEnd::unsupported) {
    j = unmeasured_result(cell, CellState::marked, "unsupported",
                          "the server says: " + a.reason + build_only_note(c, cell));
    o.state = CellState::marked;
    o.marker = "unsupported";
    o.reason = a.reason;
  } else if (a.end == AttemptEnd::error) {
    j = unmeasured_result(cell, CellState::error, "", a.reason);
    j["lab"]["attempts"] = t.failures;
    j["stamp"] = {{"sitting", c.sitting_stamp}, {"effective", a.effective}};
    o.state = CellState::error;
    o.reason = a.reason;
  } else {
    j = measured_result(c, t, stamp);
    o = outcome_from_json(j);
  }
  write_cell(c, cell, j);
  return o;
}

// The transports and models of the flavour's cells that can run (the matrix's
// that this machine has and the flavour declares); empty when every such cell
// is done already (a resumed sitting), so that there is nothing to check.
std::pair<std::vector<std::string>, std::vector<std::string>> to_check(const Context& c, const std::vector<Cell>& cells,
                                                                       const Flavour& f) {
  std::vector<std::string> transports, models;
  auto add = [](std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  bool left = false;
  for (const Cell& cell : cells)
    // A build_only transport is not checked: a build without its SDK answers
    // `unsupported:` for it, which its cells then record; the rest is checked.
    if (cell.flavour == f.name && marker_for(cell, c.opt.machine, f, c.workers).empty() &&
        !f.build_only.count(cell.transport)) {
      add(transports, cell.transport);
      add(models, cell.model);
      left = left || !done_before(c, cell, true);
    }
  if (!left) return {};
  return {transports, models};
}

// Plays check-flavour against one flavour, its lines into the sitting's .work/ log.
FlavourCheck check_one(Context& c, const Flavour& f, std::vector<std::string> transports,
                       std::vector<std::string> models) {
  FlavourCheck fc;
  fc.ran = true;
  fc.transports = std::move(transports);
  fc.models = std::move(models);
  fc.log = ".work/check-" + f.name + ".log";
  const std::string work = c.dir + "/.work/check-" + f.name;
  fs::remove_all(work);
  fs::create_directories(work);
  std::ofstream log(c.dir + "/" + fc.log, std::ios::trunc);
  CheckOptions o;
  o.flavour = f.name;
  o.resolved = f;  // an installed sitting checks the install it measures
  o.flavours_dir = c.opt.flavours_dir;
  o.build_dir = c.opt.build_dir;
  o.source_dir = c.opt.source_dir;
  o.work_dir = work;
  o.machine = c.opt.machine;
  o.machine.kernel_busy_poll_usecs = c.busy_poll;  // the check's busy poll is the sitting's, when it sets one
  if (c.opt.busy_poll_usecs) o.machine.kernel_busy_poll_by_model.clear();  // the override is every model's
  o.workers = c.workers.count;
  o.transports = fc.transports;
  o.models = fc.models;
  o.ready_timeout_s = c.opt.matrix.ready_timeout_s;
  o.burn_fraction = c.opt.matrix.audit_burn_fraction;
  o.on_line = [&log](const CheckLine& l) { log << l.text() << "\n" << std::flush; };
  o.stop = [] { return stop_requested(); };
  log << "check-flavour " << f.name << ": transports " << join(fc.transports, ", ") << "; models "
      << join(fc.models, ", ") << "; workers " << o.workers << "\n";
  const auto t0 = Clock::now();
  try {
    fc.report = check_flavour(o);
  } catch (const std::exception& e) {
    CheckLine l{CheckStatus::fail, "", "build", std::string("check-flavour could not run: ") + e.what()};
    fc.report.lines.push_back(l);
    ++fc.report.failed;
    log << l.text() << "\n";
  }
  fc.seconds = since(t0);
  log << fc.report.summary() << "\n";
  return fc;
}

// check-flavour for every flavour of the matrix that is built and has cells
// to run, once per sitting (and again on resume), restricted to what the
// sitting measures; recorded in sitting.json. False when interrupted.
bool run_checks(Context& c, const std::vector<Cell>& cells, json& stamp) {
  json checks = json::object();
  for (const auto& name : c.opt.matrix.flavours) {
    const Flavour& f = c.flavours.at(name);
    FlavourCheck& fc = c.checks[name];
    auto [transports, models] = to_check(c, cells, f);
    if (!c.opt.check) {
      fc.why_not = "--no-check";
    } else if (transports.empty()) {
      fc.why_not = "no cell to run";
    } else if (std::string why = unbuilt_flavour(c, f); !why.empty()) {
      fc.why_not = "unbuilt";
    } else {
      c.progress.show("check-flavour " + name + " (" + join(transports, ", ") + "; " + join(models, ", ") + ") ...",
                      false);
      fc = check_one(c, f, std::move(transports), std::move(models));
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f s", fc.seconds);
      c.progress.show("check-flavour " + name + ": " + fc.report.summary() + " (" + secs + "; " + fc.log + ")", true);
    }
    checks[name] = check_json(c, name, true);
    if (stop_requested()) break;
  }
  stamp["checks"] = checks;
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
  return !stop_requested();
}

// Why the cells stopped before the last: an interruption, or a binary that changed.

// ---- Paired rounds (matrix `pairing = "rounds"`, method v2) ----

// The matrix's seed, a resumed sitting's, or a fresh one (recorded in sitting.json).
std::uint64_t pairing_seed_for(const Matrix& mx, const json& previous) {
  if (mx.rounds.seed != 0) return mx.rounds.seed;
  if (previous.is_object() && previous.contains("pairing")) return previous["pairing"].value("seed", std::uint64_t{1});
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32 | rd()) | 1;
}

// A member of a paired group: its server, started once and held between its runs.
struct Member {
  Cell cell;
  std::size_t index = 0;
  AttemptPlan plan;
  Child server;
  Attempt start;              ///< how starting the server went; its effective stamp
  bool live = false;          ///< its server runs (held or measured)
  std::vector<json> rounds;   ///< the client result of each round measured and passed by the audit
  std::vector<int> round_of;  ///< the round number of each of `rounds`
  std::vector<std::string> failures, refusals;
  json refused_last;  ///< the last round the audit refused (its figures withheld if no round passed)
  double server_cpu_s = 0;
};

// The client of one round: a single run into its own result file.
AttemptPlan round_plan(const AttemptPlan& base, int round) {
  AttemptPlan p = base;
  p.client_json = base.work + "/client-r" + std::to_string(round) + ".json";
  fs::remove(p.client_json);
  for (std::size_t i = 0; i + 1 < p.client.argv.size(); ++i) {
    if (p.client.argv[i] == "--runs") p.client.argv[i + 1] = "1";
    if (p.client.argv[i] == "--json") p.client.argv[i + 1] = p.client_json;
  }
  return p;
}

// The p50 a cell is judged on: response time in open loop, service time in closed.
double judged_p50(const json& result, const std::string& loop) {
  const json& s = result.at("summary");
  const std::string view = loop == "open" && s.contains("response") ? "response" : "service";
  return s.at(view).at("p50").get<double>();
}

// Starts a member's server and waits for it; false (with m.start's reason) when it did not come up.
bool start_member(Context& c, Member& m) {
  m.plan = plan_attempt(c, m.cell, 1);
  m.start.effective = m.plan.effective;
  const CellProgress progress{c, m.cell, m.index, 1};
  if (!start_process(m.plan.server, "server", m.server, m.start)) return false;
  progress.show("starting server");
  if (!wait_for_server(c, m.plan, m.server, m.start)) return false;
  point_client_at_ready_port(m.plan, m.start);
  m.start.end = AttemptEnd::measured;
  m.live = true;
  return true;
}

// Resumes the member, runs one client against it and holds it again; the
// round's judged p50, or -1 when the run failed or the audit refused it.
double run_round(Context& c, Member& m, int round, bool& interrupted) {
  const pid_t group = m.server.pid();
  if (!m.live || m.server.exit_code()) {
    m.live = false;
    m.failures.push_back("round " + std::to_string(round + 1) + ": the server is gone");
    return -1;
  }
  if (std::string e = resume_group(group); !e.empty()) m.failures.push_back(e);
  AttemptPlan p = round_plan(m.plan, round);
  const CellProgress progress{c, m.cell, m.index, 1};
  Attempt a;
  a.effective = m.start.effective;
  Child client;
  double p50 = -1;
  if (start_process(p.client, "client", client, a)) {
    ClientRun run = supervise_client(progress, p, m.server, client, false);
    judge_client_run(c, p, run, a);
    if (run.server_before.cpu_s >= 0 && run.server_after.cpu_s >= run.server_before.cpu_s)
      m.server_cpu_s += run.server_after.cpu_s - run.server_before.cpu_s;
  }
  const std::string tag = "round " + std::to_string(round + 1) + ": ";
  if (a.end == AttemptEnd::measured) {
    p50 = judged_p50(a.result, m.cell.loop);
    m.rounds.push_back(std::move(a.result));
    m.round_of.push_back(round);
  } else if (a.end == AttemptEnd::refused) {
    m.refusals.push_back(tag + a.reason);
    m.refused_last = std::move(a.result);
  } else if (a.end == AttemptEnd::interrupted) {
    interrupted = true;
  } else {
    m.failures.push_back(tag + a.reason);
  }
  if (m.server.exit_code()) {
    m.live = false;
  } else if (std::string e = hold_group(group); e.empty()) {
    if (std::string held = verify_held(group, 0.0, 2.0); !held.empty()) m.failures.push_back(tag + "hold: " + held);
  }
  return p50;
}

// The pooled distribution of the rounds: F(x) is the mean over the rounds of
// each round's cumulative fraction at x (every round weighs the same).
json mixed_cdf(const std::vector<json>& rounds) {
  std::vector<std::vector<std::pair<double, double>>> cdfs;
  std::vector<double> xs;
  for (const auto& r : rounds) {
    auto& cdf = cdfs.emplace_back();
    for (const auto& pt : r.value("cdf", json::array())) {
      cdf.emplace_back(pt.at(0).get<double>(), pt.at(1).get<double>());
      xs.push_back(cdf.back().first);
    }
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  const std::size_t most = 400, step = xs.size() > most ? (xs.size() + most - 1) / most : 1;
  json out = json::array();
  for (std::size_t i = 0; i < xs.size(); i += step) {
    const double x = (i + step >= xs.size()) ? xs.back() : xs[i];
    double f = 0;
    for (const auto& cdf : cdfs) {
      auto it = std::upper_bound(cdf.begin(), cdf.end(), x, [](double v, const auto& pt) { return v < pt.first; });
      f += it == cdf.begin() ? 0 : std::prev(it)->second;
    }
    out.push_back(json::array({x, cdfs.empty() ? 0 : f / static_cast<double>(cdfs.size())}));
    if (x == xs.back()) break;
  }
  return out;
}

// The pairing record every member's result carries.
json pairing_json(const PairedGroup& g, const PairedGroup::Member& s, const Cell& cell,
                  const std::vector<std::vector<std::size_t>>& orders, const std::vector<std::vector<double>>& p50s,
                  std::size_t member) {
  // A cell has a store of its own only when its matrix pairs on the store.
  const bool on_store = !cell.store.empty();
  json j = {{"mode", "rounds"},
            {"group", (on_store ? cell.flavour + "/" : "") + cell.transport + "/" + cell.model + "/" + cell.loop},
            {"on", on_store ? "store" : "flavour"},
            {"members", g.members()},
            {"reference", g.members()[g.reference()]},
            {"seed", g.seed()},
            {"rounds", g.rounds()},
            {"stop", to_string(g.stop())},
            {"target", g.rule().target},
            {"resolution", g.rule().resolution},
            {"width_reached", g.width_reached()},
            {"runs", g.runs()},
            {"budget_runs", g.budget_runs()},
            {"bracketed", true},
            {"orders", orders}};
  json own = json::array();
  for (const auto& round : p50s) own.push_back(round[member] > 0 ? json(round[member]) : json());
  j["p50_per_round"] = own;
  if (s.reference || s.ratios.empty()) {
    j["ratio"] = nullptr;  // the reference, or a member with no round beside a measured reference
    if (!s.reference) j["verdict"] = nullptr;
  } else {
    j["ratio"] = {{"median", s.interval.median}, {"low", s.interval.low}, {"high", s.interval.high}};
    j["ratios"] = s.ratios;
    j["verdict"] = to_string(s.verdict);
  }
  return j;
}

// A member's result from its rounds: the runs of every round it passed, the
// summary and verdict recomputed over them, the server's CPU per order over
// its runs alone, and the group's ratio.
json member_result(const Member& m, json pairing) {
  bench::CellResult all = bench::cell_result_from_json(m.rounds.front().dump());
  all.runs.clear();
  all.orders_total = 0;
  for (const auto& r : m.rounds) {
    const bench::CellResult one = bench::cell_result_from_json(r.dump());
    all.runs.insert(all.runs.end(), one.runs.begin(), one.runs.end());
    all.orders_total += one.orders_total;
  }
  all.summary = bench::summarize(all.runs);
  all.verdict = bench::judge(all.runs, all.summary, all.rate, all.thresholds);
  all.cdf.clear();
  json j = json::parse(bench::to_json(all));
  j["cdf"] = mixed_cdf(m.rounds);
  j["audit"] = m.rounds.back().at("audit");
  json audits = json::array();
  for (std::size_t i = 0; i < m.rounds.size(); ++i)
    audits.push_back({{"round", m.round_of[i] + 1}, {"audit", m.rounds[i].at("audit")}});
  j["audits"] = audits;
  j["server"] = m.rounds.back().at("server");
  j["server"]["cpu_s"] = m.server_cpu_s;
  j["server"]["cpu_us_per_order"] = all.orders_total ? json(m.server_cpu_s * 1e6 / all.orders_total) : json();
  j["server_exit_code"] = 0;
  pairing["refused_rounds"] = m.refusals;
  j["pairing"] = std::move(pairing);
  return j;
}

// Writes each member's result once its group has finished.
void record_members(Context& c, std::vector<Member>& ms, const PairedGroup& g, const std::vector<std::size_t>& live,
                    const std::vector<std::vector<std::size_t>>& orders, const std::vector<std::vector<double>>& p50s,
                    json& stamp, SittingResult& res) {
  const auto summary = g.summary();
  for (std::size_t k = 0; k < live.size(); ++k) {
    Member& m = ms[live[k]];
    Attempts t;
    t.made = 1;
    t.last = m.start;
    if (m.rounds.empty() && !m.refusals.empty()) {
      t.last.end = AttemptEnd::refused;  // every round refused: figures withheld
      t.last.result = m.refused_last;
      t.last.result["pairing"] = pairing_json(g, summary[k], m.cell, orders, p50s, k);
      t.last.reason = join(m.refusals, "; ");
    } else if (m.rounds.empty()) {
      t.last.end = AttemptEnd::error;
      t.last.reason = "no round measured: " + join(m.failures, "; ");
    } else {
      t.last.end = AttemptEnd::measured;
      t.last.result = member_result(m, pairing_json(g, summary[k], m.cell, orders, p50s, k));
      // The reference runs several times a round: count rounds, not runs.
      const std::set<int> passed(m.round_of.begin(), m.round_of.end());
      t.last.reason = c.opt.audit ? "audit passed in " + std::to_string(passed.size()) + " of " +
                                        std::to_string(g.rounds()) + " rounds"
                                  : "audit disabled";
      t.failures = m.failures;
    }
    res.cells.push_back(record_cell(c, m.cell, t, stamp));
    show_outcome(c, m.index, res.cells.back());
  }
}

// One line per group on the terminal: rounds, why it stopped, each member's ratio.
void show_group(Context& c, const PairedGroup& g, const Cell& cell) {
  const std::string key = (cell.store.empty() ? "" : cell.flavour + "/") + cell.transport + "/" + cell.model + "/" +
                          cell.loop + (cell.store.empty() ? "" : ", on the store");
  std::string line = "[group " + key + "] " +
                     std::to_string(g.rounds()) + " rounds (" + to_string(g.stop()) + ", +-" +
                     num(std::round(g.width_reached() * 1000) / 10) + "%):";
  for (const auto& s : g.summary()) {
    if (s.reference || s.ratios.empty()) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %.3f [%.3f, %.3f] %s;", s.name.c_str(), s.interval.median, s.interval.low,
                  s.interval.high, to_string(s.verdict));
    line += buf;
  }
  c.progress.show(line, true);
}

// A group of one (the tls cells, which only cpp serves) runs as a sequential
// cell, with as many runs as a group has rounds at least, so that its CVs
// mean something. False when the sitting was interrupted.
bool run_group_of_one(Context& c, const Cell& cell, std::size_t index, json& stamp, SittingResult& res) {
  const int runs = c.opt.matrix.runs;
  c.opt.matrix.runs = std::max(runs, c.opt.matrix.rounds.min_rounds);
  Attempts t = run_attempts(c, cell, index);
  c.opt.matrix.runs = runs;
  if (t.interrupted) return false;
  res.cells.push_back(record_cell(c, cell, t, stamp));
  show_outcome(c, index, res.cells.back());
  return true;
}

// Starts and holds every member's server; a member that does not come up is
// recorded. Returns the members that run (indexes into ms); nullopt when interrupted.
std::optional<std::vector<std::size_t>> start_members(Context& c, std::vector<Member>& ms, json& stamp,
                                                      SittingResult& res) {
  std::vector<std::size_t> live;
  for (std::size_t k = 0; k < ms.size(); ++k) {
    if (!start_member(c, ms[k])) {
      if (ms[k].start.end == AttemptEnd::interrupted) return std::nullopt;
      Attempts t;
      t.made = 1;
      t.last = ms[k].start;
      res.cells.push_back(record_cell(c, ms[k].cell, t, stamp));
      show_outcome(c, ms[k].index, res.cells.back());
      continue;
    }
    hold_group(ms[k].server.pid());
    live.push_back(k);
  }
  return live;
}

void stop_members(std::vector<Member>& ms, const std::vector<std::size_t>& live) {
  for (std::size_t k : live) {
    resume_group(ms[k].server.pid());
    ms[k].server.stop(5.0);
  }
}

// Too few members started to pair (or not the reference): those that did run
// one after another. False when the sitting was interrupted.
bool run_unpaired(Context& c, std::vector<Member>& ms, const std::vector<std::size_t>& live, json& stamp,
                  SittingResult& res) {
  stop_members(ms, live);
  for (std::size_t k : live) {
    Attempts t = run_attempts(c, ms[k].cell, ms[k].index);
    if (t.interrupted) return false;
    res.cells.push_back(record_cell(c, ms[k].cell, t, stamp));
    show_outcome(c, ms[k].index, res.cells.back());
  }
  return true;
}

PairingRule pairing_rule(const Matrix::Rounds& mr) {
  PairingRule rule;
  rule.min_rounds = mr.min_rounds;
  rule.max_rounds = mr.max_rounds;
  rule.budget_rounds = mr.budget_rounds;
  rule.target = mr.target;
  rule.resolution = mr.resolution;
  return rule;
}

// Runs the group's rounds until it is done; false when interrupted.
bool run_rounds(Context& c, std::vector<Member>& ms, const std::vector<std::size_t>& live, PairedGroup& g,
                std::vector<std::vector<std::size_t>>& orders) {
  bool interrupted = false;
  while (!g.done() && !interrupted && !stop_requested()) {
    std::vector<std::size_t> order = g.next_order();
    std::vector<double> p50(order.size(), -1);
    for (std::size_t i = 0; i < order.size() && !interrupted; ++i)
      p50[i] = run_round(c, ms[live[order[i]]], g.rounds(), interrupted);
    if (interrupted) break;
    g.add_round(order, p50);
    orders.push_back(order);
  }
  return !interrupted && !stop_requested();
}

// Measures a group of cells that differ only in the matrix's pair_on
// dimension (the flavour, or the store) in interleaved rounds, each member
// named by Cell::member(). Returns false when the sitting was interrupted.
bool run_paired_group(Context& c, const std::vector<Cell>& cells, const std::vector<std::size_t>& idx, json& stamp,
                      SittingResult& res) {
  if (idx.size() < 2) return run_group_of_one(c, cells[idx[0]], idx[0], stamp, res);
  std::vector<Member> ms(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    ms[k].cell = cells[idx[k]];
    ms[k].index = idx[k];
  }
  const std::optional<std::vector<std::size_t>> started = start_members(c, ms, stamp, res);
  if (!started) return false;
  const std::vector<std::size_t>& live = *started;
  std::vector<std::string> names;
  std::optional<std::size_t> ref;
  for (std::size_t k : live) {
    if (is_reference(c.opt.matrix, ms[k].cell)) ref = names.size();
    names.push_back(ms[k].cell.member());
  }
  if (live.size() < 2 || !ref) return run_unpaired(c, ms, live, stamp, res);
  PairedGroup g(names, *ref, pairing_rule(c.opt.matrix.rounds), c.pairing_seed);
  std::vector<std::vector<std::size_t>> orders;
  const bool finished = run_rounds(c, ms, live, g, orders);
  stop_members(ms, live);
  if (!finished) return false;
  show_group(c, g, ms[live.front()].cell);
  record_members(c, ms, g, live, orders, g.p50s(), stamp, res);
  return true;
}

struct Stop {
  bool interrupted = false;
  std::string reason;  ///< the binary that changed
};

// Paired rounds: the cells to run grouped by group_key (transport, model and
// loop; with pair_on = "store" the flavour too), in sitting order, each group
// measured in rounds.
void run_groups(Context& c, const std::vector<Cell>& cells, const std::vector<std::size_t>& pending, json& stamp,
                SittingResult& res, Stop& stop) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i : pending) {
    const std::string key = group_key(c.opt.matrix, cells[i]);
    if (groups.empty() || groups.back().first != key) groups.push_back({key, {}});
    groups.back().second.push_back(i);
  }
  for (const auto& [key, idx] : groups) {
    stop.reason = changed_binary(c, hash_binaries(c));
    if (!stop.reason.empty()) return;
    if (!run_paired_group(c, cells, idx, stamp, res) || stop_requested()) {
      stop.interrupted = true;
      return;
    }
  }
}

// Runs every cell in order, keeping those an earlier run finished; the network
// set up for them is taken down however they end.
Stop run_cells(Context& c, const std::vector<Cell>& cells, json& stamp, SittingResult& res) {
  Stop stop;
  std::vector<std::size_t> pending;  // paired rounds: the cells to run, grouped once all are known
  try {
    set_up_network(c, stamp);
    start_services(c, cells, stamp);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Cell& cell = cells[i];
      if (stop_requested()) {
        stop.interrupted = true;
        break;
      }
      std::optional<CellOutcome> settled = done_before(c, cell);
      if (!settled) settled = mark_if_impossible(c, cell);
      if (!settled) settled = unbuilt_if_missing(c, cell, i);
      if (!settled) settled = check_failed_if(c, cell, i);
      if (!settled) settled = skip_if_no_service(c, cell, i);
      if (settled) {
        res.cells.push_back(*settled);
        continue;
      }
      if (c.opt.matrix.pairing == "rounds") {
        pending.push_back(i);
        continue;
      }
      stop.reason = changed_binary(c, hash_binaries(c));
      if (!stop.reason.empty()) break;
      Attempts t = run_attempts(c, cell, i);
      if (t.interrupted) {
        stop.interrupted = true;
        break;
      }
      res.cells.push_back(record_cell(c, cell, t, stamp));
      show_outcome(c, i, res.cells.back());
    }
    if (!stop.interrupted && stop.reason.empty()) run_groups(c, cells, pending, stamp, res, stop);
  } catch (...) {
    stop_services(c, stamp);
    take_down_network(c, &stamp);
    throw;
  }
  stop_services(c, stamp);
  take_down_network(c, &stamp);
  if (stop_requested()) stop.interrupted = true;
  return stop;
}

// sitting.json as the sitting ends: when, how, and how many cells ended in each state (measured ones by verdict).
void end_stamp(json& stamp, const Stop& stop, const SittingResult& res) {
  stamp["end"] = utc_now_iso();
  stamp["interrupted"] = stop.interrupted;
  stamp["stopped"] = stop.reason;
  std::map<std::string, int> counts;
  for (const auto& o : res.cells) counts[o.state == CellState::measured ? o.verdict : to_string(o.state)]++;
  stamp["outcome"] = counts;
}

void set_exit(SittingResult& res, const Stop& stop, const SittingOptions& opt) {
  if (!stop.reason.empty()) {
    res.exit_code = 3;
    res.message = "sitting stopped: " + stop.reason;
  } else if (stop.interrupted) {
    res.exit_code = 130;
    res.message = "sitting interrupted; resume with: bench-run --resume " + rel(res.dir, opt.source_dir);
  } else {
    bool errors = std::any_of(res.cells.begin(), res.cells.end(), [](const CellOutcome& o) {
      return o.state == CellState::error || o.state == CellState::check_failed;
    });
    res.exit_code = errors ? 2 : 0;
    res.message = errors ? "sitting complete with cells in error or whose flavour failed its check (see their results)"
                         : "sitting complete";
  }
}

}  // namespace

namespace {

// Each state and its text in result files: the one place they are paired.
constexpr std::pair<CellState, std::string_view> kCellStateTexts[] = {
    {CellState::measured, "measured"}, {CellState::refused, "refused"}, {CellState::marked, "marked"},
    {CellState::unbuilt, "unbuilt"},   {CellState::error, "error"},     {CellState::check_failed, "check-failed"},
};

}  // namespace

std::string to_string(CellState s) {
  for (const auto& [state, text] : kCellStateTexts)
    if (state == s) return std::string(text);
  return "error";
}

std::optional<CellState> cell_state_from_string(std::string_view text) {
  for (const auto& [state, t] : kCellStateTexts)
    if (t == text) return state;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, CellState s) { return out << to_string(s); }

CellOutcome outcome_from_json(const json& j) {
  CellOutcome o;
  const json& c = j.at("cell");
  o.cell = {c.value("flavour", ""), c.value("transport", ""), c.value("model", ""), c.value("loop", ""),
            c.value("store", "")};
  const json lab = j.value("lab", json::object());
  const std::string state = lab.value("state", j.contains("summary") ? "measured" : "error");
  std::optional<CellState> s = cell_state_from_string(state);
  if (!s) throw std::runtime_error("lab.state '" + state + "' is no cell state");
  o.state = *s;
  o.marker = j.value("marker", "");
  if (j.contains("verdict") && j["verdict"].is_string()) o.verdict = j["verdict"].get<std::string>();
  o.reason = lab.value("reason", "");
  auto get = [&](const char* view) -> double {
    if (!j.contains("summary")) return -1;
    const json& s = j["summary"];
    if (!s.contains(view) || !s[view].is_object() || !s[view].contains("p50") || !s[view]["p50"].is_number()) return -1;
    return s[view]["p50"].get<double>();
  };
  o.service_p50 = get("service");
  o.p50 = o.cell.loop == "open" ? get("response") : o.service_p50;
  if (o.p50 < 0) o.p50 = o.service_p50;
  return o;
}

std::vector<CellOutcome> load_sitting_cells(const std::string& dir) {
  std::vector<CellOutcome> out;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename() != "sitting.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      out.push_back(outcome_from_json(json::parse(read_text(f.string()))));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: %s: not a cell result, left out: %s\n", f.c_str(), e.what());
    }
  }
  return out;
}

SittingResult run_stepped_sitting(SittingOptions opt, const StepPlanner& next, std::vector<StepResult>& steps) {
  fill_defaults(opt);
  if (!opt.resume_dir.empty()) throw ConfigError("--resume: a sweep cannot be resumed; run it again");
  const std::string dir = sitting_dir(opt);
  if (!opt.resume_dir.empty()) throw ConfigError(dir + ": a sitting of that name exists; a sweep cannot be resumed");
  const WireRestore wire_restore = restore_wire_at_start(opt);
  Context c(opt);
  set_up_context(c, dir);
  use_installs(c);
  const std::vector<Cell> cells = plan_cells(opt.matrix);  // what check-flavour plays
  c.binaries = hash_binaries(c);
  for (auto& [p, b] : c.binaries)
    if (b.run && !b.sha256.empty()) b.version = ask_version(p);
  fs::create_directories(dir);
  json stamp = start_stamp(c, json());
  stamp["kind"] = "sweep";
  if (wire_restore.found) stamp["wire_restored_at_start"] = wire_restore.to_json();
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  c.sitting_stamp = cell_sitting_stamp(c, stamp);
  make_certificates(c, cells);

  install_stop_handlers();
  SittingResult res;
  res.dir = dir;
  Stop stop;
  stop.interrupted = !run_checks(c, cells, stamp);
  if (!stop.interrupted) {
    try {
      set_up_network(c, stamp);
      for (std::size_t i = 0;; ++i) {
        if (stop_requested()) {
          stop.interrupted = true;
          break;
        }
        const std::optional<Step> step = next(steps);
        if (!step) break;
        c.step = &*step;
        c.progress.total = std::max(step->planned, i + 1);
        c.to_run_after.assign(i + 1, 0);  // the progress line's time left: the steps planned after this one
        c.to_run_after[i] = c.progress.total - i - 1;
        const Cell& cell = step->cell;
        std::optional<CellOutcome> settled = mark_if_impossible(c, cell);
        if (!settled) settled = unbuilt_if_missing(c, cell, i);
        if (!settled) settled = check_failed_if(c, cell, i);
        if (!settled) {
          stop.reason = changed_binary(c, hash_binaries(c));
          if (!stop.reason.empty()) break;
          Attempts t = run_attempts(c, cell, i);
          if (t.interrupted) {
            stop.interrupted = true;
            break;
          }
          settled = record_cell(c, cell, t, stamp);
          show_outcome(c, i, *settled);
        }
        const std::string file = step->dir + "/" + step->name + ".json";
        json result;
        try {
          result = json::parse(read_text(dir + "/" + file));
        } catch (const std::exception&) {
          result = json::object();
        }
        res.cells.push_back(*settled);
        steps.push_back({*step, *settled, std::move(result), file});
      }
    } catch (...) {
      c.step = nullptr;
      take_down_network(c, &stamp);
      throw;
    }
    c.step = nullptr;
    take_down_network(c, &stamp);
  }
  if (stop_requested()) stop.interrupted = true;
  end_stamp(stamp, stop, res);
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  set_exit(res, stop, opt);
  if (stop.interrupted) res.message = "sweep interrupted; its steps so far are in " + rel(dir, opt.source_dir);
  return res;
}

SittingResult run_sitting(SittingOptions opt) {
  fill_defaults(opt);
  const std::string dir = sitting_dir(opt);
  const json previous = opt.resume_dir.empty() ? json() : resume_stamp(opt, dir);
  if (opt.cells) {
    if (std::string bad = check_cell_selection(opt.matrix, *opt.cells); !bad.empty())
      throw ConfigError("--cells: " + bad);
    opt.matrix.cells = *opt.cells;
  }
  const WireRestore wire_restore = restore_wire_at_start(opt);
  Context c(opt);
  set_up_context(c, dir);
  use_installs(c);
  c.pairing_seed = pairing_seed_for(opt.matrix, previous);
  const std::vector<Cell> cells = plan_cells(opt.matrix);
  c.binaries = hash_binaries(c);
  SittingResult res;
  if (!previous.is_null()) {
    if (std::string refusal = resume_refusal(c, previous); !refusal.empty()) {
      res.exit_code = 3;
      res.dir = dir;
      res.message = refusal;
      return res;
    }
  }
  for (auto& [p, b] : c.binaries)
    if (b.run && !b.sha256.empty()) b.version = ask_version(p);

  fs::create_directories(dir);
  json stamp = start_stamp(c, previous);
  if (wire_restore.found) stamp["wire_restored_at_start"] = wire_restore.to_json();
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  for (const auto& w : stamp["provenance"]["warnings"])
    std::fprintf(stderr, "bench-run: host: %s\n", w.get<std::string>().c_str());
  c.sitting_stamp = cell_sitting_stamp(c, stamp);
  make_certificates(c, cells);

  install_stop_handlers();
  res.dir = dir;
  Stop stop;
  stop.interrupted = !run_checks(c, cells, stamp);
  count_cells_to_run(c, cells);
  if (!stop.interrupted) stop = run_cells(c, cells, stamp, res);
  end_stamp(stamp, stop, res);
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  if (opt.build_site) {
    try {
      build_site(opt.results_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
    }
  }
  set_exit(res, stop, opt);
  return res;
}

std::vector<SittingResult> run_sitting_per_cell(SittingOptions opt) {
  fill_defaults(opt);
  if (!opt.resume_dir.empty())
    throw ConfigError("--one-sitting-per-cell: cannot resume a series; resume each sitting with --resume DIR");
  Matrix mx = opt.matrix;
  if (opt.cells) {
    if (std::string bad = check_cell_selection(mx, *opt.cells); !bad.empty()) throw ConfigError("--cells: " + bad);
    mx.cells = *opt.cells;
  }
  // Each unit is exact ids, so it is itself a selection that matches those cells only.
  std::vector<std::pair<std::string, std::vector<std::string>>> units;  // sitting suffix, cell ids
  for (const Cell& cell : plan_cells(mx)) {
    const std::string file = cell.file_name();
    std::string suffix = mx.pairing == "rounds" ? group_key(mx, cell) : file.substr(0, file.size() - 5);
    std::replace(suffix.begin(), suffix.end(), '/', '_');  // a group's key, or the file without .json
    auto unit = std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == suffix; });
    if (unit == units.end()) unit = units.insert(units.end(), {suffix, {}});
    unit->second.push_back(cell.id());
  }
  if (units.empty()) throw ConfigError("--one-sitting-per-cell: the matrix plans no cell");
  const std::string base = opt.sitting_name.empty() ? utc_now_compact() : opt.sitting_name;
  for (const auto& [suffix, ids] : units) {
    const std::string dir = opt.results_dir + "/" + opt.machine.name + "/" + base + "-" + suffix;
    if (fs::exists(dir + "/sitting.json"))
      throw ConfigError("--one-sitting-per-cell: " + dir +
                        " exists; choose another --sitting, or resume that sitting with --resume");
  }
  const bool site = opt.build_site;
  std::vector<SittingResult> out;
  for (const auto& [suffix, ids] : units) {
    SittingOptions one = opt;
    one.sitting_name = base + "-" + suffix;
    one.cells = ids;
    one.series = base;
    one.build_site = false;
    out.push_back(run_sitting(one));
    if (out.back().exit_code == 3 || out.back().exit_code == 130) break;
  }
  if (site) {
    try {
      build_site(opt.results_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
    }
  }
  return out;
}

int series_exit_code(const std::vector<SittingResult>& results) {
  int code = 0;
  for (const auto& r : results) {
    if (r.exit_code == 130 || r.exit_code == 3) return r.exit_code;
    code = std::max(code, r.exit_code);
  }
  return code;
}

}  // namespace kite::lab
