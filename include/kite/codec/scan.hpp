// Byte scans used by framing and indexing. Each routine exists twice: a SWAR
// version that tests eight bytes per step and a plain scalar twin. Tests feed
// both the same random and adversarial buffers and demand the same answer.
//
// None of them reads outside [p, end): the SWAR loops stop while fewer than
// eight bytes remain and finish with the scalar loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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
};

}  // namespace kite::codec
