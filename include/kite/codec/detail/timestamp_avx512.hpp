// The AVX-512 read of a UTCTimestamp (values.hpp's parse_utc_timestamp_word
// with AVX-512 BW, VL, VBMI, VNNI and BMI2): inline in a host-tuned build
// that has them, else compiled once in its own translation unit
// (src/codec/timestamp_avx512.cpp) and reached through a pointer the level
// choice sets (level.hpp). Not a contract.
#pragma once

// Defined only in a translation unit built with those instructions.
#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VBMI__) && defined(__AVX512VNNI__) && \
    defined(__BMI2__)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace kite::codec::detail {

// As parse_utc_timestamp_word (values.hpp): the same answers on every input.
[[gnu::always_inline]] inline bool utc_timestamp_avx512(const char* c, std::size_t n, std::int64_t& nanos,
                                                        std::size_t& fraction_digits, std::size_t readable) noexcept {
  // The n bytes are spread (vpermb, masked to the first n positions of the
  // layout) over 32 positions with gaps, so that the fields fall on the
  // pairs and quads that the multiply-adds sum:
  //   YYYY MMDD -_hh :mm: ss.f ____ ffff ffff   (_ a gap, f the fraction)
  // A length other than 17, 21, 24 or 27 spreads nothing. Other positions
  // keep `preload`: the layout itself (absent fraction digits read as
  // trailing zeros), but 0 at position 0, which fails the check. Each byte
  // less its layout byte may not exceed `limit`: 9 for a digit (1 for the
  // month's tens, 5 for the minute's), 0 elsewhere. Then the quads check
  // the year (1901..2099), hours (60 h <= 1380) and seconds (10 s + tenths
  // <= 609), and nanos is ((days x 86400 + seconds) x 10 + tenths) x 10^8
  // + the 8 digits after the tenths, as below.
  struct alignas(32) Rows {
    char layout[32], limit[32], preload[32];
    std::int8_t bytes[32];
    std::int16_t words[16], words3[16];
    std::int32_t bias[8], fields[8];
  };
  static constexpr char kL[33] =
      "00000000-\0"
      "00:00:00.0\0\0\0\0"
      "00000000";
  static constexpr auto kRows = [] {
    Rows r{};
    const std::int8_t limit[32] = {9, 9, 9, 9, 1, 9, 9, 9, 0, 0, 9, 9, 0, 5, 9, 0,
                                   9, 9, 0, 9, 0, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9};
    // Pairs: century, year, month, day, -, hours, 10 x minute tens, minute
    // units, seconds, fraction tenths, -, and the next 8 fraction digits.
    const std::int8_t bytes[32] = {10, 1, 10, 1, 10, 1, 10, 1, 0,  0, 10, 1, 0,  10, 1,  0,
                                   10, 1, 0,  1, 0,  0, 0,  0, 10, 1, 10, 1, 10, 1,  10, 1};
    for (int i = 0; i < 32; ++i) {
      r.layout[i] = r.preload[i] = kL[i];
      r.limit[i] = static_cast<char>(limit[i]);
      r.bytes[i] = bytes[i];
    }
    r.preload[0] = 0;
    // Quads: year - 1901, month + 256 x (day - 1), 60 x hours, 600 x minutes,
    // 10 x seconds + tenths, -, fraction digits 2..5, 6..9.
    const std::int16_t words[16] = {100, 1, 1, 256, 0, 60, 600, 600, 10, 1, 0, 0, 100, 1, 100, 1};
    // Then in each 64-bit lane the low quad times this plus the high one:
    // 36000 x hours + 600 x minutes, 10 x seconds + tenths, the 8 digits.
    const std::int16_t words3[16] = {0, 0, 0, 0, 600, 0, 0, 0, 1, 0, 0, 0, 10000, 0, 0, 0};
    const std::int32_t fields[8] = {2099 - 1901, -1, 23 * 60, -1, 609, -1, -1, -1};  // hours <= 23, seconds <= 60
    for (int i = 0; i < 16; ++i) {
      r.words[i] = words[i];
      r.words3[i] = words3[i];
    }
    for (int i = 0; i < 8; ++i) {
      r.bias[i] = i == 0 ? -1901 : i == 1 ? -256 : 0;
      r.fields[i] = fields[i];
    }
    return r;
  }();
  // The positions a value of each length fills: the first n other than the gaps.
  static constexpr auto kFilled = [] {
    struct {
      std::uint32_t m[32];
    } e{};
    constexpr std::uint32_t gaps = 1u << 9 | 0xFu << 20;
    for (std::uint32_t len : {17u, 21u, 24u, 27u}) {
      std::uint32_t m = 0;
      for (std::uint32_t pos = 0, taken = 0; taken < len; ++pos) {
        if ((gaps >> pos & 1u) == 0) {
          m |= 1u << pos;
          ++taken;
        }
      }
      e.m[len] = m;
    }
    return e;
  }();
  // Each position's byte of the value (the gaps' are left out by the mask).
  static constexpr auto kFrom = [] {
    struct {
      alignas(32) std::uint8_t i[32];
    } f{};
    for (std::uint32_t pos = 0, taken = 0; pos < 32; ++pos)
      if ((kFilled.m[27] >> pos & 1u) != 0) f.i[pos] = static_cast<std::uint8_t>(taken++);
    return f;
  }();
  if (n > 31) return false;
  const auto row = [](const void* q) noexcept { return _mm256_loadu_si256(static_cast<const __m256i*>(q)); };
  // A whole vector when 32 bytes may be read (the mask leaves the bytes
  // past n out), else only the n bytes (the masked load does not touch the
  // others). The plain load spares the wait for n before the load.
  const __m256i bytes = readable >= 32 ? row(c) : _mm256_maskz_loadu_epi8(_bzhi_u32(~0u, static_cast<unsigned>(n)), c);
  const __m256i x = _mm256_sub_epi8(_mm256_mask_permutexvar_epi8(row(kRows.preload), kFilled.m[n], row(kFrom.i), bytes),
                                    row(kRows.layout));
  const __mmask32 bad_bytes = _mm256_cmpgt_epu8_mask(x, row(kRows.limit));
  const __m256i w = _mm256_maddubs_epi16(x, row(kRows.bytes));
  const __m256i q = _mm256_dpwssd_epi32(row(kRows.bias), w, row(kRows.words));
  const __mmask8 bad_fields = _mm256_cmpgt_epu32_mask(q, row(kRows.fields));
  if (!_kortestz_mask32_u8(bad_bytes, bad_fields)) return false;
  const __m256i z = _mm256_dpwssd_epi32(_mm256_srli_epi64(q, 32), q, row(kRows.words3));
  const auto year = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm256_castsi256_si128(q)));  // - 1901
  const auto md =
      static_cast<std::uint32_t>(_mm_extract_epi32(_mm256_castsi256_si128(q), 1));  // month + 256 x (day - 1)
  // Per month 0..19 (0 days for none): 256 x its days (February 29
  // included) + the month, and 4 x the days of the months before it, plus 1
  // after February, less 4 x the 25202 days of 1901..1969 (see below).
  static constexpr auto kMonthsW = [] {
    struct {
      std::uint32_t limit[20];
      std::int64_t before[20];
    } t{};
    const std::uint16_t days[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const std::uint16_t before[13] = {0, 0, 124, 237, 361, 481, 605, 725, 849, 973, 1093, 1217, 1337};
    for (std::uint32_t i = 0; i < 20; ++i) {
      t.limit[i] = 256 * (i < 13 ? days[i] : 0u) + i;
      t.before[i] = (i < 13 ? before[i] : 0) - 4 * 25202;
    }
    return t;
  }();
  const std::uint32_t month = md & 0xFF;
  // Below the limit for a day 1..days (day 0 wraps above it); February 29
  // then needs a leap year (year - 1901 = 3 modulo 4).
  if (md >= kMonthsW.limit[month] || (md == 0x1C02 && (year & 3) != 3)) return false;
  // Days since 1970-01-01: 365 Y + Y / 4 + the days before the month is
  // (1461 Y + 4 before) / 4, and the +1 after February counts the year's own
  // leap day (Y % 4 == 3); then the day - 1 in md.
  const std::int64_t days = ((static_cast<std::int64_t>(1461 * year) + kMonthsW.before[month]) >> 2) + (md >> 8);
  const __m128i high = _mm256_extracti128_si256(z, 1);
  const auto hm = static_cast<std::int64_t>(_mm_extract_epi64(_mm256_castsi256_si128(z), 1));  // 36000 h + 600 m
  const auto st = static_cast<std::uint32_t>(_mm_cvtsi128_si32(high));                         // 10 s + tenths
  const auto rest = static_cast<std::uint32_t>(_mm_extract_epi32(high, 2));                    // below 10^8
  // The time of day apart from the days: the two products are computed
  // side by side, not one after the other.
  const std::int64_t time_of_day = (hm + st) * 100'000'000 + rest;
  nanos = days * 86'400'000'000'000 + time_of_day;
  fraction_digits = n == 17 ? 0 : n - 18;
  return true;
}

}  // namespace kite::codec::detail

#endif
