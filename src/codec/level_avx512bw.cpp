// The avx512bw level (Skylake-SP and later): built with -mavx512f/bw/vl/dq
// and BMI2 only (src/codec/CMakeLists.txt). The mask walk (mask_walk.hpp)
// with each mask of a 64-byte block from one compare; 64-byte checksum.
#include "avx512_walk.hpp"
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"
#include "mask_walk.hpp"

namespace kite::codec::detail {
namespace {
// GCC 12's AVX-512 headers start some vectors from _mm512_undefined (as in avx512_walk.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
struct Avx512BwScan : Avx512Scan<false> {
  static void block(const char* p, std::uint64_t& eq, std::uint64_t& soh, std::uint64_t& digit) noexcept {
    const __m512i v = _mm512_loadu_si512(p);
    eq = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('='));
    soh = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(kSoh));
    digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
  }
  using Sum = __m512i;
  static void sum_add(Sum& acc, const char* p) noexcept { acc = _mm512_add_epi8(acc, _mm512_loadu_si512(p)); }
  static void sum_masked(Sum& acc, const char* p, const unsigned char* mask) noexcept {
    acc = _mm512_add_epi8(acc, _mm512_and_si512(_mm512_loadu_si512(p), _mm512_loadu_si512(mask)));
  }
  static std::uint64_t sum_fold(Sum acc) noexcept {
    return static_cast<std::uint64_t>(_mm512_reduce_add_epi64(_mm512_sad_epu8(acc, _mm512_setzero_si512())));
  }
  // Inlined into the walk: a call would pass the arrays through memory.
  [[gnu::always_inline]] static std::uint32_t bulk_walk(const BulkArrays& a, const char* frame, std::size_t begin,
                                                        std::size_t end, std::uint32_t first, std::size_t& p,
                                                        std::uint64_t* sum) noexcept {
    return mask_walk<Avx512BwScan>(a, frame, begin, end, first, p, sum);
  }
};
#pragma GCC diagnostic pop
}  // namespace

constinit const LevelOps kAvx512BwOps = make_level_ops<Avx512BwScan>(Level::avx512bw);

}  // namespace kite::codec::detail
