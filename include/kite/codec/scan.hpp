// Byte scans used by framing and indexing. Each routine exists as a plain
// scalar version, a SWAR version that tests eight bytes per step, and (on
// x86-64, where SSE2 is always present) an SSE2 version that tests sixteen.
// Tests feed all of them the same random and adversarial buffers and demand
// the same answer. PortableScan names the best one for the target without
// more than its baseline instructions; FastScan (detail/level_ops.hpp) runs
// the level chosen at load (level.hpp), whose scans live in the library.
//
// None of them reads outside [p, end) (or [p, p + n)): the wide loops stop
// while fewer bytes than a step remain and finish with the scalar loop or on
// a zero-padded copy.
//
// Every Scan offers:
//   find(p, end, c)            first occurrence of c in [p, end), or end
//   checksum(p, end)           sum of the bytes modulo 256 (FIX CheckSum)
//   classify(p, n, eq, soh)    for a block of n <= 64 bytes: bit i of eq set
//                              when p[i] == '=', of soh when p[i] == SOH;
//                              bits at and above n are clear
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kite/codec/detail/level_ops.hpp"

namespace kite::codec {

namespace detail {
// A number of n (1..8) decimal digits in the first bytes of w (8 bytes loaded
// from its start), as a tag or BodyLength: checked and summed in one 64-bit
// word, without a branch per digit. Its scalar twin is the digit loop that
// frame<ScalarScan> and FieldIndex::build<ScalarScan> run instead.
[[gnu::always_inline]] inline bool parse_digits8(std::uint64_t w, std::size_t n, std::uint32_t& tag) noexcept {
  if (n <= 4) {  // most tags: half the steps on the low four bytes
    std::uint32_t x = (static_cast<std::uint32_t>(w) - 0x30303030u) << (8 * (4 - n));
    if (((x + 0x76767676u) | x) & 0x80808080u) return false;
    x = (x * 10 + (x >> 8)) & 0x00FF00FFu;
    tag = (x * 100 + (x >> 16)) & 0xFFFFu;
    return true;
  }
  // Bytes past the tag are shifted out; zero bytes come in as leading zeros.
  // The subtraction cannot borrow into a valid digit from the bytes below it
  // unless one of those is already invalid, which the check catches.
  w = (w - 0x3030303030303030ull) << (8 * (8 - n));
  if (((w + 0x7676767676767676ull) | w) & 0x8080808080808080ull) return false;  // a byte above 9
  // Pairs, then quads, then the eight: the first byte is the most significant.
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  w = (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
  tag = static_cast<std::uint32_t>(w);
  return true;
}
// The value of n (1..7) digits already checked, as bytes 0..9 in the first
// bytes of x (bytes past them may hold anything). The scalar twin is the
// digit loop of the ScalarScan instantiations.
[[gnu::always_inline]] inline std::uint32_t digits_value(std::uint64_t x, std::size_t n) noexcept {
  if (n <= 4) {
    std::uint32_t y = static_cast<std::uint32_t>(x) << (32 - 8 * n);
    y = (y * 10 + (y >> 8)) & 0x00FF00FFu;  // two 2-digit lanes
    return (y * ((100u << 16) + 1)) >> 16;  // first lane * 100 + second lane, in bits 16..31
  }
  x <<= 64 - 8 * n;
  x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
  x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
  return static_cast<std::uint32_t>((x * 10000 + (x >> 32)) & 0xFFFFFFFFull);
}
}  // namespace detail

// The scans' functions that a level's walk calls are always inlined: a copy
// left out of line in a level's object, built for other instructions, could
// serve every caller (tests/codec/level_symbols_check.sh), and a profile
// (KITE_PGO) leaves a cold call out of line.
struct ScalarScan {
  // First occurrence of c in [p, end), or end.
  [[gnu::always_inline]] static const char* find(const char* p, const char* end, char c) noexcept {
    while (p < end && *p != c) ++p;
    return p;
  }
  // Sum of the bytes in [p, end) modulo 256, as the CheckSum field defines.
  [[gnu::always_inline]] static std::uint32_t checksum(const char* p, const char* end) noexcept {
    std::uint32_t sum = 0;
    for (; p < end; ++p) sum += static_cast<unsigned char>(*p);
    return sum & 0xFFu;
  }
  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    eq = 0;
    soh = 0;
    for (std::size_t i = 0; i < n && i < 64; ++i) {
      eq |= static_cast<std::uint64_t>(p[i] == '=') << i;
      soh |= static_cast<std::uint64_t>(p[i] == '\x01') << i;
    }
  }
};

struct SwarScan {
  static constexpr std::uint64_t kOnes = 0x0101010101010101ull;
  static constexpr std::uint64_t kHighs = 0x8080808080808080ull;

  [[gnu::always_inline]] static std::uint64_t load(const char* p) noexcept {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }

  // Bit 7 of each byte that equals c. Bytes above the first match may carry
  // false positives (borrow), so only the lowest set bit is meaningful.
  [[gnu::always_inline]] static std::uint64_t match(std::uint64_t w, char c) noexcept {
    const std::uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
    return (x - kOnes) & ~x & kHighs;
  }

