// Typed FIX values, parsed on demand from a field's bytes and rendered into a
// buffer without the C library's formatted output. Prices and quantities are
// fixed point (mantissa and decimal exponent), never double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VBMI__) && defined(__AVX512VBMI2__) && \
    defined(__AVX512VNNI__) && defined(__BMI2__)
#define KITE_TIMESTAMP_AVX512 1
#include "kite/codec/detail/timestamp_avx512.hpp"
#elif defined(__SSE4_1__)
#include <smmintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kite::codec {

// A decimal number: mantissa * 10^exponent. "101.250" is {101250, -3}.
struct Decimal {
  std::int64_t mantissa = 0;
  std::int32_t exponent = 0;

  // The same value with trailing zeros of the mantissa removed.
  constexpr Decimal normalized() const noexcept {
    Decimal d = *this;
    if (d.mantissa == 0) return {0, 0};
    while (d.mantissa % 10 == 0) {
      d.mantissa /= 10;
      ++d.exponent;
    }
    return d;
  }
  // The mantissa at a given exponent (e.g. price in ticks of 10^-4), when it
  // is exact and fits; false otherwise.
  bool scaled_to(std::int32_t exp, std::int64_t& out) const noexcept;

  friend bool operator==(const Decimal& a, const Decimal& b) noexcept;
  friend bool operator<(const Decimal& a, const Decimal& b) noexcept;
  friend bool operator<=(const Decimal& a, const Decimal& b) noexcept { return !(b < a); }
  friend bool operator>(const Decimal& a, const Decimal& b) noexcept { return b < a; }
  friend bool operator>=(const Decimal& a, const Decimal& b) noexcept { return !(a < b); }
};

struct Date {
  std::int32_t year = 0;
  std::int32_t month = 0;
  std::int32_t day = 0;
  friend bool operator==(const Date&, const Date&) = default;
};

// Digits after the seconds in a timestamp: 0, 3 (ms), 6 (us) or 9 (ns).
enum class TimePrecision : std::uint8_t { seconds = 0, millis = 3, micros = 6, nanos = 9 };

// --- parsing: each returns false when the bytes are not of the type ---------
[[gnu::always_inline]] inline bool parse_uint(std::string_view s, std::uint64_t& out) noexcept;
inline bool parse_int(std::string_view s, std::int64_t& out) noexcept;
inline bool parse_decimal(std::string_view s, Decimal& out) noexcept;
inline bool parse_char(std::string_view s, char& out) noexcept;
inline bool parse_bool(std::string_view s, bool& out) noexcept;  // Y or N
// UTCTimestamp "YYYYMMDD-HH:MM:SS[.sss|.ssssss|.sssssssss]" as nanoseconds
// since the Unix epoch; `precision`, when given, receives the digits seen.
// Times that do not fit 64-bit nanoseconds (before 1677, after 2262) fail.
bool parse_utc_timestamp(std::string_view s, std::int64_t& nanos, TimePrecision* precision = nullptr) noexcept;
// UTCTimeOnly "HH:MM:SS[.sss|.ssssss|.sssssssss]" as nanoseconds since midnight.
bool parse_utc_time_only(std::string_view s, std::int64_t& nanos) noexcept;
// LocalMktDate and UTCDateOnly "YYYYMMDD" (a real calendar date).
bool parse_date(std::string_view s, Date& out) noexcept;

// --- rendering: write at p, return the end; the caller guarantees room -------
inline constexpr std::size_t kMaxUintChars = 20;
inline constexpr std::size_t kMaxIntChars = 20;
inline constexpr std::size_t kMaxDecimalChars = 42;
inline constexpr std::size_t kMaxTimestampChars = 27;

inline char* write_uint(char* p, std::uint64_t v) noexcept;
inline char* write_int(char* p, std::int64_t v) noexcept;
inline char* write_decimal(char* p, Decimal d) noexcept;
char* write_utc_timestamp(char* p, std::int64_t nanos, TimePrecision precision) noexcept;
char* write_date(char* p, Date d) noexcept;
inline std::size_t uint_digits(std::uint64_t v) noexcept;
// Exactly the bytes write_decimal(d) writes.
inline std::size_t decimal_chars(Decimal d) noexcept;

// Days since 1970-01-01 for a proleptic Gregorian date, and back.
std::int64_t days_from_civil(std::int32_t y, std::int32_t m, std::int32_t d) noexcept;
Date civil_from_days(std::int64_t days) noexcept;

