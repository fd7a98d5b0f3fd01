// The AVX-512 UTCTimestamp read out of line, for a portable build on a CPU
// with AVX-512 VBMI and VNNI (level.cpp points values.hpp's read at it):
// built with the avx512vbmi level's flags and VNNI (src/codec/CMakeLists.txt).
// It includes no other header of the codec: their inline functions, built
// here with these instructions, could stand in for the baseline's copies.
#include "kite/codec/detail/timestamp_avx512.hpp"

namespace kite::codec::detail {

// Declared for level.cpp in levels.hpp (a different signature would not link).
bool timestamp_word_avx512(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& fraction_digits,
                           std::size_t readable) noexcept {
  return utc_timestamp_avx512(c, n, nanos, fraction_digits, readable);
}

}  // namespace kite::codec::detail
