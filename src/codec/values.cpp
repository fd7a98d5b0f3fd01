#include "kite/codec/values.hpp"

#include <cstring>
#include <limits>

namespace kite::codec {
namespace {

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;

bool digits(std::string_view s, std::size_t at, std::size_t n, std::int32_t& out) noexcept {
  std::int32_t v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
    if (d > 9) return false;
    v = v * 10 + static_cast<std::int32_t>(d);
  }
  out = v;
  return true;
}

std::int32_t days_in_month(std::int32_t y, std::int32_t m) noexcept {
  static constexpr std::int32_t kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// "HH:MM:SS[.f{3,6,9}]" starting at s[0]; leap second 60 is accepted.
bool parse_time(std::string_view s, std::int64_t& nanos, TimePrecision* precision) noexcept {
  if (s.size() < 8 || s[2] != ':' || s[5] != ':') return false;
  std::int32_t h, m, sec;
  if (!digits(s, 0, 2, h) || !digits(s, 3, 2, m) || !digits(s, 6, 2, sec)) return false;
  if (h > 23 || m > 59 || sec > 60) return false;
  std::int64_t frac = 0;
  TimePrecision p = TimePrecision::seconds;
  const std::size_t rest = s.size() - 8;
  if (rest != 0) {
    if (s[8] != '.' || (rest != 4 && rest != 7 && rest != 10)) return false;
    std::int64_t f = 0;
    for (std::size_t i = 9; i < s.size(); ++i) {
      const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
      if (d > 9) return false;
      f = f * 10 + d;
    }
    const std::size_t n = rest - 1;
    p = static_cast<TimePrecision>(n);
    for (std::size_t i = n; i < 9; ++i) f *= 10;
    frac = f;
  }
  nanos = (static_cast<std::int64_t>(h) * 3600 + m * 60 + sec) * kNanosPerSecond + frac;
  if (precision != nullptr) *precision = p;
  return true;
}

// The date and time of day of the last timestamp the word read took on this
// thread, and that second in nanoseconds: a thread's inbound stamps mostly
// share their second, so a repeat needs only its fraction checked.
struct SecondSeen {
  char text[17] = {};  // "YYYYMMDD-HH:MM:SS"
  bool valid = false;
  std::int64_t nanos = 0;
};
thread_local SecondSeen t_second;

// k (at most 9) fraction digits at f as nanoseconds; false on a non-digit.
bool fraction_ns(const char* f, std::size_t k, std::int64_t& ns) noexcept {
  static constexpr std::int64_t kScale[10] = {1'000'000'000, 100'000'000, 10'000'000, 1'000'000, 100'000,
                                              10'000,        1'000,       100,        10,        1};
  if (k == 3) {  // milliseconds, the usual stamp: no loop
    const unsigned a = static_cast<unsigned char>(f[0]) - static_cast<unsigned>('0');
    const unsigned b = static_cast<unsigned char>(f[1]) - static_cast<unsigned>('0');
    const unsigned c = static_cast<unsigned char>(f[2]) - static_cast<unsigned>('0');
    if ((a > 9) | (b > 9) | (c > 9)) return false;
    ns = static_cast<std::int64_t>(a * 100 + b * 10 + c) * 1'000'000;
    return true;
  }
  std::int64_t v = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const unsigned d = static_cast<unsigned char>(f[i]) - static_cast<unsigned>('0');
    if (d > 9) return false;
    v = v * 10 + d;
  }
  ns = v * kScale[k];
  return true;
}

char* two(char* p, std::int32_t v) noexcept {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
  return p + 2;
}

}  // namespace

bool Decimal::scaled_to(std::int32_t exp, std::int64_t& out) const noexcept {
  std::int64_t m = mantissa;
  std::int32_t e = exponent;
  while (e > exp) {
    if (m > std::numeric_limits<std::int64_t>::max() / 10 || m < std::numeric_limits<std::int64_t>::min() / 10)
      return false;
    m *= 10;
    --e;
  }
  while (e < exp) {
    if (m % 10 != 0) return false;
    m /= 10;
    ++e;
  }
  out = m;
  return true;
}

bool operator==(const Decimal& a, const Decimal& b) noexcept {
  const Decimal x = a.normalized(), y = b.normalized();
  return x.mantissa == y.mantissa && x.exponent == y.exponent;
}

bool operator<(const Decimal& a, const Decimal& b) noexcept {
  // Bring both to the smaller exponent when that is exact; fall back to
  // comparing the normalized forms digit-wise via long double only for
  // values that cannot share an exponent in 64 bits (display-only sizes).
  const std::int32_t e = a.exponent < b.exponent ? a.exponent : b.exponent;
  std::int64_t x, y;
  if (a.scaled_to(e, x) && b.scaled_to(e, y)) return x < y;
  const Decimal na = a.normalized(), nb = b.normalized();
  if ((na.mantissa < 0) != (nb.mantissa < 0)) return na.mantissa < 0;
  const long double lx = static_cast<long double>(na.mantissa), ly = static_cast<long double>(nb.mantissa);
  long double sx = lx, sy = ly;
  for (std::int32_t i = 0; i < na.exponent - e; ++i) sx *= 10;
  for (std::int32_t i = 0; i < nb.exponent - e; ++i) sy *= 10;
  return sx < sy;
}