// --- inline definitions of the hot ones ---------------------------------------

// (Always inlined: the framer in a level's walk calls it; see scan.hpp.)
[[gnu::always_inline]] inline bool parse_uint(std::string_view s, std::uint64_t& out) noexcept {
  if (s.empty() || s.size() > 19) return false;  // 19 digits always fit
  std::uint64_t v = 0;
  for (const char c : s) {
    const unsigned d = static_cast<unsigned char>(c) - static_cast<unsigned>('0');
    if (d > 9) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

inline bool parse_int(std::string_view s, std::int64_t& out) noexcept {
  bool neg = false;
  if (!s.empty() && s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  std::uint64_t v;
  if (s.size() > 18 || !parse_uint(s, v)) return false;
  out = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

namespace detail {
// Any number of digits: leading zeros carry no precision, so only more than
// 18 significant digits fail.
inline bool parse_decimal_long(std::string_view s, Decimal& out) noexcept {
  std::size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) i = 1;
  std::uint64_t m = 0;
  int digits = 0;
  std::int32_t exp = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.') {
      if (dot) return false;
      dot = true;
      continue;
    }
    const unsigned d = static_cast<unsigned char>(c) - static_cast<unsigned>('0');
    if (d > 9) return false;
    if (digits == 0 && d == 0) {  // leading zeros carry no precision
      if (dot) --exp;
      continue;
    }
    if (++digits > 18) return false;
    m = m * 10 + d;
    if (dot) --exp;
  }
  if (s.size() == static_cast<std::size_t>(neg) + static_cast<std::size_t>(dot)) return false;  // "", "-", ".", "-."
  out.mantissa = neg ? -static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m);
  out.exponent = m == 0 ? 0 : exp;
  return true;
}
}  // namespace detail

inline bool parse_decimal(std::string_view s, Decimal& out) noexcept {
  // Up to 18 digits in all (any price or quantity) cannot overflow: one pass
  // over the integer digits, one over the fraction, no test per digit for
  // the point or for leading zeros. Longer texts take the careful loop.
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool neg = p != end && *p == '-';
  p += neg;
  const char* const first = p;
  std::uint64_t m = 0;
  unsigned d;
  while (p != end && (d = static_cast<unsigned char>(*p) - static_cast<unsigned>('0')) <= 9) {
    m = m * 10 + d;
    ++p;
  }
  std::size_t digits = static_cast<std::size_t>(p - first);
  std::int32_t exp = 0;
  if (p != end && *p == '.') {
    const char* const f = ++p;
    while (p != end && (d = static_cast<unsigned char>(*p) - static_cast<unsigned>('0')) <= 9) {
      m = m * 10 + d;
      ++p;
    }
    digits += static_cast<std::size_t>(p - f);
    exp = -static_cast<std::int32_t>(p - f);
  }
  if (p != end || digits == 0) return false;  // a stray byte; "", "-", ".", "-."
  if (digits > 18) return detail::parse_decimal_long(s, out);
  out.mantissa = neg ? -static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m);
  out.exponent = m == 0 ? 0 : exp;
  return true;
}

