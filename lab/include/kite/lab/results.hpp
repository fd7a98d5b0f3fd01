// The results tree as the page and `compare` read it: hosts, their sittings,
// each cell's result, and the matrices composed from them.
//
// The current matrix of a host is composed across sittings: for every cell,
// the newest result that was measured in the host's current hardware epoch
// and the current method version, among the results measured with the
// reference matrix's settings. Other settings (quick sittings, sweeps),
// other epochs and other methods never enter it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"
#include "kite/lab/sitting.hpp"

namespace kite::lab {

/// The matrix whose settings are the reference of a host's current matrix.
inline constexpr const char* kReferenceMatrix = "default";

/// The effective settings that make two results of one cell comparable, by
/// name: sessions, rate (open) or think_us (closed), runs, duration_s,
/// warmup_s, network, busy_poll_usecs (kernel cells only), idle, audit.
using Settings = std::map<std::string, std::string>;

/// The typed records of a result file (its summary and pairing), private to
/// the lab (lab/src/result_schema.hpp): the page and compare read them there.
struct ResultRecord;

/// One cell's result file of a sitting.
struct StoredResult {
  Cell cell;
  CellState state = CellState::error;
  std::string marker;   ///< for marked cells
  std::string verdict;  ///< ok, partial, saturated, refused; "" when not measured
  std::string reason;   ///< the lab's reason (refusal, marker, error)
  std::string file;     ///< path relative to the results folder: <host>/<sitting>/<file>.json
  std::string method;   ///< method_of_record of its `method`
  Settings settings;
  std::string binary;                          ///< the server binary: sha256 (12 hex digits), "" when unknown
  nlohmann::json data;                         ///< the whole file
  std::shared_ptr<const ResultRecord> record;  ///< `data`'s summary and pairing, typed; null when not loaded

  bool measured() const { return state == CellState::measured; }
  /// What a matrix shows in place of figures: the marker, or the state (refused, unbuilt, error...).
  std::string word() const;
  /// p50 of a view ("response" or "service"); -1 when the result has none.
  double p50(const std::string& view) const;
};

struct StoredSitting {
  std::string host, name;
  std::string dir;         ///< its folder
  std::string start, end;  ///< UTC ISO times from sitting.json ("" when absent)
  std::string epoch;       ///< recorded epoch id
  std::string cpu_model;
  std::string cpu_text;     ///< CpuIdentity::text() of its `cpu`; "" for a sitting that predates it
  std::string method;       ///< method_of_record of its `method.version`
  std::string matrix_name;  ///< the matrix file's `name` (or its file name)
  nlohmann::json stamp;     ///< sitting.json
  Matrix matrix;            ///< its matrix file as recorded (defaults where it cannot be read)
  std::vector<StoredResult> results;
  /// A load sweep (sitting.json's `kind` "sweep", bench-run sweep): it has
  /// no matrix cells and never enters or sets a composed matrix.
  bool sweep = false;
  /// Its sweep.json files (one per flavour and series), each with `file`
  /// added: its path relative to the results folder.
  std::vector<nlohmann::json> sweeps;

  /// Settings of a cell of this sitting (from its matrix file and effective settings).
  Settings settings_for(const std::string& transport, const std::string& model, const std::string& loop) const;
  const StoredResult* find(const Cell& c) const;
  /// A sitting of the reference matrix run as the file says: no --network,
  /// --busy-poll-usecs, --idle or --no-audit override.
  bool runs_reference_matrix() const;
  /// Counts of its results by verdict or state ("ok", "partial", "refused", "marked", ...).
  std::map<std::string, int> outcome() const;
};

struct Host {
  std::string name;
  std::vector<StoredSitting> sittings;  ///< oldest first (by start time, then name)
};

/// Reads every sitting (a folder with sitting.json) of every host under
/// `results_dir` (the folder `site` excluded). An unreadable file is skipped
/// with a line in `warnings`.
std::vector<Host> load_results(const std::string& results_dir, std::vector<std::string>* warnings = nullptr);

/// Reads one sitting folder; throws std::runtime_error when its sitting.json cannot be read.
StoredSitting load_stored_sitting(const std::string& dir, const std::string& host = "");

/// A group of a host's sittings that may share a page: one epoch and one method.
struct Era {
  std::string epoch, method;
  std::string cpu_model, cpu_text;             ///< of its newest sitting
  std::string first, last;                     ///< start of its first and last sitting
  std::vector<const StoredSitting*> sittings;  ///< oldest first
  bool current = false;                        ///< the host's current epoch and the lab's method
  /// A folder name for its archive page: <epoch>-<method>.
  std::string id() const { return epoch + "-" + method; }
};

/// A host's eras, oldest first. The current epoch is the newest sitting's.
std::vector<Era> eras_of(const Host& h);

/// One cell of a composed matrix.
struct ComposedCell {
  const StoredResult* shown = nullptr;  ///< the newest measured result, else the newest result
  const StoredSitting* from = nullptr;  ///< the sitting of `shown`
  /// The newest result of the cell when it is not `shown` (a later refusal or error), else null.
  const StoredResult* newer_unmeasured = nullptr;
  const StoredSitting* newer_from = nullptr;
};

/// A matrix composed from sittings of one era.
struct ComposedMatrix {
  std::vector<std::string> rows;                          ///< transport/model, in the lab's order
  std::vector<std::pair<std::string, std::string>> cols;  ///< (loop, flavour)
  std::map<std::string, ComposedCell> cells;              ///< by Cell::id()
  const StoredSitting* reference = nullptr;               ///< whose settings are the reference (null: none)
  std::vector<const StoredSitting*> used;                 ///< sittings that gave at least one cell
  std::vector<const StoredSitting*> left_out;             ///< sittings of the era with other settings

  const ComposedCell* at(const Cell& c) const;
};

/// The matrix of an era: the reference is its newest sitting that
/// runs_reference_matrix(), else its newest sitting; a sitting's cell
/// enters when its settings equal the reference's for that cell's model and loop.
ComposedMatrix compose_era(const Era& era);
/// The matrix of one sitting alone.
ComposedMatrix compose_sitting(const StoredSitting& s);

/// The server binary a flavour's cells of a sitting ran: from sitting.json's binaries.
struct BinaryInfo {
  std::string path;     ///< as sitting.json keys it
  std::string sha256;   ///< full hex
  std::string version;  ///< its --version answer, or the build stamp its results carry
  std::string git;      ///< the git revision it names, "" when unknown
  std::string flags;    ///< its build flags, "" when unknown
  std::string install;  ///< the install it came from, "" for the build tree
};
BinaryInfo server_binary_of(const StoredSitting& s, const std::string& flavour);

/// Names the settings that differ, "network loopback -> netns", in key order.
std::vector<std::string> settings_differences(const Settings& before, const Settings& now);

}  // namespace kite::lab
