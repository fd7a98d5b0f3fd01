// The avx512bw level (Skylake-SP and later): built with -mavx512f/bw/vl/dq
// and BMI2 only (src/codec/CMakeLists.txt); the vector walk without VBMI.
#include "avx512_walk.hpp"
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"
#include "mask_walk.hpp"

namespace kite::codec::detail {
namespace {
struct Avx512BwScan : Avx512Scan<false> {
  static void block(const char* p, std::uint64_t& eq, std::uint64_t& soh, std::uint64_t& digit) noexcept {
    const __m512i v = _mm512_loadu_si512(p);
    eq = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('='));
    soh = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(kSoh));
    digit = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
  }
  // Inlined into the walk: a call would pass the arrays through memory.
  [[gnu::always_inline]] static std::uint32_t bulk_walk(const BulkArrays& a, const char* frame, std::size_t begin, std::size_t end,
                                                       std::uint32_t first, std::size_t& p, std::uint64_t*) noexcept {
    return mask_walk<Avx512BwScan>(a, frame, begin, end, first, p);
  }
};
}  // namespace

constinit const LevelOps kAvx512BwOps = make_level_ops<Avx512BwScan>(Level::avx512bw);

}  // namespace kite::codec::detail