namespace detail {
// Word-at-a-time parses for values of 1 to 8 bytes at p, where 8 bytes may be
// read from p (the index knows when: a field's value is followed by at least
// its SOH and the 7 bytes of CheckSum). Each checks and sums the bytes in one
// 64-bit word, without a branch per byte, and answers false for anything it
// does not take (a sign, a second point, a stray byte), which the careful
// parse then decides. Their scalar twins are parse_uint and parse_decimal.
//
// The n bytes XOR '0' (digits become 0..9) are shifted to the top of the word
// with zeros below, which count as leading zeros; the pairs, then quads,
// then the eight are summed (the first byte is the most significant).
inline std::uint64_t digit_word(const char* p, std::size_t n) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return (w ^ 0x3030303030303030ull) << ((0 - 8 * n) & 63);  // 8 x (8 - n) for n of 1..8
}
inline std::uint64_t digit_sum(std::uint64_t w) noexcept {  // every byte 0..9
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  return static_cast<std::uint32_t>(w) * 10000u + (w >> 32);
}
inline bool sum_digit_word(std::uint64_t w, std::uint64_t& out) noexcept {
  if (((w + 0x7676767676767676ull) | w) & 0x8080808080808080ull) return false;  // a byte above 9
  out = digit_sum(w);
  return true;
}
inline bool parse_uint_word(const char* p, std::size_t n, std::uint64_t& out) noexcept {
  return n - 1 < 8 && sum_digit_word(digit_word(p, n), out);
}
inline bool parse_int_word(const char* p, std::size_t n, std::int64_t& out) noexcept {  // no sign: the loop takes '-'
  std::uint64_t u;
  if (!parse_uint_word(p, n, u)) return false;
  out = static_cast<std::int64_t>(u);
  return true;
}
inline bool parse_decimal_word(const char* p, std::size_t n, Decimal& out) noexcept {
  if (n - 1 >= 8) return false;
  std::uint64_t w = digit_word(p, n);
  // '.' is 0x1E after the XOR. The lowest zero byte of x raises the lowest
  // bit of `points`; bits above it may be false (the subtraction's borrow),
  // and only the lowest is used.
  const std::uint64_t x = w ^ 0x1E1E1E1E1E1E1E1Eull;
  const std::uint64_t points = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
  std::int32_t exponent = 0;
  if (points != 0) {
    if (n == 1) return false;  // "." alone
    // The bytes before the point and the point itself (bits up to the
    // lowest of points) take the byte below each: the point goes, and a zero
    // comes in at the bottom.
    const std::uint64_t upto = points ^ (points - 1);
    w ^= (w ^ (w << 8)) & upto;
    exponent = static_cast<std::int32_t>(__builtin_ctzll(points) >> 3) - 7;  // -(bytes after the point)
  }
  std::uint64_t m;
  if (!sum_digit_word(w, m)) return false;
  out.mantissa = static_cast<std::int64_t>(m);
  out.exponent = m == 0 ? 0 : exponent;
  return true;
}

