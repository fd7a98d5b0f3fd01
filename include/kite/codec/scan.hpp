// Byte scans used by framing and indexing. Each routine exists as a plain
// scalar version, a SWAR version that tests eight bytes per step, and (on
// x86-64, where SSE2 is always present) an SSE2 version that tests sixteen.
// Tests feed all of them the same random and adversarial buffers and demand
// the same answer. FastScan names the best one for the target.
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

namespace kite::codec {

struct ScalarScan {
  // First occurrence of c in [p, end), or end.
  static const char* find(const char* p, const char* end, char c) noexcept {
    while (p < end && *p != c) ++p;
    return p;
  }
  // Sum of the bytes in [p, end) modulo 256, as the CheckSum field defines.
  static std::uint32_t checksum(const char* p, const char* end) noexcept {
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

  static std::uint64_t load(const char* p) noexcept {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }

  // Bit 7 of each byte that equals c. Bytes above the first match may carry
  // false positives (borrow), so only the lowest set bit is meaningful.
  static std::uint64_t match(std::uint64_t w, char c) noexcept {
    const std::uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
    return (x - kOnes) & ~x & kHighs;
  }

  static const char* find(const char* p, const char* end, char c) noexcept {
    while (end - p >= 8) {
      const std::uint64_t m = match(load(p), c);
      if (m != 0) return p + (__builtin_ctzll(m) >> 3);  // little-endian lane order
      p += 8;
    }
    return ScalarScan::find(p, end, c);
  }

  static std::uint32_t checksum(const char* p, const char* end) noexcept {
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
  static std::uint64_t exact_match(std::uint64_t w, char c) noexcept {
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    const std::uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
    return ~(((x & kLow7) + kLow7) | x | kLow7);
  }
  // The high bits of the eight lanes gathered into bits 0..7.
  static std::uint64_t gather(std::uint64_t highs) noexcept { return ((highs >> 7) * 0x0102040810204080ull) >> 56; }

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
  static std::uint32_t mask16(const char* p, char c) noexcept {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
  }

  static const char* find(const char* p, const char* end, char c) noexcept {
    while (end - p >= 16) {
      const std::uint32_t m = mask16(p, c);
      if (m != 0) return p + __builtin_ctz(m);
      p += 16;
    }
    return SwarScan::find(p, end, c);
  }

  static std::uint32_t checksum(const char* p, const char* end) noexcept {
    // psadbw against zero sums each 8-byte half into a 64-bit lane.
    __m128i acc = _mm_setzero_si128();
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_add_epi64(acc, _mm_sad_epu8(v, _mm_setzero_si128()));
      p += 16;
    }
    const std::uint64_t total = static_cast<std::uint64_t>(_mm_cvtsi128_si64(acc)) +
                                static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)));
    return static_cast<std::uint32_t>((total + SwarScan::checksum(p, end)) & 0xFFu);
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
using FastScan = Sse2Scan;
#else
using FastScan = SwarScan;
#endif

}  // namespace kite::codec
