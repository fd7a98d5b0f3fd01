// The AVX-512 levels' scan (level.hpp): Avx512Scan<true> needs VBMI and
// VBMI2 (avx512vbmi) and has the vector walk of the index below,
// Avx512Scan<false> only F, BW, VL (avx512bw, whose walk is the mask walk,
// mask_walk.hpp). Included only by the translation units built for those
// instructions (level_avx512*.cpp).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kite/codec/field_index.hpp"
#include "kite/codec/scan.hpp"
#include "tag_ends.hpp"

namespace kite::codec::detail {

// The vector walk looks the tags below kVectorLengthTagLimit up in the
// length-tag table's first words (two vectors) and sends any tag from
// kFirstHighLengthTag on to its scalar check: no length tag lies between.
inline constexpr std::uint32_t kVectorLengthTagLimit = 640;
inline constexpr std::uint32_t kFirstHighLengthTag = [] {
  for (const LengthDataPair& p : kLengthDataPairs)
    if (p.length_tag >= kVectorLengthTagLimit) return p.length_tag;
  return kLastLengthTag + 1;
}();

// GCC 12's AVX-512 headers start some vectors from _mm512_undefined, which
// -Wuninitialized reports wherever they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// A block of 64 bytes is one masked load (bytes past n are neither read nor
// faulted on) and one compare per mask. find stays SSE2's.
template <bool kVbmi>
struct Avx512Scan : Sse2Scan {
  // Sum of the bytes modulo 256: vpsadbw folds each 64-byte block into eight
  // 64-bit lanes; the tail is one masked load.
  static std::uint32_t checksum(const char* p, const char* end) noexcept {
    const __m512i zero = _mm512_setzero_si512();
    __m512i acc = zero;
    auto n = static_cast<std::size_t>(end - p);
    for (; n >= 64; p += 64, n -= 64) acc = _mm512_add_epi64(acc, _mm512_sad_epu8(_mm512_loadu_si512(p), zero));
    if (n != 0)
      acc = _mm512_add_epi64(
          acc, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, static_cast<unsigned>(n)), p), zero));
    return static_cast<std::uint32_t>(_mm512_reduce_add_epi64(acc)) & 0xFFu;
  }
  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    const __mmask64 m = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(m, p);
    eq = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('='));
    soh = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\x01'));
  }
  static std::uint32_t bulk_walk(const BulkArrays& a, const char* frame, std::size_t begin, std::size_t end,
                                 std::uint32_t first, std::size_t& p, std::uint64_t* sum) noexcept requires kVbmi;
};

