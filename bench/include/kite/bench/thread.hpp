// Naming and pinning the calling thread (set-up time).
#pragma once

#include <string>
#include <vector>

namespace kite::bench {

// Names the calling thread (at most 15 characters are kept).
void name_this_thread(const char* name) noexcept;
// Pins the calling thread to one core; false (errno set) on failure. A
// negative core leaves the affinity alone and returns true.
bool pin_this_thread(int core) noexcept;
// Parses "0,1,3" or "2-5,7" into core numbers; throws std::invalid_argument.
std::vector<int> parse_core_list(const std::string& list);

}  // namespace kite::bench