// UTCTimestamp in its fixed layout, "YYYYMMDD-HH:MM:SS" and 0, 3, 6 or 9
// fraction digits, for the years 1901..2099 (where every fourth year is a
// leap year, so the days need no division): checked and converted a word at
// a time, reading only the n bytes at c (or, with AVX-512, the 32 bytes at c
// when `readable`, the bytes that may be read from c, is 32 or more). False
// for anything else, which parse_utc_timestamp's general path then decides
// (its scalar twin). This is the read built into the caller: the AVX-512 one
// in a host-tuned build that has it, else SSE2 (x86-64) or a word at a time.
[[gnu::always_inline]] inline bool utc_timestamp_inline(const char* c, std::size_t n, std::int64_t& nanos,
                                                        std::size_t& fraction_digits,
                                                        [[maybe_unused]] std::size_t readable) noexcept {
#if defined(KITE_TIMESTAMP_AVX512)
  return utc_timestamp_avx512(c, n, nanos, fraction_digits, readable);
#else
  // n is 17, 21, 24 or 27: bits of the mask.
  if (n > 31 || ((0x09220000u >> n) & 1u) == 0) return false;
  std::uint64_t date, time;
  std::memcpy(&time, c + 9, sizeof time);
  time ^= 0x30303A30303A3030ull;  // "HH:MM:SS": digits 0..9, the colons 0
#if defined(__SSE2__)
  // Every byte at once: the 16 at c and the 16 ending at c + n, XORed with
  // the layout's bytes there (each length's layout is a prefix of the
  // longest; a digit becomes 0..9, the right punctuation 0), may not exceed
  // the row below: 9 for a digit (1 for the month's first), 0 elsewhere.
  static constexpr char kLayout[2][32] = {
      "00000000-00:00:00.000000000", {9, 9, 9, 9, 1, 9, 9, 9, 0, 9, 9, 0, 9, 9, 0, 9, 9, 0, 9, 9, 9, 9, 9, 9, 9, 9, 9}};
  const auto at = [](const char* q) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const __m128i head = _mm_xor_si128(at(c), at(kLayout[0]));
  const __m128i tail = _mm_xor_si128(at(c + n - 16), at(kLayout[0] + n - 16));
  const __m128i over = _mm_or_si128(_mm_subs_epu8(head, at(kLayout[1])), _mm_subs_epu8(tail, at(kLayout[1] + n - 16)));
#if defined(__SSE4_1__)
  if (!_mm_testz_si128(over, over)) return false;
#else
  if (_mm_movemask_epi8(_mm_cmpeq_epi8(over, _mm_setzero_si128())) != 0xFFFF) return false;
#endif
  date = static_cast<std::uint64_t>(_mm_cvtsi128_si64(head));  // "YYYYMMDD": digits 0..9
  date = (date * 10 + (date >> 8)) & 0x00FF00FF00FF00FFull;    // century, year, month, day in bytes 0, 2, 4, 6
  time = time * 10 + (time >> 8);  // hours, minutes, seconds in bytes 0, 3, 6; every byte below 100
  // Then (bytes below 100) hours above 23, minutes above 59 or seconds above
  // 60 reach bit 7.
  const std::uint64_t high = time + 0x0043000044000068ull;
#else
  if (c[8] != '-') return false;
  std::memcpy(&date, c, sizeof date);
  date ^= 0x3030303030303030ull;  // "YYYYMMDD": digits 0..9
  // A byte reaches bit 7 when it is above 9, or (0x7F added) a colon's above 0.
  std::uint64_t high = (date + 0x7676767676767676ull) | date | (time + 0x76767F76767F7676ull) | time;
  date = (date * 10 + (date >> 8)) & 0x00FF00FF00FF00FFull;  // century, year, month, day in bytes 0, 2, 4, 6
  time = time * 10 + (time >> 8);  // hours, minutes, seconds in bytes 0, 3, 6; every byte below 100
  // Then (bytes below 100) a month above 19, hours above 23, minutes above
  // 59 or seconds above 60 reach bit 7 too.
  high |= (date + 0x0000006C00000000ull) | (time + 0x0043000044000068ull);
#endif
  // 100 x century + year: bits 16..31 of date + (date x 100 << 16).
  const auto year = static_cast<std::uint32_t>((date * 0x640001) >> 16) & 0xFFFFu;
  const auto md = static_cast<std::uint32_t>(date >> 32);  // month, day in bits 0..7, 16..23
  const std::uint32_t month = md & 0xFF, day = md >> 16;
  // Per month 0..19 (0 days for none): its days, February 29 included, and 4
  // x the days of the months before it, plus 1 after February (see below).
  struct Month {
    std::uint16_t days, before;
  };
  static constexpr Month kMonths[20] = {{0, 0},    {31, 0},   {29, 124}, {31, 237},  {30, 361},  {31, 481}, {30, 605},
                                        {31, 725}, {31, 849}, {30, 973}, {31, 1093}, {30, 1217}, {31, 1337}};
  // February 29 passes the table; then the year must be a leap year (its
  // last two digits a multiple of 4, as 100 is).
  if ((high & 0x8080808080808080ull) != 0 || year - 1901 > 2099 - 1901 || day - 1 >= kMonths[month].days ||
      (md == 0x1D0002 && (date & 0x30000) != 0))
    return false;
  // The fraction: its first digit (tenths), then the nanoseconds below 10^8.
  std::uint32_t first = 0;
  std::uint64_t rest = 0;
  if (n != 17) {
    // The k - 1 digits after the first end c: shifted down to the first bytes
    // of the word, zeros after them (trailing zeros), they read as the
    // nanoseconds below 10^8.
    std::uint64_t w;
    std::memcpy(&w, c + n - 8, sizeof w);
    w = (w ^ 0x3030303030303030ull) >> ((0 - 8 * (n - 3)) & 63);  // 8 x (27 - n)
    first = static_cast<unsigned char>(c[18]) - static_cast<unsigned>('0');
#if defined(__SSE2__)
    rest = digit_sum(w);  // checked with the rest
#else
    if (c[17] != '.' || first > 9 || !sum_digit_word(w, rest)) return false;
#endif
  }
  // Days since 1970-01-01 from Y = year - 1901: 365 Y + Y / 4 (the leap days
  // of 1901..year-1) + the days of the months before, is (1461 Y + 4 before) / 4,
  // and the +1 after February counts the year's own leap day (Y % 4 == 3);
  // less the 25202 days of 1901..1969.
  const std::int64_t days =
      static_cast<std::int64_t>((1461 * (year - 1901) + kMonths[month].before) >> 2) + day - 1 - 25202;
  const std::uint32_t h = time & 0xFF, m = (time >> 24) & 0xFF, sec = (time >> 48) & 0xFF;
  nanos = ((days * 86400 + h * 3600 + m * 60 + sec) * 10 + first) * 100'000'000 + static_cast<std::int64_t>(rest);
  fraction_digits = n == 17 ? 0 : n - 18;
  return true;
#endif
}

// A level's vector read of a UTCTimestamp (detail/timestamp_avx512.hpp), as
// utc_timestamp_inline on every input.
using TimestampWordRead = bool (*)(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& fraction_digits,
                                   std::size_t readable) noexcept;
