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

/// A result or sitting.json written before methods were recorded names none:
/// those were measured with v1, the only method the lab had then.
inline std::string method_of_record(const std::string& recorded) { return recorded.empty() ? "v1" : recorded; }

}  // namespace kite::lab
