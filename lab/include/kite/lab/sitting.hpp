// A sitting: every cell of a matrix on one machine, audited and stamped,
// written under results/<host>/<sitting>/ (one JSON per cell + sitting.json).
//
// Exit codes of a sitting (bench-run returns them):
//   0  every cell is measured (whatever its verdict), marked (nopool, noshard,
//      unmeasurable, unsupported), unbuilt (its server binary is not built), or
//      refused by the audit with the reason in its result;
//   1  the inputs were wrong (machine, matrix or flavour file; options);
//   2  the sitting completed but at least one cell ended in error (the server
//      never became ready, a process crashed, the client could not measure)
//      or was not measured because its flavour failed its check (check-failed);
//   3  the sitting stopped: a binary or artifact changed during it, or resuming
//      a sitting whose binaries or artifacts changed;
//   130 interrupted (SIGINT/SIGTERM); the folder can be resumed.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"
#include "kite/lab/host.hpp"

namespace kite::lab {

struct SittingOptions {
  std::string source_dir;     ///< repository root
  std::string build_dir;      ///< where flavour binaries and bench_roundtrip are found
  std::string results_dir;    ///< default <source_dir>/results
  std::string flavours_dir;   ///< default <source_dir>/lab/flavours
  std::string client_binary;  ///< default <build_dir>/bench_roundtrip
  std::string sitting_name;   ///< default: UTC time; an existing folder of that name is resumed
  std::string resume_dir;     ///< resume this folder (its recorded machine and matrix are used)
  Machine machine;
  Matrix matrix;
  std::optional<int> busy_poll_usecs;  ///< overrides transports.kernel.busy_poll_usecs
  std::optional<std::string> idle;     ///< overrides the matrix's idle strategy
  std::optional<std::string> network;  ///< overrides the machine's network path
  /// --cells: run only these cells of the matrix (Matrix::cells' patterns), recorded for a resume.
  std::optional<std::vector<std::string>> cells;
  /// --one-sitting-per-cell: the name shared by the sittings of one series
  /// (recorded as overrides.one_sitting_per_cell; set by run_sitting_per_cell).
  std::string series;
  /// Measure each flavour's newest install (and take the client from cpp's
  /// when there is one) instead of the build tree; so does the matrix's
  /// `installed = true`. A flavour without an install: ConfigError.
  bool installed = false;
  /// flavour -> install id: a resumed sitting's installs, read from its sitting.json.
  std::map<std::string, std::string> pinned_installs;
  /// Where the host's provenance is read (sitting.json's `provenance`); a test points it at fakes.
  HostSources host_sources;
  bool audit = true;
  bool check = true;  ///< check-flavour each flavour with cells to run before the first cell (--no-check: false)
  bool build_site = true;
  bool progress = true;
  std::string command_line;
};

/// How a cell of a sitting ended. Its text (to_string) is the `lab.state` of
/// the cell's result file.
enum class CellState {
  measured,      ///< the client measured it, and the audit passed or was off
  refused,       ///< measured, but the audit refused the set-up: no figures published
  marked,        ///< never run: nopool, noshard, unmeasurable or unsupported (the marker says)
  unbuilt,       ///< never run: its server binary, a required command, an artifact or the client is missing
  error,         ///< every attempt failed (the reason says how)
  check_failed,  ///< never run: its flavour failed check-flavour at the start of the sitting (the reason lists the
                 ///< failures)
};

/// "measured", "refused", "marked", "unbuilt", "error" or "check-failed".
std::string to_string(CellState s);
/// The state a result file's text names; nullopt for any other text.
std::optional<CellState> cell_state_from_string(std::string_view text);
/// Writes to_string(s) (for messages and test failures).
std::ostream& operator<<(std::ostream& out, CellState s);

struct CellOutcome {
  Cell cell;
  CellState state = CellState::error;
  std::string marker;   ///< for marked cells
  std::string verdict;  ///< ok, partial, saturated, refused ("" otherwise)
  double p50 = -1;      ///< default view: response in open loop, service in closed
  double service_p50 = -1;
  std::string reason;
  bool reused = false;  ///< kept from an interrupted run of the same sitting
};

struct SittingResult {
  std::string dir;
  std::vector<CellOutcome> cells;
  int exit_code = 0;
  std::string message;
};

/// Runs (or resumes) a sitting. Throws ConfigError for bad inputs.
SittingResult run_sitting(SittingOptions opt);

/// --one-sitting-per-cell: each cell the matrix (and its selection) plans
/// runs in a sitting of its own, named <base>-<flavour>_<transport>_<model>_<loop>
/// (<base>: opt.sitting_name, else UTC time). A paired matrix (pairing =
/// "rounds") runs one sitting per group instead (<base>-<transport>_<model>_<loop>),
/// since a member is judged against the reference of its own rounds. Stops
/// after a sitting that exits 3 or 130. Not resumable as a series: each
/// sitting resumes on its own (--resume DIR). The page is built once at the end.
std::vector<SittingResult> run_sitting_per_cell(SittingOptions opt);
/// The exit code of a series: 130 or 3 when a sitting stopped so, else the highest.
int series_exit_code(const std::vector<SittingResult>& results);

/// One step of a stepped sitting (a sweep): a cell run with its own sessions
/// and open-loop rate, by the sitting's runner (same stamp, audit, attempts
/// and verdict), its result written to <sitting>/<dir>/<name>.json.
struct Step {
  Cell cell;
  int sessions = 1;
  int rate = 0;             ///< open loop, aggregate orders/s
  int client_threads = 1;   ///< bench_roundtrip client --threads
  std::string dir;          ///< folder under the sitting's, e.g. "sweep/cpp/rate"
  std::string name;         ///< file stem, e.g. "step-01"
  std::string label;        ///< what the progress line calls it
  std::size_t planned = 0;  ///< steps planned at most, this one included (the progress line's total)
};

struct StepResult {
  Step step;
  CellOutcome outcome;
  nlohmann::json result;  ///< the step's result file as written
  std::string file;       ///< relative to the sitting's folder
};

/// Chooses the next step from the steps run so far; nullopt ends the sitting.
using StepPlanner = std::function<std::optional<Step>(const std::vector<StepResult>& done)>;

/// Runs a sitting whose cells are chosen as it goes (bench-run sweep): set up,
/// hashed, stamped (sitting.json's `kind` is "sweep") and checked as
/// run_sitting does, `opt.matrix` naming the flavours, transport, model and
/// loop that check-flavour plays and giving the runs, thresholds and audit.
/// Each step's outcome is appended to `steps`. Not resumable. The results
/// page is not rebuilt. Exit codes as run_sitting's.
SittingResult run_stepped_sitting(SittingOptions opt, const StepPlanner& next, std::vector<StepResult>& steps);

/// Reads a cell's result file into an outcome (for the matrix, resume, compare).
/// Throws when it has no cell or names no cell state.
CellOutcome outcome_from_json(const nlohmann::json& j);

/// Loads every cell file of a sitting folder.
std::vector<CellOutcome> load_sitting_cells(const std::string& dir);

}  // namespace kite::lab