// The level in use's (level.hpp), set once at load; null where it has none
// (then the read built into the caller runs).
extern TimestampWordRead g_timestamp_word_read;

// utc_timestamp_inline, or the level's vector read where the CPU has one and
// the build does not inline it.
inline bool parse_utc_timestamp_word(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& fraction_digits,
                                     std::size_t readable = 0) noexcept {
#if !defined(KITE_TIMESTAMP_AVX512)
  if (const TimestampWordRead vector_read = g_timestamp_word_read; vector_read != nullptr) {
    return vector_read(c, n, nanos, fraction_digits, readable);
  }
#endif
  return utc_timestamp_inline(c, n, nanos, fraction_digits, readable);
}
}  // namespace detail

inline bool parse_char(std::string_view s, char& out) noexcept {
  if (s.size() != 1) return false;
  out = s[0];
  return true;
}

inline bool parse_bool(std::string_view s, bool& out) noexcept {
  if (s.size() != 1 || (s[0] != 'Y' && s[0] != 'N')) return false;
  out = s[0] == 'Y';
  return true;
}

inline std::size_t uint_digits(std::uint64_t v) noexcept {
  std::size_t n = 1;
  for (;;) {
    if (v < 10) return n;
    if (v < 100) return n + 1;
    if (v < 1000) return n + 2;
    if (v < 10000) return n + 3;
    v /= 10000;
    n += 4;
  }
}

namespace detail {
inline constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
}  // namespace detail

inline char* write_uint(char* p, std::uint64_t v) noexcept {
  const std::size_t n = uint_digits(v);
  char* q = p + n;
  while (v >= 100) {
    const auto i = static_cast<std::size_t>(v % 100) * 2;
    v /= 100;
    q -= 2;
    q[0] = detail::kDigitPairs[i];
    q[1] = detail::kDigitPairs[i + 1];
  }
  if (v >= 10) {
    q -= 2;
    q[0] = detail::kDigitPairs[v * 2];
    q[1] = detail::kDigitPairs[v * 2 + 1];
  } else {
    *--q = static_cast<char>('0' + v);
  }
  return p + n;
}

inline char* write_int(char* p, std::int64_t v) noexcept {
  if (v < 0) {
    *p++ = '-';
    return write_uint(p, 0 - static_cast<std::uint64_t>(v));
  }
  return write_uint(p, static_cast<std::uint64_t>(v));
}

inline char* write_decimal(char* p, Decimal d) noexcept {
  std::uint64_t m =
      d.mantissa < 0 ? 0 - static_cast<std::uint64_t>(d.mantissa) : static_cast<std::uint64_t>(d.mantissa);
  if (d.mantissa < 0) *p++ = '-';
  if (d.exponent >= 0) {
    p = write_uint(p, m);
    if (m != 0) {
      for (std::int32_t i = 0; i < d.exponent && i < 20; ++i) *p++ = '0';
    }
    return p;
  }
  const std::size_t frac = static_cast<std::size_t>(-d.exponent) > 20 ? 20 : static_cast<std::size_t>(-d.exponent);
  const std::size_t n = uint_digits(m);
  if (n <= frac) {  // 0.000ddd
    *p++ = '0';
    *p++ = '.';
    for (std::size_t i = n; i < frac; ++i) *p++ = '0';
    return write_uint(p, m);
  }
  char* end = write_uint(p + 1, m);  // leave room for the point, then shift the integer part left
  for (std::size_t i = 0; i < n - frac; ++i) p[i] = p[i + 1];
  p[n - frac] = '.';
  return end;
}

inline std::size_t decimal_chars(Decimal d) noexcept {
  const std::uint64_t m =
      d.mantissa < 0 ? 0 - static_cast<std::uint64_t>(d.mantissa) : static_cast<std::uint64_t>(d.mantissa);
  const std::size_t sign = d.mantissa < 0 ? 1 : 0;
  const std::size_t n = uint_digits(m);
  if (d.exponent >= 0) return sign + n + (m != 0 ? static_cast<std::size_t>(d.exponent < 20 ? d.exponent : 20) : 0);
  const std::size_t frac = static_cast<std::size_t>(-d.exponent) > 20 ? 20 : static_cast<std::size_t>(-d.exponent);
  return n <= frac ? sign + 2 + frac : sign + n + 1;
}

}  // namespace kite::codec
