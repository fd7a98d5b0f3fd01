// Load sweeps (bench-run sweep): for chosen flavours on one transport and
// model, open-loop steps at rising aggregate rates (the rate series) and at
// rising session counts at one rate (the sessions series). Each step is a
// short cell of a stepped sitting (sitting.hpp), so it is stamped, audited
// and judged as a sitting's cells are. Each flavour and series gets a
// sweep.json with its steps and its knee: the highest step whose verdict is
// not saturated (DESIGN.md's rule: achieved rate, in-flight cap, response
// over service).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/sitting.hpp"

namespace kite::lab {

/// The series a sweep knows: "rate" and "sessions".
extern const std::vector<std::string> kSweepSeries;

struct SweepOptions {
  /// Machine, folders, audit, check, idle, busy poll and sitting name; its
  /// matrix (the default matrix) gives the thresholds, the in-flight cap,
  /// the attempts, the audit settings and the defaults below.
  SittingOptions sitting;
  std::vector<std::string> flavours;
  std::string transport = "kernel", model = "mono";
  std::vector<std::string> series = kSweepSeries;
  bool quick = false;  ///< shorter steps and fewer bisections

  // Zero, negative or empty: the default (sweep_plan fills them).
  int start_rate = 0;               ///< the rate series' first step (5,000/s)
  int max_rate = 0;                 ///< no step above it (1,000,000/s)
  int bisections = -1;              ///< steps between the last unsaturated and the first saturated rate (3; quick 2)
  int rate_sessions = 0;            ///< sessions of the rate series (the matrix's for the model)
  std::vector<int> session_counts;  ///< the sessions series (1, 8, 32, 128, 512, 1000 where the machine allows)
  int sessions_rate = 0;   ///< rate of the sessions series (the matrix's open rate, at most half the lowest knee)
  int client_threads = 0;  ///< bench_roundtrip client --threads (the machine's client cores)
  double warmup_s = -1, duration_s = -1;
  int runs = 0;
};

/// One flavour's series: its sweep.json.
struct SweepSeries {
  std::string flavour, series;
  std::string file;  ///< sweep.json, relative to the sitting's folder
  nlohmann::json doc;
};

struct SweepResult {
  SittingResult sitting;
  std::vector<SweepSeries> series;
  std::vector<std::string> notes;  ///< session counts left out and why, series skipped and why
};

/// Fills the defaults of `o` for its machine and matrix and checks every
/// option; throws ConfigError naming the option at fault. The notes say
/// which session counts the machine or a flavour leaves out.
void sweep_plan(SweepOptions& o, std::vector<std::string>& notes);

/// Runs the sweep: every flavour's rate series, then every flavour's sessions
/// series; writes <sitting>/sweep/<flavour>/<series>/sweep.json.
SweepResult run_sweep(SweepOptions o);

/// A series' sweep.json from its steps (in the order they ran): per step the
/// rate, sessions, verdict, response and service p50/p99/p99.9/max, achieved
/// rate, orders in flight, the client's lateness and which side was the
/// limit, the server's CPU per order and memory; the knee; for the sessions
/// series the memory per session. `settings` is copied in.
nlohmann::json sweep_document(const std::string& flavour, const std::string& series,
                              const std::vector<StepResult>& steps, const nlohmann::json& settings);

/// The step's limit when saturated: "client" when the client's own lateness
/// p50 is at least half the response p50 (the client could not keep its
/// schedule), else "server"; "" when not saturated or not measured.
std::string step_limit(const nlohmann::json& result);

/// A series as the terminal prints it.
std::string sweep_table(const SweepSeries& s);

}  // namespace kite::lab
