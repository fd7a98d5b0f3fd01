// The levels' tables, each defined in its own translation unit built for its
// instructions (level_*.cpp); level.cpp picks one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kite/codec/detail/level_ops.hpp"

namespace kite::codec::detail {

extern const LevelOps kScalarOps;
#if defined(__x86_64__)
#define KITE_CODEC_X86_LEVELS 1
extern const LevelOps kAvx2Ops;
extern const LevelOps kAvx512BwOps;
extern const LevelOps kAvx512VbmiOps;
// values.hpp's UTCTimestamp read with AVX-512 VBMI and VNNI (timestamp_avx512.cpp).
bool timestamp_word_avx512(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& fraction_digits,
                           std::size_t readable) noexcept;
#endif

}  // namespace kite::codec::detail
