// The typed records of a cell's result file that the lab both writes and
// reads back: the pairing record of a paired (v2) member, and the summary the
// page, compare and sweeps show. Each has one to_json (what the writer
// calls) and one from_json (what every reader goes through), so a key is
// spelled in one place. Private to the lab's sources.
//
// Reading tolerates older results: a key a sitting did not write yet reads
// as absent (nullopt), and so does a key written as null ("none"). A key of
// the wrong type is an error naming it (ResultSchemaError).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/results.hpp"

namespace kite::lab {

/// A result key of the wrong type: what() names the key ("pairing.ratio.low: ...").
struct ResultSchemaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A member's median ratio to the reference and its interval.
struct RatioRecord {
  double median = 0, low = 0, high = 0;
  bool operator==(const RatioRecord&) const = default;
};

/// A result's `pairing` (docs/lab.md "Paired sittings"). `mode` "rounds": a
/// member of a paired group; "sequential": the only member of its group that
/// ran, measured on its own (`reason` says so).
struct PairingRecord {
  std::string mode;
  std::optional<std::string> reason;     ///< sequential only
  std::optional<std::string> group, on;  ///< `on`: "flavour" or "store" (absent before pair_on)
  std::optional<std::vector<std::string>> members;
  std::optional<std::string> reference;
  std::optional<std::uint64_t> seed;
  std::optional<int> rounds;
  std::optional<std::string> stop;  ///< "target", "round limit", "run budget"
  std::optional<double> target, resolution, width_reached;
  std::optional<int> runs, budget_runs;
  std::optional<bool> bracketed;
  std::optional<std::vector<std::vector<std::size_t>>> orders;
  std::optional<std::vector<std::optional<double>>> p50_per_round;  ///< nullopt: none that round
  std::optional<std::vector<double>> ratios;
  /// Written in every rounds record, null for the reference and a member without ratios.
  std::optional<RatioRecord> ratio;
  /// A member other than the reference carries `verdict`, null without a
  /// ratio; the reference's record has no `verdict` key at all.
  bool judged = false;
  std::optional<std::string> verdict;  ///< "faster", "slower", "level"
  std::optional<std::vector<std::string>> refused_rounds;
  /// Rounds (from 1) whose bracket was unsteady: the reference moved far beyond its usual spread, no ratio.
  std::optional<std::vector<std::size_t>> unsteady_rounds;

  bool paired() const { return mode == "rounds"; }
  bool operator==(const PairingRecord&) const = default;
};

/// sitting.json's `pairing` (a paired sitting's rule and seed, read back on resume).
struct SittingPairingRecord {
  std::string mode = "rounds";
  std::optional<std::string> reference;
  std::optional<double> target, resolution;
  std::optional<int> min_rounds, max_rounds, budget_rounds;
  std::optional<std::uint64_t> seed;
  bool operator==(const SittingPairingRecord&) const = default;
};

/// Latency figures of one view in us (bench's CellLatency, or a run's and a
/// sweep step's subset of it).
struct LatencyRecord {
  std::optional<double> p50, p90, p99, p999, max, mean_max;
  bool operator==(const LatencyRecord&) const = default;
};

/// A result's `summary` (bench/src/result.cpp writes it): the medians over
/// the runs. `cv` and `client` are flattened.
struct SummaryRecord {
  std::optional<LatencyRecord> service, response;
  std::optional<double> cv_p50, cv_p99;
  std::optional<double> achieved_rate;
  std::optional<std::int64_t> count, errors, max_in_flight, cap_hits;
  std::optional<double> client_empty_share, client_busy_share, client_busy_us_per_order;
  std::optional<LatencyRecord> lateness;  ///< client.lateness (open loop)

