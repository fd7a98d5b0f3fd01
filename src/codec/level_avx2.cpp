// The avx2 level (Haswell, Zen 1 and later): built with -mavx2, BMI1/2,
// POPCNT and LZCNT (src/codec/CMakeLists.txt). The mask walk (mask_walk.hpp)
// over 64-byte blocks of two 32-byte compares; 32-byte checksum.
#include <immintrin.h>

#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"
#include "mask_walk.hpp"

namespace kite::codec::detail {
namespace {

struct Avx2Scan : Sse2Scan {
  static __m256i at(const char* p) noexcept { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static std::uint32_t mask32(__m256i v, char c) noexcept {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(c))));
  }
  // Sum of the bytes modulo 256: bytes added in 8-bit lanes that may wrap,
  // one vpsadbw at the end. The last 1..31 bytes of a buffer of 32 or more
  // are the last 32 with those already summed masked off; a shorter buffer
  // goes to SSE2's.
  static std::uint32_t checksum(const char* p, const char* end) noexcept {
    alignas(32) static constexpr unsigned char kTailMask[64] = {
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    if (end - p < 32) return Sse2Scan::checksum(p, end);
    __m256i acc = _mm256_setzero_si256();
    for (; end - p >= 64; p += 64) acc = _mm256_add_epi8(acc, _mm256_add_epi8(at(p), at(p + 32)));
    for (; end - p >= 32; p += 32) acc = _mm256_add_epi8(acc, at(p));
    if (p != end) {
      const auto rest = static_cast<std::size_t>(end - p);  // 1..31
      const __m256i mask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + rest));
      acc = _mm256_add_epi8(acc, _mm256_and_si256(at(end - 32), mask));
    }
    const __m256i sums = _mm256_sad_epu8(acc, _mm256_setzero_si256());
    const __m128i folded = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    const auto total = static_cast<std::uint64_t>(_mm_cvtsi128_si64(folded)) +
                       static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(folded, folded)));
    return static_cast<std::uint32_t>(total & 0xFFu);
  }
  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    if (n > 64) n = 64;
    eq = 0;
    soh = 0;
    if (n == 0) return;
    alignas(32) char pad[64];
    if (n < 64) {  // a short tail: work on a zero-padded copy
      std::memset(pad, 0, sizeof pad);
      std::memcpy(pad, p, n);
      p = pad;
    }
    const __m256i lo = at(p), hi = at(p + 32);
    eq = mask32(lo, '=') | static_cast<std::uint64_t>(mask32(hi, '=')) << 32;
    soh = mask32(lo, kSoh) | static_cast<std::uint64_t>(mask32(hi, kSoh)) << 32;
  }
  // The mask walk's block: '=', SOH and digits of the 64 bytes at p.
  static void block(const char* p, std::uint64_t& eq, std::uint64_t& soh, std::uint64_t& digit) noexcept {
    const __m256i lo = at(p), hi = at(p + 32);
    eq = mask32(lo, '=') | static_cast<std::uint64_t>(mask32(hi, '=')) << 32;
    soh = mask32(lo, kSoh) | static_cast<std::uint64_t>(mask32(hi, kSoh)) << 32;
    // Digits moved to -128..-119, the only bytes below -118 as signed.
    const __m256i shift = _mm256_set1_epi8(static_cast<char>(0x80 - '0')), limit = _mm256_set1_epi8(-118);
    const auto digits32 = [&](__m256i v) noexcept {
      return static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(limit, _mm256_add_epi8(v, shift))));
    };
    digit = digits32(lo) | static_cast<std::uint64_t>(digits32(hi)) << 32;
  }
  using Sum = __m256i;
  static void sum_add(Sum& acc, const char* p) noexcept {
    acc = _mm256_add_epi8(acc, _mm256_add_epi8(at(p), at(p + 32)));
  }
  static void sum_masked(Sum& acc, const char* p, const unsigned char* mask) noexcept {
    const auto m = reinterpret_cast<const char*>(mask);
    acc =
        _mm256_add_epi8(acc, _mm256_add_epi8(_mm256_and_si256(at(p), at(m)), _mm256_and_si256(at(p + 32), at(m + 32))));
  }
  static std::uint64_t sum_fold(Sum acc) noexcept {
    const __m256i sums = _mm256_sad_epu8(acc, _mm256_setzero_si256());
    const __m128i folded = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
    return static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_add_epi64(folded, _mm_unpackhi_epi64(folded, folded))));
  }
  // Inlined into the walk: a call would pass the arrays through memory.
  [[gnu::always_inline]] static std::uint32_t bulk_walk(const BulkArrays& a, const char* frame, std::size_t begin,
                                                        std::size_t end, std::uint32_t first, std::size_t& p,
                                                        std::uint64_t* sum) noexcept {
    return mask_walk<Avx2Scan>(a, frame, begin, end, first, p, sum);
  }
};

}  // namespace

constinit const LevelOps kAvx2Ops = make_level_ops<Avx2Scan>(Level::avx2);

}  // namespace kite::codec::detail
