// Typed FIX values, parsed on demand from a field's bytes and rendered into a
// buffer without the C library's formatted output. Prices and quantities are
// fixed point (mantissa and decimal exponent), never double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

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
inline bool parse_uint(std::string_view s, std::uint64_t& out) noexcept;
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

inline bool parse_uint(std::string_view s, std::uint64_t& out) noexcept {
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
  return (w ^ 0x3030303030303030ull) << (8 * (8 - n));
}
inline bool sum_digit_word(std::uint64_t w, std::uint64_t& out) noexcept {
  if (((w + 0x7676767676767676ull) | w) & 0x8080808080808080ull) return false;  // a byte above 9
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  out = (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
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
  // '.' is 0x1E after the XOR: the high bit of each such byte, exactly.
  constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  const std::uint64_t x = w ^ 0x1E1E1E1E1E1E1E1Eull;
  const std::uint64_t points = ~(((x & kLow7) + kLow7) | x | kLow7);
  std::int32_t exponent = 0;
  if (points != 0) {
    if (n == 1) return false;  // "." alone
    const auto at = static_cast<unsigned>(__builtin_ctzll(points)) & ~7u;  // 8 x the point's byte
    const std::uint64_t below = (std::uint64_t{1} << at) - 1;
    // The bytes before the point move up into its place; a zero comes in below.
    w = (w & ~below & ~(std::uint64_t{0xFF} << at)) | ((w & below) << 8);
    exponent = -static_cast<std::int32_t>(7 - at / 8);  // the bytes after the point
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
// a time, reading only the n bytes at c. False for anything else, which
// parse_utc_timestamp's general path then decides (its scalar twin).
inline bool parse_utc_timestamp_word(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& fraction_digits) noexcept {
  // n - 17 is 0, 4, 7 or 10.
  if (n - 17 > 10 || ((0b10010010001u >> (n - 17)) & 1u) == 0 || c[8] != '-') return false;
  std::uint64_t date, time;
  std::memcpy(&date, c, sizeof date);
  std::memcpy(&time, c + 9, sizeof time);
  date ^= 0x3030303030303030ull;  // "YYYYMMDD": digits 0..9
  time ^= 0x30303A30303A3030ull;  // "HH:MM:SS": digits 0..9, the colons 0
  constexpr std::uint64_t kHigh = 0x8080808080808080ull, kBelow10 = 0x7676767676767676ull;
  if ((((date + kBelow10) | date | (time + kBelow10) | time) & kHigh) != 0 || (time & 0x0000FF0000FF0000ull) != 0)
    return false;
  date = (date * 10 + (date >> 8)) & 0x00FF00FF00FF00FFull;  // century, year, month, day in bytes 0, 2, 4, 6
  time = time * 10 + (time >> 8);                             // hours, minutes, seconds in bytes 0, 3, 6
  const auto year = static_cast<std::uint32_t>((date & 0xFF) * 100 + ((date >> 16) & 0xFF));
  const auto month = static_cast<std::uint32_t>((date >> 32) & 0xFF);
  const auto day = static_cast<std::uint32_t>(date >> 48);
  const auto h = static_cast<std::uint32_t>(time & 0xFF), m = static_cast<std::uint32_t>((time >> 24) & 0xFF),
             sec = static_cast<std::uint32_t>((time >> 48) & 0xFF);
  // February 29 passes the table; then the year must be a leap year.
  static constexpr std::uint8_t kMonthDays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  static constexpr std::uint16_t kBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const bool leap = (year & 3) == 0;
  if (year - 1901 > 2099 - 1901 || month - 1 > 11 || day - 1 >= kMonthDays[month - 1] || h > 23 || m > 59 ||
      sec > 60 || (month == 2 && day == 29 && !leap))
    return false;
  std::uint64_t fraction = 0;
  const std::size_t k = n == 17 ? 0 : n - 18;
  if (k != 0) {
    if (c[17] != '.') return false;
    // The last min(k, 8) bytes of c are digits: the word ending there, the
    // bytes before them cleared (leading zeros).
    std::uint64_t w;
    std::memcpy(&w, c + n - 8, sizeof w);
    w = (w ^ 0x3030303030303030ull) & (~std::uint64_t{0} << (8 * (8 - (k < 8 ? k : 8))));
    if (!sum_digit_word(w, fraction)) return false;
    if (k == 9) {
      const unsigned d = static_cast<unsigned char>(c[18]) - static_cast<unsigned>('0');
      if (d > 9) return false;
      fraction += d * 100'000'000ull;
    } else {
      fraction *= k == 3 ? 1'000'000 : 1'000;
    }
  }
  // Days since 1970-01-01: 365 a year, plus the leap days of 1901..year-1
  // less the 17 of 1901..1969, plus the days of the months before (one more
  // after February in a leap year).
  const std::int64_t days = 365 * (static_cast<std::int64_t>(year) - 1970) + ((year - 1901) >> 2) - 17 +
                            kBefore[month - 1] + (month > 2 && leap) + day - 1;
  nanos = (days * 86400 + h * 3600 + m * 60 + sec) * 1'000'000'000 + static_cast<std::int64_t>(fraction);
  fraction_digits = k;
  return true;
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
  std::uint64_t m = d.mantissa < 0 ? 0 - static_cast<std::uint64_t>(d.mantissa) : static_cast<std::uint64_t>(d.mantissa);
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
  const std::uint64_t m = d.mantissa < 0 ? 0 - static_cast<std::uint64_t>(d.mantissa) : static_cast<std::uint64_t>(d.mantissa);
  const std::size_t sign = d.mantissa < 0 ? 1 : 0;
  const std::size_t n = uint_digits(m);
  if (d.exponent >= 0) return sign + n + (m != 0 ? static_cast<std::size_t>(d.exponent < 20 ? d.exponent : 20) : 0);
  const std::size_t frac = static_cast<std::size_t>(-d.exponent) > 20 ? 20 : static_cast<std::size_t>(-d.exponent);
  return n <= frac ? sign + 2 + frac : sign + n + 1;
}

}  // namespace kite::codec