  /// The view's latency ("service" or "response"); null when absent.
  const LatencyRecord* view(const std::string& name) const;
  bool operator==(const SummaryRecord&) const = default;
};

nlohmann::json to_json(const RatioRecord& r);
nlohmann::json to_json(const PairingRecord& p);
nlohmann::json to_json(const SittingPairingRecord& p);
nlohmann::json to_json(const LatencyRecord& l);
nlohmann::json to_json(const SummaryRecord& s);

/// Each reads what its to_json writes; `where` names the key read ("pairing")
/// in errors. Throws ResultSchemaError for a key of the wrong type.
RatioRecord ratio_record_from_json(const nlohmann::json& j, const std::string& where = "ratio");
PairingRecord pairing_record_from_json(const nlohmann::json& j, const std::string& where = "pairing");
SittingPairingRecord sitting_pairing_record_from_json(const nlohmann::json& j,
                                                      const std::string& where = "sitting.json pairing");
LatencyRecord latency_record_from_json(const nlohmann::json& j, const std::string& where);
SummaryRecord summary_record_from_json(const nlohmann::json& j, const std::string& where = "summary");

/// One step of a load sweep as its sweep.json holds it (sweep_document()).
struct SweepStepRecord {
  int step = 0;  ///< from 1, in the order the steps ran
  std::string file;
  int rate = 0, sessions = 0;
  std::string state;                   ///< the cell state of its result
  std::optional<std::string> verdict;  ///< null when not measured
  nlohmann::json verdict_reasons = nlohmann::json::array();
  std::optional<std::string> reason;  ///< why it was not measured
  // A measured step's figures, each written (null when the result lacks it).
  std::optional<LatencyRecord> response, service, lateness;  ///< p50, p99, p99.9, max
  std::optional<double> achieved_rate, busy_share;
  std::optional<std::int64_t> max_in_flight, cap_hits;
  int client_threads = 1;
  std::optional<std::string> limit;  ///< a saturated step's: "client" or "server"
  nlohmann::json server;             ///< the result's `server` as the lab wrote it (null without one)

  bool measured() const { return state == "measured"; }
  /// The step's rate ("rate" series) or session count ("sessions").
  int x(const std::string& series) const { return series == "rate" ? rate : sessions; }
  /// The server's figures from `server`; nullopt when absent.
  std::optional<double> server_cpu_us_per_order() const;
  std::optional<double> server_rss_kb() const;
  bool operator==(const SweepStepRecord&) const = default;
};

/// A series' knee (the highest step not saturated) or the lowest saturated step above it.
struct SweepMarkRecord {
  int x = 0;  ///< its rate or sessions, as the series goes
  int step = 0;
  std::optional<LatencyRecord> response;  ///< the knee's (written, null when none)
  std::optional<std::string> limit;       ///< the saturated step's (written, null when none)
  bool operator==(const SweepMarkRecord&) const = default;
};

/// A flavour's series of a load sweep: its sweep.json.
struct SweepRecord {
  std::string flavour, series;  ///< series: "rate" or "sessions"
  std::optional<std::string> method, transport, model;
  nlohmann::json settings = nlohmann::json::object();  ///< what the series ran with (run_sweep's)
  std::vector<SweepStepRecord> steps;
  std::optional<SweepMarkRecord> knee, saturated_from;  ///< written, null when none
  std::optional<double> memory_per_session_bytes;       ///< the sessions series' (written, null when unknown)
  std::optional<std::string> file;  ///< its path under the results folder, added when a sitting is loaded

  bool by_rate() const { return series == "rate"; }
  /// "rate" or "sessions": the key of a step's or a mark's x.
  const char* x_key() const { return by_rate() ? "rate" : "sessions"; }
  bool operator==(const SweepRecord&) const = default;
};

nlohmann::json to_json(const SweepStepRecord& s);
nlohmann::json to_json(const SweepRecord& s);
SweepStepRecord sweep_step_record_from_json(const nlohmann::json& j, const std::string& where);
SweepRecord sweep_record_from_json(const nlohmann::json& j, const std::string& where = "sweep.json");

/// A result file's typed records, read once when it is loaded.
struct ResultRecord {
  SummaryRecord summary;                 ///< empty when the result has none (not measured, refused)
  std::optional<PairingRecord> pairing;  ///< absent: a v1 result, or one that predates pairing
};

/// The records of a whole result file (its `summary` and `pairing`).
ResultRecord result_record_from_json(const nlohmann::json& result);

/// A loaded result's records (StoredResult::record); empty ones when it has none.
const SummaryRecord& summary_of(const StoredResult& r);
const PairingRecord* pairing_of(const StoredResult& r);

}  // namespace kite::lab
