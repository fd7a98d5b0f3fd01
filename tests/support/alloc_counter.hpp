// Counts heap allocations in a test or benchmark binary that links the
// kite_alloc_counter object library, which replaces the global operator new
// and delete with counting versions (they also see allocations made inside
// shared libraries, such as QuickFIX's).
#pragma once

#include <cstdint>

namespace kite::test {

// Calls to any form of operator new since the process started.
std::uint64_t allocations() noexcept;

}  // namespace kite::test
