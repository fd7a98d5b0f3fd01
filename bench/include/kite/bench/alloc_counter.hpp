// Counts heap allocations in a benchmark or test binary that links the
// kite_alloc_counter object library, which replaces the global operator new
// and delete with counting versions (they also see allocations made inside
// shared libraries, such as QuickFIX's).
#pragma once

#include <cstdint>

namespace kite::bench {

// Calls to any form of operator new since the process started, but for
// those made while counting was off.
std::uint64_t allocations() noexcept;

// Counting is on from the start. Off, operator new is malloc and one
// predictable test: a benchmark times a peer's allocating code without the
// counter's atomic add (a locked instruction per allocation) charged to it.
void set_counting(bool on) noexcept;

}  // namespace kite::bench
