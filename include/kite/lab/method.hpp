// The method version: the way the lab measures and judges a cell. Every result
// and sitting.json names it; a page shows one version as current and keeps the
// others as archives; `compare` refuses two versions as it refuses two epochs.
#pragma once

#include <string>

namespace kite::lab {

/// The method this lab measures with. Change it (v2, v3...) whenever a change
/// to the client, the verdict rules or the lab makes new figures incomparable
/// with old ones; say what changed in method_summary() and docs/lab.md.
inline constexpr const char* kMethodVersion = "v1";

/// One line on what the current method is.
inline std::string method_summary() {
  return "open loop at a fixed aggregate rate, sent whether or not replies are outstanding; response time from "
         "the scheduled slot (the default view) and service time from the actual send; an open cell is judged on "
         "its response CVs, a closed cell on its service CVs";
}

/// The method of a matrix run in paired rounds (`pairing = "rounds"`): the
/// cells of a group are measured in interleaved rounds, one client per run,
/// with the server CPU and the audit per run, and each member is judged by
/// the median of its per-round p50 ratios to the reference. The page keeps
/// kMethodVersion as its current method until it reads v2 results.
inline constexpr const char* kPairedMethodVersion = "v2";

/// The method of a sitting run with a matrix's `pairing`.
inline std::string method_for(const std::string& pairing) {
  return pairing == "rounds" ? kPairedMethodVersion : kMethodVersion;
}

/// One line on the paired method.
inline std::string paired_method_summary() {
  return "the cells that differ only in the flavour are measured in interleaved rounds (each member once per round, "
         "in a seeded random order, the others held with SIGSTOP; one client per run); each member is judged by the "
         "median of its per-round p50 ratios to the reference, with a 95% bootstrap interval: faster, slower or "
         "level";
}

/// A result or sitting.json written before methods were recorded names none:
/// those were measured with v1, the only method the lab had then.
inline std::string method_of_record(const std::string& recorded) { return recorded.empty() ? "v1" : recorded; }

}  // namespace kite::lab