std::int64_t days_from_civil(std::int32_t y, std::int32_t m, std::int32_t d) noexcept {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Date civil_from_days(std::int64_t z) noexcept {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int32_t d = static_cast<std::int32_t>(doy - (153 * mp + 2) / 5 + 1);
  const std::int32_t m = static_cast<std::int32_t>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<std::int32_t>(yoe + era * 400 + (m <= 2)), m, d};
}

bool parse_date(std::string_view s, Date& out) noexcept {
  if (s.size() != 8) return false;
  Date d;
  if (!digits(s, 0, 4, d.year) || !digits(s, 4, 2, d.month) || !digits(s, 6, 2, d.day)) return false;
  if (d.month < 1 || d.month > 12 || d.day < 1 || d.day > days_in_month(d.year, d.month)) return false;
  out = d;
  return true;
}

[[gnu::hot]] bool parse_utc_timestamp(std::string_view s, std::int64_t& nanos, TimePrecision* precision) noexcept {
  // The word read's lengths: 17, 21, 24 or 27 bytes.
  const std::size_t n = s.size();
  const bool word_length = n == 17 || n == 21 || n == 24 || n == 27;
  SecondSeen& seen = t_second;
  if (word_length && seen.valid && std::memcmp(s.data(), seen.text, sizeof seen.text) == 0) {
    // The word read took these 17 bytes: its answer now rests on the fraction alone.
    std::int64_t frac = 0;
    if (n == 17 || (s[17] == '.' && fraction_ns(s.data() + 18, n - 18, frac))) {
      nanos = seen.nanos + frac;
      if (precision != nullptr) *precision = static_cast<TimePrecision>(n == 17 ? 0 : n - 18);
      return true;
    }
  }
  std::size_t fraction_digits;
  if (detail::parse_utc_timestamp_word(s.data(), n, nanos, fraction_digits)) [[likely]] {
    if (precision != nullptr) *precision = static_cast<TimePrecision>(fraction_digits);
    constexpr std::int64_t kNs = 1'000'000'000;
    std::memcpy(seen.text, s.data(), sizeof seen.text);
    seen.nanos = nanos - ((nanos % kNs) + kNs) % kNs;  // the second: the fraction is never negative
    seen.valid = true;
    return true;
  }
  if (s.size() < 17 || s[8] != '-') return false;
  Date d;
  std::int64_t t;
  if (!parse_date(s.substr(0, 8), d) || !parse_time(s.substr(9), t, precision)) return false;
  // Nanoseconds in 64 bits reach from 1677 to 2262: other years do not fit.
  std::int64_t day_ns, total;
  if (__builtin_mul_overflow(days_from_civil(d.year, d.month, d.day), 86400 * kNanosPerSecond, &day_ns) ||
      __builtin_add_overflow(day_ns, t, &total))
    return false;
  nanos = total;
  return true;
}

bool parse_utc_time_only(std::string_view s, std::int64_t& nanos) noexcept { return parse_time(s, nanos, nullptr); }

char* write_date(char* p, Date d) noexcept {
  p = two(p, d.year / 100);
  p = two(p, d.year % 100);
  p = two(p, d.month);
  return two(p, d.day);
}

char* write_utc_timestamp(char* p, std::int64_t nanos, TimePrecision precision) noexcept {
  std::int64_t secs = nanos / kNanosPerSecond;
  std::int64_t frac = nanos % kNanosPerSecond;
  if (frac < 0) {
    frac += kNanosPerSecond;
    --secs;
  }
  std::int64_t days = secs / 86400;
  std::int64_t sod = secs % 86400;
  if (sod < 0) {
    sod += 86400;
    --days;
  }
  p = write_date(p, civil_from_days(days));
  *p++ = '-';
  p = two(p, static_cast<std::int32_t>(sod / 3600));
  *p++ = ':';
  p = two(p, static_cast<std::int32_t>(sod / 60 % 60));
  *p++ = ':';
  p = two(p, static_cast<std::int32_t>(sod % 60));
  const int n = static_cast<int>(precision);
  if (n != 0) {
    *p++ = '.';
    std::int64_t f = frac;
    for (int i = n; i < 9; ++i) f /= 10;
    for (int i = n - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + f % 10);
      f /= 10;
    }
    p += n;
  }
  return p;
}

}  // namespace kite::codec
