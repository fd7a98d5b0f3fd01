// The result of one cell: the JSON the lab reads (schema 1, see
// docs/bench_roundtrip.md and DESIGN.md "Contracts") and the human summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kite/bench/stats.hpp"

namespace kite::bench {

struct Stamp {
  std::string binary = "bench_roundtrip";
  std::string build_flags;
  std::string compiler;
  std::string git;
  std::string codec_level;  // the codec's level in use (kite/codec/level.hpp)
};

struct CellResult {
  std::string flavour, transport, model, loop;  // loop: "closed" or "open"
  unsigned sessions = 1;
  double rate = 0;  // open-loop target, 0 in closed loop
  double think_us = 0;
  double warmup_s = 0, duration_s = 0;
  std::string clock_method;
  double tsc_ghz = 0;
  std::string idle;
  unsigned client_threads = 1;
  std::uint64_t orders_total = 0;  // answered over the warm-up and every run (the server's CPU per order divides by it)
  std::vector<RunFigures> runs;
  CellSummary summary;
  VerdictResult verdict;
  Thresholds thresholds;
  std::vector<std::pair<double, double>> cdf;  // (latency in us, cumulative fraction)
  Stamp stamp;
};

// The result as JSON text (schema 1).
std::string to_json(const CellResult& r);
// Reads what to_json wrote (extra keys a lab adds are ignored). Throws
// std::runtime_error naming the first key that is missing or of the wrong type.
CellResult cell_result_from_json(const std::string& text);
// A table per run and the cell summary with its verdict.
void print_summary(std::FILE* out, const CellResult& r);

}  // namespace kite::bench
