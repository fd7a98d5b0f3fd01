// The scalar level: the target's portable scan (SSE2 on x86-64, which every
// x86-64 CPU has; SWAR elsewhere); on x86-64 the mask walk (mask_walk.hpp)
// over 64-byte blocks of four 16-byte compares.
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>

#include "mask_walk.hpp"
#endif

namespace kite::codec::detail {
namespace {

#if defined(__x86_64__)
struct ScalarLevelScan : Sse2Scan {
  // The mask walk's block: '=', SOH and digits of the 64 bytes at p.
  static void block(const char* p, std::uint64_t& eq, std::uint64_t& soh, std::uint64_t& digit) noexcept {
    const __m128i equals = _mm_set1_epi8('='), sohs = _mm_set1_epi8(kSoh);
    // Digits moved to -128..-119, the only bytes below -118 as signed.
    const __m128i shift = _mm_set1_epi8(static_cast<char>(0x80 - '0')), limit = _mm_set1_epi8(-118);
    eq = soh = digit = 0;
    for (unsigned i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      eq |= static_cast<std::uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, equals))) << (16 * i);
      soh |= static_cast<std::uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, sohs))) << (16 * i);
      digit |= static_cast<std::uint64_t>(_mm_movemask_epi8(_mm_cmplt_epi8(_mm_add_epi8(v, shift), limit))) << (16 * i);
    }
  }
  // (No Sum: the separate SSE2 checksum is as fast here.)
  // Inlined into the walk: a call would pass the arrays through memory.
  [[gnu::always_inline]] static std::uint32_t bulk_walk(const BulkArrays& a, const char* frame, std::size_t begin,
                                                        std::size_t end, std::uint32_t first, std::size_t& p,
                                                        std::uint64_t* sum) noexcept {
    return mask_walk<ScalarLevelScan>(a, frame, begin, end, first, p, sum);
  }
};
#else
using ScalarLevelScan = PortableScan;
#endif

}  // namespace

constinit const LevelOps kScalarOps = make_level_ops<ScalarLevelScan>(Level::scalar);

}  // namespace kite::codec::detail