  [[gnu::always_inline]] static const char* find(const char* p, const char* end, char c) noexcept {
    while (end - p >= 8) {
      const std::uint64_t m = match(load(p), c);
      if (m != 0) return p + (__builtin_ctzll(m) >> 3);  // little-endian lane order
      p += 8;
    }
    return ScalarScan::find(p, end, c);
  }

  [[gnu::always_inline]] static std::uint32_t checksum(const char* p, const char* end) noexcept {
    // Sum 16-bit lanes: four lanes of byte pairs per word. A lane gains at most
    // 510 per word, so fold into the total every 64 words, well before overflow.
    constexpr std::uint64_t kLow = 0x00FF00FF00FF00FFull;
    std::uint64_t total = 0;
    while (end - p >= 8) {
      std::uint64_t lanes = 0;
      const char* stop = p + ((end - p) / 8 > 64 ? 64 * 8 : ((end - p) / 8) * 8);
      for (; p < stop; p += 8) {
        const std::uint64_t w = load(p);
        lanes += (w & kLow) + ((w >> 8) & kLow);
      }
      total += (lanes & 0xFFFF) + ((lanes >> 16) & 0xFFFF) + ((lanes >> 32) & 0xFFFF) + (lanes >> 48);
    }
    return static_cast<std::uint32_t>((total + ScalarScan::checksum(p, end)) & 0xFFu);
  }

  // High bit of each byte of w that equals c, exactly (no borrow between lanes).
  [[gnu::always_inline]] static std::uint64_t exact_match(std::uint64_t w, char c) noexcept {
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    const std::uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
    return ~(((x & kLow7) + kLow7) | x | kLow7);
  }
  // The high bits of the eight lanes gathered into bits 0..7.
  [[gnu::always_inline]] static std::uint64_t gather(std::uint64_t highs) noexcept {
    return ((highs >> 7) * 0x0102040810204080ull) >> 56;
  }

  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    if (n > 64) n = 64;
    eq = 0;
    soh = 0;
    if (n == 0) return;
    char pad[64];
    if (n < 64) {  // a short tail: work on a zero-padded copy
      std::memset(pad, 0, sizeof pad);
      std::memcpy(pad, p, n);
      p = pad;
    }
    eq = 0;
    soh = 0;
    for (unsigned k = 0; k < 8; ++k) {
      const std::uint64_t w = load(p + 8 * k);
      eq |= gather(exact_match(w, '=')) << (8 * k);
      soh |= gather(exact_match(w, '\x01')) << (8 * k);
    }
  }
};

#if defined(__SSE2__)
struct Sse2Scan {
  [[gnu::always_inline]] static std::uint32_t mask16(const char* p, char c) noexcept {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
  }

  [[gnu::always_inline]] static const char* find(const char* p, const char* end, char c) noexcept {
    while (end - p >= 16) {
      const std::uint32_t m = mask16(p, c);
      if (m != 0) return p + __builtin_ctz(m);
      p += 16;
    }
    return SwarScan::find(p, end, c);
  }

  [[gnu::always_inline]] static std::uint32_t checksum(const char* p, const char* end) noexcept {
    // Only the sum modulo 256 matters, so bytes are added in 8-bit lanes that
    // may wrap (paddb), and one psadbw folds the 16 lanes at the end.
    const auto at = [](const char* q) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
    const std::size_t n = static_cast<std::size_t>(end - p);
    __m128i acc = _mm_setzero_si128();
    for (; end - p >= 64; p += 64) {
      acc = _mm_add_epi8(acc, _mm_add_epi8(at(p), at(p + 16)));
      acc = _mm_add_epi8(acc, _mm_add_epi8(at(p + 32), at(p + 48)));
    }
    for (; end - p >= 16; p += 16) acc = _mm_add_epi8(acc, at(p));
    const auto rest = static_cast<std::size_t>(end - p);  // 0..15
    std::uint32_t tail = 0;
    if (rest != 0) {
      if (n >= 16) {  // the last 16 bytes, the ones already summed masked off
        alignas(16) static constexpr unsigned char kTailMask[32] = {
            0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        const __m128i mask = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kTailMask + rest));
        acc = _mm_add_epi8(acc, _mm_and_si128(at(end - 16), mask));
      } else {
        tail = SwarScan::checksum(p, end);
      }
    }
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    const std::uint64_t total = static_cast<std::uint64_t>(_mm_cvtsi128_si64(sums)) +
                                static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
    return static_cast<std::uint32_t>((total + tail) & 0xFFu);
  }

  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    if (n > 64) n = 64;
    eq = 0;
    soh = 0;
    if (n == 0) return;
    alignas(16) char pad[64];
    if (n < 64) {
      std::memset(pad, 0, sizeof pad);
      std::memcpy(pad, p, n);
      p = pad;
    }
    eq = 0;
    soh = 0;
    for (unsigned k = 0; k < 4; ++k) {
      eq |= static_cast<std::uint64_t>(mask16(p + 16 * k, '=')) << (16 * k);
      soh |= static_cast<std::uint64_t>(mask16(p + 16 * k, '\x01')) << (16 * k);
    }
  }
};
using PortableScan = Sse2Scan;
#else
using PortableScan = SwarScan;
#endif

inline const char* FastScan::find(const char* p, const char* end, char c) noexcept {
  return PortableScan::find(p, end, c);
}

}  // namespace kite::codec
