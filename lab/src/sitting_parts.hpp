// The parts of a sitting (sitting.cpp), shared by the files that hold them:
// plan (sitting_plan.cpp: which cells run, grouped and in which order),
// attempt (sitting_attempt.cpp, sitting_rounds.cpp: servers and clients
// started, supervised and audited), stamp (sitting_stamp.cpp: sitting.json and
// the provenance of each attempt) and store (sitting_store.cpp: the result
// files). Private to the lab's sources; set-up code throughout.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "kite/lab/audit.hpp"
#include "kite/lab/check.hpp"
#include "kite/lab/config.hpp"
#include "kite/lab/install.hpp"
#include "kite/lab/pairing.hpp"
#include "kite/lab/process.hpp"
#include "kite/lab/services.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/tls.hpp"
#include "kite/lab/util.hpp"
#include "kite/lab/wire.hpp"

#include "result_schema.hpp"

namespace kite::lab::detail {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline std::string num(double v) { return format_number(v); }

inline std::string hms(double s) {
  int t = static_cast<int>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", t / 60, t % 60);
  return buf;
}

inline std::string rel(const std::string& path, const std::string& base) {
  std::error_code ec;
  std::filesystem::path r =
      std::filesystem::relative(std::filesystem::absolute(path), std::filesystem::absolute(base), ec);
  if (ec || r.empty() || r.string().rfind("..", 0) == 0) return path;
  return r.string();
}

inline std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

inline std::string tail(const std::string& s, std::size_t n) {
  std::string t = trim(s);
  return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

inline bool done_state(CellState s) {
  return s == CellState::measured || s == CellState::refused || s == CellState::marked;
}

inline bool pool_or_shard(const std::string& model) { return model == "pool" || model == "shard"; }

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

// What a sitting fixed as it started: its options and settings, its folder,
// the flavours, the binaries it hashed, its stamp and each flavour's check.
// The plan, stamp and store parts read nothing else; only a stepped sitting's
// current step moves.
struct Setup {
  explicit Setup(SittingOptions& o) : opt(o) {}
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
  json sitting_stamp;
  LabCertificates tls;             ///< the tls cells' certificates, made at the start (.work/tls)
  std::uint64_t pairing_seed = 0;  ///< paired rounds' orders and intervals (recorded in sitting.json)
  const Step* step = nullptr;      ///< a stepped sitting's (a sweep's) current step; null in a sitting
};

// What the cells run in: the sitting's network and its services (the attempt part's).
struct Environment {
  std::unique_ptr<NetnsPair> netns;
  std::unique_ptr<WirePath> wire;  ///< the nic path's interfaces, moved into namespaces
  std::unique_ptr<PgService> pg;   ///< [services.postgresql], started when a cell to run needs it
};

// The terminal's progress line and what it needs to say the time left.
struct Tracker {
  Progress progress;
  std::vector<double> cell_times;
  std::vector<std::size_t> to_run_after;  ///< cells left to run (not marked, not done) after cell i
};

// The whole sitting, for the parts that start processes or print progress.
struct Context : Setup, Environment, Tracker {
  explicit Context(SittingOptions& o) : Setup(o) {}
};

// How an attempt at a cell ended: measured or refused (a result to record), or why there is none.
enum class AttemptEnd { measured, refused, error, unsupported, interrupted };

struct Attempt {
  AttemptEnd end = AttemptEnd::error;
  std::string reason;
  json result;     ///< measured, refused: the client's result with the audit's
  json effective;  ///< what ran (the "effective" part of the cell's stamp)
};

// Where the server listens and the client connects, and the namespaces they run in.
struct Endpoints {
  std::string bind = "127.0.0.1", host = "127.0.0.1";
  std::string server_ns, client_ns;
};

// One attempt at a cell as planned before anything starts: its files, both processes and the stamp of what runs.
struct AttemptPlan {
  std::string work;         ///< the cell's scratch folder
  std::string ready;        ///< the server writes its port here once it listens
  std::string client_json;  ///< the client's result
  int port = 0;
  int sessions = 0;
  int coordinator = 0;
  int busy_poll = 0;            ///< the kernel transport's; 0 for the others
  bool read_busy_poll = false;  ///< kernel cells: read the server's SO_BUSY_POLL back while the client runs
  std::string store_conninfo;   ///< a postgresql store's database, made for this attempt
  json store;                   ///< stamp.effective.store: the setting, kind, policy and database
  Endpoints net;
  CoreSet allowed_server;
  SpawnSpec server, client;
  json effective;
};

// The running cell's progress line: what it does, the time spent, and the
// time left at the mean cell time so far (the planned time before any).
struct CellProgress {
  Context& c;
  const Cell& cell;
  std::size_t index;
  int attempt_no;

  void show(const std::string& what) const;
};

// The server's CPU time (all its threads) and memory, read from /proc while it runs.
struct ServerUsage {
  double cpu_s = -1;              ///< utime + stime
  long rss_kb = -1, hwm_kb = -1;  ///< VmRSS, VmHWM
};

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

// A cell's attempts: an attempt that fails in error is made again, up to the matrix's count.
struct Attempts {
  Attempt last;
  std::vector<std::string> failures;  ///< why each failed attempt failed
  int made = 0;
  bool interrupted = false;
};

// Why the cells stopped before the last: an interruption, or a binary that changed.
struct Stop {
  bool interrupted = false;
  std::string reason;  ///< the binary that changed
};

// ---- plan (sitting_plan.cpp)

std::string flavour_binary(const Setup& c, const Flavour& f);
// The store setting a cell runs with: its own (pair_on = "store"), else the matrix's.
std::string cell_store(const Setup& c, const Cell& cell);
// For the progress line's time left: how many cells after each one will run
// (not marked, not done before, their flavour's check not failed).
void count_cells_to_run(Context& c, const std::vector<Cell>& cells);
// The outcome of a cell an earlier run of this sitting finished, if one did
// (`quiet`: an unreadable result is not reported, as it will be when the cell comes).
std::optional<CellOutcome> done_before(const Setup& c, const Cell& cell, bool quiet = false);
// "; <flavour> has <transport> only where its SDK is installed: ..." for a
// transport its flavour file declares build_only, else "".
std::string build_only_note(const Setup& c, const Cell& cell);
// Each records a cell that is settled before it starts, or returns nullopt: one that
// cannot exist (marked), whose store lacks its service, whose flavour failed its
// check, or whose server or client is not built.
std::optional<CellOutcome> mark_if_impossible(const Setup& c, const Cell& cell);
std::optional<CellOutcome> skip_if_no_service(Context& c, const Cell& cell, std::size_t index);
std::optional<CellOutcome> check_failed_if(Context& c, const Cell& cell, std::size_t index);
std::optional<CellOutcome> unbuilt_if_missing(Context& c, const Cell& cell, std::size_t index);
// check-flavour for every flavour with cells to run; recorded in sitting.json. False when interrupted.
bool run_checks(Context& c, const std::vector<Cell>& cells, json& stamp);
std::uint64_t pairing_seed_for(const Matrix& mx, const json& previous);
std::vector<std::vector<std::size_t>> group_pending(const Matrix& mx, const std::vector<Cell>& cells,
                                                    const std::vector<std::size_t>& pending);
std::vector<std::pair<std::string, std::vector<std::string>>> series_units(const Matrix& mx);

// ---- attempt (sitting_attempt.cpp, sitting_rounds.cpp)

int cell_busy_poll(const Setup& c, const Cell& cell);
std::string cell_busy_poll_source(const Setup& c, const Cell& cell);
AttemptPlan plan_attempt(const Context& c, const Cell& cell, int attempt_no);
std::string cell_prefix(std::size_t index, std::size_t total);
std::string cell_label(const Setup& c, const Cell& cell);
bool start_process(const SpawnSpec& spec, const char* what, Child& child, Attempt& a);
bool wait_for_server(const Setup& c, AttemptPlan& p, Child& server, Attempt& a);
void point_client_at_ready_port(AttemptPlan& p, Attempt& a);
ClientRun supervise_client(const CellProgress& progress, const AttemptPlan& p, Child& server, Child& client,
                           bool stop_server = true);
void judge_client_run(const Setup& c, const AttemptPlan& p, const ClientRun& run, Attempt& a);
// A cell's attempts: one that fails in error is made again, up to the matrix's count.
Attempts run_attempts(Context& c, const Cell& cell, std::size_t index);
// Measures a group of cells in interleaved rounds; false when the sitting was interrupted.
bool run_paired_group(Context& c, const std::vector<Cell>& cells, const std::vector<std::size_t>& idx, json& stamp,
                      SittingResult& res);

// ---- stamp (sitting_stamp.cpp)

std::string ask_version(const std::string& path);
json effective_stamp(const Context& c, const Cell& cell, const AttemptPlan& p, int attempt_no);
std::map<std::string, Binary> hash_binaries(const Setup& c);
std::string changed_binary(const Setup& c, const std::map<std::string, Binary>& now);
json resume_stamp(SittingOptions& opt, const std::string& dir);
std::string resume_refusal(const Setup& c, const json& previous);
json start_stamp(const Setup& c, const json& previous);
json cell_sitting_stamp(const Setup& c, const json& stamp);
void end_stamp(json& stamp, const Stop& stop, const SittingResult& res);

// ---- store (sitting_store.cpp)

json workers_json(const Workers& w);
json check_json(const Setup& c, const std::string& flavour, bool full);
CellOutcome record_unrun(const Setup& c, const Cell& cell, CellState state, const std::string& marker,
                         const std::string& why);
CellOutcome record_cell(const Setup& c, const Cell& cell, const Attempts& t, json& stamp);
PairingRecord pairing_record(const PairedGroup& g, const PairedGroup::Member& s, const Cell& cell,
                             const std::vector<std::vector<std::size_t>>& orders,
                             const std::vector<std::vector<double>>& p50s, std::size_t member);
json member_result(const std::vector<json>& rounds, const std::vector<int>& round_of, double server_cpu_s,
                   const std::vector<std::string>& refusals, PairingRecord pairing);

// ---- the sitting (sitting.cpp)

void show_outcome(Context& c, std::size_t index, const CellOutcome& o);

}  // namespace kite::lab::detail
