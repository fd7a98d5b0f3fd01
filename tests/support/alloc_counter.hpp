// The tests count allocations with the bench's counter (target
// kite_alloc_counter, kite/bench/alloc_counter.hpp), under the tests' names.
#pragma once

#include "kite/bench/alloc_counter.hpp"

namespace kite::test {
using kite::bench::allocations;
using kite::bench::set_counting;
}  // namespace kite::test