// The AVX-512 VBMI walk: the frame's structure and its tags from a few vector
// instructions per 64-byte block, then a short scalar loop per field.
//
// Per block, bits for '=' (eq), SOH (soh) and digits (digit). A tag starts at
// the frame's first byte and after every SOH (starts). Adding starts to digit
// carries through each run of digits that begins at a start and lands on the
// byte after it: ends = (digit + starts) & ~digit marks every tag's end, and
// digit & ~(digit + starts) every tag's bytes (the digits the carry cleared).
// The frame suits this walk when every start
// is a digit other than '0' and every end is an '=' (values may hold '=' and
// digits: only runs that begin at a start count). The positions of the ends
// and SOHs are compressed out of the masks as byte offsets 0..63
// (vpcompressb). Each tag's value is made of the 4 bytes before its '=' in
// this block's and the previous block's tag digits (zero outside tags, so
// the bytes before a short tag count as leading zeros): they are permuted
// out (vpermb) and summed by two multiply-adds (x10 + y, then x100 + y). A
// tag of 5 or more digits is redone in scalar code.
//
// It indexes the fields of [begin, end) after the first `first` fields of
// the index, returns how many it indexed and sets p to where the general walk
// must go on: begin when the bytes do not suit it (the general walk then
// finds the error, or the data field that broke the pattern), else the start
// of the first field it did not take (a length field, which a data field may
// follow; a tag of 8 or more digits), or end. It writes the slots of the
// fields it indexed only (first field wins among them).
//
// With sum not null it also adds up the bytes of [0, end) for the checksum:
// the blocks it loads, and [0, begin) in one more load (begin <= 64 only).
template <bool kVbmi>
[[gnu::always_inline]] inline std::uint32_t Avx512Scan<kVbmi>::bulk_walk(const BulkArrays& a, const char* frame,
                                                                         std::size_t begin, std::size_t end,
                                                                         std::uint32_t first, std::size_t& p,
                                                                         std::uint64_t* sum) noexcept requires kVbmi {
  constexpr std::uint32_t kDirectTags = FieldIndex::kDirectTags;
  FieldRef* const fields = a.fields;
  std::uint32_t* const slots = a.slots;
  std::uint32_t* const ends_at = a.ends;
  std::uint32_t* const sohs_at = a.sohs;
  std::uint32_t* const tags_at = a.tags;
  const std::uint32_t capacity = a.capacity;
  const std::uint32_t generation_bits = a.generation_bits;
  p = begin;
  if (frame[end - 1] != kSoh) return 0;

  struct Tables {
    alignas(64) std::uint8_t offsets[64];  // 0..63
    // For the dword lane k of group g, four times the byte index 16g + k.
    alignas(64) std::uint8_t spread[4][64];
    // Added to each spread byte: the 4 bytes before the '=', as indexes into
    // the previous block's digits (0..63) and this block's (64..127).
    alignas(64) std::uint8_t before[64];
  };
  static constexpr Tables kT = [] {
    Tables t{};
    for (unsigned i = 0; i < 64; ++i) {
      t.offsets[i] = static_cast<std::uint8_t>(i);
      for (unsigned g = 0; g < 4; ++g) t.spread[g][i] = static_cast<std::uint8_t>(16 * g + i / 4);
      t.before[i] = static_cast<std::uint8_t>(60 + i % 4);
    }
    return t;
  }();
  const __m512i offsets = _mm512_load_si512(kT.offsets);
  const __m512i before = _mm512_load_si512(kT.before);
  const __m512i tens = _mm512_set1_epi16(0x010A);          // bytes 10, 1
  const __m512i hundreds = _mm512_set1_epi32(0x00010064);  // words 100, 1
  // Up to 64 byte offsets, widened to positions and stored 16 at a time (the
  // arrays have room for a partial vector past the count).
  const auto store_positions = [](std::uint32_t* out, __m512i bytes, unsigned n, std::uint32_t base) noexcept {
    const __m512i b = _mm512_set1_epi32(static_cast<int>(base));
    _mm512_storeu_si512(out, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(bytes)), b));
    if (n > 16) [[unlikely]] {
      _mm512_storeu_si512(out + 16, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 1)), b));
      if (n > 32) {
        _mm512_storeu_si512(out + 32, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 2)), b));
        if (n > 48)
          _mm512_storeu_si512(out + 48, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 3)), b));
      }
    }
  };

  std::uint32_t n_ends = 0, n_sohs = 0;
  std::uint64_t bad = 0, soh_carry = 1, run_carry = 0;
  __m512i previous_digits = _mm512_setzero_si512();
  // The checksum's bytes, when it is wanted, added in 64 byte lanes that
  // wrap (only the sum modulo 256 counts); folded by one vpsadbw at the end.
  // A header of more than 64 bytes is left to the caller.
  const bool summing = sum != nullptr && begin <= 64;
  __m512i bytes_sum = _mm512_setzero_si512();
  if (summing) bytes_sum = _mm512_maskz_loadu_epi8(_bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(begin)), frame);
  // One block of 64 bytes at base, `valid` marking those before end; false
  // when the arrays could overflow (the general walk then reports it).
  const auto block = [&](std::size_t base, std::uint64_t valid) __attribute__((always_inline)) {
    const __m512i v = _mm512_maskz_loadu_epi8(valid, frame + base);
    if (sum != nullptr) bytes_sum = _mm512_add_epi8(bytes_sum, v);  // known where inlined: no test per block
    const std::uint64_t eq = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('='));
    const std::uint64_t soh = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(kSoh));
    const __m512i value = _mm512_sub_epi8(v, _mm512_set1_epi8('0'));
    const __mmask64 digit_k = _mm512_cmplt_epu8_mask(value, _mm512_set1_epi8(10));
    const std::uint64_t digit = digit_k;
    const std::uint64_t leading = _mm512_mask_cmpneq_epi8_mask(digit_k, value, _mm512_setzero_si512());  // 1..9
    std::uint64_t sum_bits;
    const std::uint64_t starts = block_tag_starts(soh, digit, valid, soh_carry, run_carry, sum_bits);
    const std::uint64_t ends = sum_bits & ~digit, tag_bits = digit & ~sum_bits;
    bad |= (starts & ~leading) | (ends & ~eq);
    const auto n_e = static_cast<unsigned>(_mm_popcnt_u64(ends));
    const auto n_s = static_cast<unsigned>(_mm_popcnt_u64(soh));
    // Ends and SOHs lie on the bytes walked: at most base + 64 - begin each
    // so far, so the counts are checked only when the arrays could fill.
    if (base + 64 - begin > capacity && (n_ends + n_e > capacity || n_sohs + n_s > capacity)) [[unlikely]]
      return false;
    const auto at = static_cast<std::uint32_t>(base);
    const __m512i digits = _mm512_maskz_mov_epi8(tag_bits, value);  // tag digits, zero elsewhere
    const __m512i end_offsets = _mm512_maskz_compress_epi8(ends, offsets);
    store_positions(ends_at + n_ends, end_offsets, n_e, at);
    store_positions(sohs_at + n_sohs, _mm512_maskz_compress_epi8(soh, offsets), n_s, at);
    const auto tags16 = [&](unsigned g) __attribute__((always_inline)) {  // the tags of ends g..g+15
      const __m512i index =
          _mm512_add_epi8(_mm512_permutexvar_epi8(_mm512_load_si512(kT.spread[g / 16]), end_offsets), before);
      const __m512i four = _mm512_permutex2var_epi8(previous_digits, index, digits);
      _mm512_storeu_si512(tags_at + n_ends + g, _mm512_madd_epi16(_mm512_maddubs_epi16(four, tens), hundreds));
    };
    tags16(0);  // (with no ends, stores that the next block or the count leave unread)
    for (unsigned g = 16; g < n_e; g += 16) [[unlikely]] tags16(g);
    previous_digits = digits;
    n_ends += n_e;
    n_sohs += n_s;
    return true;
  };
  // Whole blocks, then the last (1 to 64 bytes; BZHI keeps all 64 bits for 64).
  std::size_t base = begin;
  for (; end - base > 64; base += 64)
    if (!block(base, ~std::uint64_t{0})) return 0;
  if (!block(base, _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(end - base)))) return 0;
  if (summing) {  // eight sums of 8 lanes, their low bytes (vpmovqb: modulo 256 is all that counts), their sum
    const __m128i low_bytes = _mm512_cvtepi64_epi8(_mm512_sad_epu8(bytes_sum, _mm512_setzero_si512()));
    *sum = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_sad_epu8(low_bytes, _mm_setzero_si128())));
  }
  if (bad != 0 || run_carry != 0 || n_ends != n_sohs || n_ends == 0) return 0;

  // Checks, 16 fields at a time, in order: a lane needs scalar work when the
  // vector sum saw too little (a tag of 5 or more digits) or too much (the
  // previous tag's last digit, when that field was 3 bytes: "1=" and its SOH
  // right before a 1-digit tag), or when its tag is a length field (a data
  // field may follow: the walk stops there) or, from kFirstHighLengthTag on,
  // may be one (the scalar code looks those up).
  alignas(64) static constexpr std::uint32_t kReverse[16] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  // The first n of 16 lanes (BZHI reads only 8 bits of its count: clamp first).
  const auto lanes_below = [](std::uint32_t n) noexcept {
    return static_cast<__mmask16>(_bzhi_u32(0xFFFFu, n < 16 ? n : 16));
  };
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i four = _mm512_set1_epi32(4);
  // kLengthTags' first 64-bit words read as 32-bit ones (bit t % 32
  // of word t / 32, little-endian): 20 words, in two vectors for a permute.
  static_assert(kVectorLengthTagLimit == 20 * 32 && sizeof kLengthTags.words >= 20 * 4);
  const __m512i words_lo = _mm512_loadu_si512(kLengthTags.words);
  const __m512i words_hi = _mm512_maskz_loadu_epi32(0x000F, kLengthTags.words + 8);
  std::uint32_t taken = n_ends;  // fields the walk indexes
  p = end;
  // The fields from i, in e, s and t (their ends, SOHs and tags, lanes past
  // n_ends zero), checked; false when the walk stops among them (taken and
  // p then say where). Tags the scalar code redoes are stored in tags_at.
  const auto check = [&](std::uint32_t i, __m512i e, __m512i s, __m512i t, __m512i previous_soh, __m512i previous_end,
                         bool& patched) __attribute__((always_inline)) {
    const __mmask16 in = lanes_below(n_ends - i);
    const __m512i f = _mm512_add_epi32(_mm512_alignr_epi32(s, previous_soh, 15), one);
    const __m512i pe = _mm512_alignr_epi32(e, previous_end, 15);
    const __m512i word = _mm512_permutex2var_epi32(words_lo, _mm512_srli_epi32(t, 5), words_hi);
    const __mmask16 special =
        in & (_mm512_cmpgt_epu32_mask(_mm512_sub_epi32(e, f), four) |
              _mm512_cmplt_epu32_mask(_mm512_sub_epi32(e, pe), four) |
              (_mm512_cmplt_epu32_mask(t, _mm512_set1_epi32(kVectorLengthTagLimit)) &
               _mm512_test_epi32_mask(_mm512_srlv_epi32(word, _mm512_and_si512(t, _mm512_set1_epi32(31))), one)) |
              _mm512_cmpge_epu32_mask(t, _mm512_set1_epi32(kFirstHighLengthTag)));
    if (special == 0) [[likely]]
      return true;
    patched = true;
    std::uint32_t fs[16];
    _mm512_storeu_si512(fs, f);
    for (unsigned m = special; m != 0; m &= m - 1) {
      const auto j = static_cast<unsigned>(__builtin_ctz(m));
      const std::uint32_t from = fs[j], to = ends_at[i + j];
      std::uint32_t tag = 0;
      if (to - from <= 7) {
        for (std::uint32_t d = from; d < to; ++d) tag = tag * 10 + (static_cast<unsigned char>(frame[d]) - '0');
      }
      if (to - from > 7 || is_length_tag(tag)) {  // the general walk takes it from here
        taken = i + j;
        p = from;
        return false;
      }
      tags_at[i + j] = tag;
    }
    return true;
  };

  // The fields, as {tag, offset, length}, and their slots, 16 at a time from
  // the last: a scatter writes its lanes in order, so with the fields in
  // reverse lane order and the vectors taken last to first, each slot ends
  // up holding the first field with its tag.
  struct Interleave {
    alignas(64) std::uint32_t two[3][16];    // tag (0..15) or offset (16..31) for each dword
    alignas(64) std::uint32_t third[3][16];  // the length's lane, where the dword is a length
    std::uint16_t is_length[3];
  };
  static constexpr Interleave kI = [] {
    Interleave t{};
    for (unsigned q = 0; q < 48; ++q) {
      const unsigned field = q / 3, part = q % 3, r = q / 16, d = q % 16;
      t.two[r][d] = part == 0 ? field : part == 1 ? 16 + field : 0;
      t.third[r][d] = field;
      if (part == 2) t.is_length[r] = static_cast<std::uint16_t>(t.is_length[r] | (1u << d));
    }
    return t;
  }();
  static_assert(sizeof(FieldRef) == 12);
  const __m512i reverse = _mm512_load_si512(kReverse);  // also each lane's field, reversed
  // Fields i.. from e, s and t (lanes from taken on are not scattered; they
  // are written where the general walk writes after this one).
  const auto emit = [&](std::uint32_t i, __m512i e, __m512i s, __m512i t) __attribute__((always_inline)) {
    const __m512i offset = _mm512_add_epi32(e, one);
    const __m512i length = _mm512_sub_epi32(_mm512_sub_epi32(s, e), one);
    auto* out = reinterpret_cast<std::uint32_t*>(fields + i);
    // Whole vectors: the lanes past the last field land in the table's 16
    // spare entries or on entries written after this walk (and a masked
    // store would keep the reads that follow from taking the values straight
    // from the store).
    for (unsigned r = 0; r < 3; ++r) {
      const __m512i to = _mm512_permutex2var_epi32(t, _mm512_load_si512(kI.two[r]), offset);
      _mm512_storeu_si512(out + 16 * r,
                          _mm512_mask_permutexvar_epi32(to, kI.is_length[r], _mm512_load_si512(kI.third[r]), length));
    }
    const __m512i rt = _mm512_permutexvar_epi32(reverse, t);
    const __m512i position =
        _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(generation_bits | (first + i))), reverse);
    const __mmask16 direct = _mm512_cmplt_epu32_mask(reverse, _mm512_set1_epi32(static_cast<int>(taken - i))) &
                             _mm512_cmplt_epu32_mask(rt, _mm512_set1_epi32(kDirectTags));
    _mm512_mask_i32scatter_epi32(slots, direct, rt, position, 4);
  };

  const __m512i first_soh = _mm512_set1_epi32(static_cast<int>(begin) - 1);  // the first field starts at begin
  const __m512i no_end = _mm512_set1_epi32(static_cast<int>(0xFFFFFFF0u));   // before the first: far away
  bool patched = false;
  if (n_ends <= 16) {  // one vector: checked and written from the same registers
    const __mmask16 in = lanes_below(n_ends);
    const __m512i e = _mm512_maskz_loadu_epi32(in, ends_at), s = _mm512_maskz_loadu_epi32(in, sohs_at);
    const __m512i t = _mm512_maskz_loadu_epi32(in, tags_at);
    check(0, e, s, t, first_soh, no_end, patched);
    if (taken != 0) emit(0, e, s, patched ? _mm512_maskz_loadu_epi32(in, tags_at) : t);
    return taken;
  }
  __m512i previous_soh = first_soh, previous_end = no_end;
  for (std::uint32_t i = 0; i < n_ends; i += 16) {
    const __mmask16 in = lanes_below(n_ends - i);
    const __m512i e = _mm512_maskz_loadu_epi32(in, ends_at + i), s = _mm512_maskz_loadu_epi32(in, sohs_at + i);
    if (!check(i, e, s, _mm512_maskz_loadu_epi32(in, tags_at + i), previous_soh, previous_end, patched)) break;
    previous_soh = s;
    previous_end = e;
  }
  for (std::uint32_t i = taken == 0 ? 0 : (taken - 1) & ~15u; taken != 0; i -= 16) {
    const __mmask16 in = lanes_below(taken - i);
    emit(i, _mm512_maskz_loadu_epi32(in, ends_at + i), _mm512_maskz_loadu_epi32(in, sohs_at + i),
         _mm512_maskz_loadu_epi32(in, tags_at + i));
    if (i == 0) break;
  }
  return taken;
}
#pragma GCC diagnostic pop

}  // namespace kite::codec::detail
