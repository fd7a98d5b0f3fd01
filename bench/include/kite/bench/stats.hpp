// Run and cell figures, and the verdict of a cell (DESIGN.md "Run", "Verdict").
//
// A run is one measured phase; its figures come from its histograms. A cell
// is R runs: the median of each run figure, the true maximum, the mean of
// the per-run maxima, and the coefficient of variation (stdev / mean, sample
// standard deviation) of p50 and p99 across runs. Report-time code: it may
// allocate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kite/bench/histogram.hpp"

namespace kite::bench {

// Latency figures in microseconds.
struct Latency {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

Latency latency_of(const Histogram& h);

// How busy the load generator's thread was during a run: each pass of its
// loop polls once (epoll, or one direct recv with a single spinning
// session); a poll that brings nothing is empty. A pass that sent or
// received something is busy, and its whole duration (from its start to the
// next pass's start) counts as busy time. busy_share near 1 means the client
// itself bounds the rate; busy_us_per_order is then its cost per order.
struct ClientLoad {
  std::uint64_t polls = 0;
  std::uint64_t empty_polls = 0;
  double busy_s = 0, idle_s = 0;
  double empty_share() const noexcept {
    return polls ? static_cast<double>(empty_polls) / static_cast<double>(polls) : 0;
  }
  double busy_share() const noexcept { return busy_s + idle_s > 0 ? busy_s / (busy_s + idle_s) : 0; }
};

struct RunFigures {
  std::uint64_t count = 0;   // orders answered and recorded
  std::uint64_t errors = 0;  // rejects, unanswered orders, unexpected replies
  double achieved_rate = 0;  // accepted replies that arrived during the run, per second of it
  std::uint64_t max_in_flight = 0;
  std::uint64_t cap_hits = 0;  // open loop: due orders not sent because the in-flight cap was reached
  bool complete = true;        // the run lasted its duration with its sessions up
  Latency service;
  std::optional<Latency> response;  // open loop only
  ClientLoad client;
  std::optional<Latency> lateness;  // open loop: the client's own lateness in taking up its slots
  double busy_us_per_order() const noexcept { return count ? client.busy_s * 1e6 / static_cast<double>(count) : 0; }
};

struct CellLatency {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;  // medians of the runs' figures
  double max = 0;                              // the true maximum
  double mean_max = 0;                         // the mean of the per-run maxima
};

struct CellSummary {
  CellLatency service;
  std::optional<CellLatency> response;
  std::optional<CellLatency> lateness;  // open loop: the client's own schedule lateness (medians of the runs)
  double cv_p50 = 0, cv_p99 = 0;        // of the default view: response when open loop, else service
  double achieved_rate = 0;             // median
  std::uint64_t count = 0, errors = 0, max_in_flight = 0, cap_hits = 0;
  // Medians over the runs of the client's load figures (see ClientLoad).
  double client_empty_share = 0, client_busy_share = 0, client_busy_us_per_order = 0;
};

double median(std::vector<double> v);
// Coefficient of variation: sample standard deviation over mean; 0 for fewer
// than two values or a zero mean.
double coefficient_of_variation(const std::vector<double>& v);

CellSummary summarize(const std::vector<RunFigures>& runs);

struct Thresholds {
  double cv_p50 = 0.10;
  double cv_p99 = 0.25;
  double rate_fraction = 0.99;
  double response_over_service = 2.0;
};

enum class Verdict { ok, partial, saturated };
const char* to_string(Verdict v) noexcept;

struct VerdictResult {
  Verdict verdict = Verdict::ok;
  std::vector<std::string> reasons;  // empty for ok
};

// open_loop_rate: the target aggregate rate (orders/s) in open loop, 0 in
// closed loop. Saturation is judged first (it makes the CVs meaningless),
// then completeness and the CVs.
VerdictResult judge(const std::vector<RunFigures>& runs, const CellSummary& s, double open_loop_rate,
                    const Thresholds& t);

}  // namespace kite::bench
