// The method version: the way the lab measures and judges a cell. Every result
// and sitting.json names it; a page shows one version as current and keeps the
// others as archives; `compare` refuses two versions as it refuses two epochs.
#pragma once

#include <string>

namespace kite::lab {

/// The current method: paired rounds (a matrix's `pairing = "rounds"`, the
/// default of the default and quick matrices). The cells of a group are
/// measured in interleaved rounds, one client per run, with the server CPU
/// and the audit per run; each member is judged by the median of its
/// per-round p50 ratios to the reference. Change it (v3...) whenever a change
/// to the client, the verdict rules or the lab makes new figures incomparable
/// with old ones; say what changed in method_summary() and docs/lab.md.
inline constexpr const char* kMethodVersion = "v2";

/// The sequential method: every cell on its own, one after another, one
/// client for its warm-up and all its runs (a matrix without `pairing`, and
/// load sweeps). Its figures are never compared with v2 figures.
inline constexpr const char* kSequentialMethodVersion = "v1";

/// One line on the current (paired) method.
inline std::string method_summary() {
  return "the cells that differ only in the flavour are measured in interleaved rounds (each member once per round, "
         "in a seeded random order, the others held with SIGSTOP; one client per run, the audit per run); each "
         "member is judged by the median of its per-round p50 ratios to the reference, with a 95% bootstrap "
         "interval: faster, slower or level; a cell's own verdict and figures are those of v1 over its rounds";
}

/// One line on the sequential method.
inline std::string sequential_method_summary() {
  return "open loop at a fixed aggregate rate, sent whether or not replies are outstanding; response time from "
         "the scheduled slot (the default view) and service time from the actual send; an open cell is judged on "
         "its response CVs, a closed cell on its service CVs";
}

/// The method of a sitting run with a matrix's `pairing` ("rounds" or "").
inline std::string method_for(const std::string& pairing) {
  return pairing == "rounds" ? kMethodVersion : kSequentialMethodVersion;
}

/// The summary of the method a matrix's `pairing` selects.
inline std::string method_summary_for(const std::string& pairing) {
  return pairing == "rounds" ? method_summary() : sequential_method_summary();
}

/// A result or sitting.json written before methods were recorded names none:
/// those were measured with v1, the only method the lab had then.
inline std::string method_of_record(const std::string& recorded) {
  return recorded.empty() ? kSequentialMethodVersion : recorded;
}

}  // namespace kite::lab
