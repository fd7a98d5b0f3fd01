// Numbers rendered a word at a time, for fields written into room reserved
// beforehand (MessageWriter::reserve): each writes the characters its
// scalar twin in values.hpp writes (write_uint, write_decimal) and returns
// the same end, but may also write bytes after that end: up to
// kMaxUintChars (write_uint_wide) or kMaxDecimalChars (write_decimal_wide)
// bytes from p in all, which the caller writes over or leaves unused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kite/codec/values.hpp"

namespace kite::codec {

namespace detail {
// The eight decimal digits of v < 10^8 (leading zeros included) as the
// values 0..9 in the bytes of a word, the most significant in the lowest
// byte (the first in memory). Two 4-digit halves in 32-bit lanes, split
// into pairs (x / 100 as x * 5243 >> 19, exact below 10^4) and digits
// (x / 10 as x * 103 >> 10, exact below 100) with no division.
inline std::uint64_t eight_digits(std::uint32_t v) noexcept {
  std::uint64_t x = (v / 10000) | (static_cast<std::uint64_t>(v % 10000) << 32);
  const std::uint64_t hundreds = ((x * 5243) >> 19) & 0x0000007F0000007Full;
  x = hundreds | ((x - hundreds * 100) << 16);
  const std::uint64_t tens = ((x * 103) >> 10) & 0x000F000F000F000Full;
  return tens | ((x - tens * 10) << 8);
}

// The digits of v < 10^8 as text at p (8 bytes written); returns the end.
inline char* put_below_1e8(char* p, std::uint32_t v) noexcept {
  const std::uint64_t w = eight_digits(v);
  const unsigned lead = v == 0 ? 7u : static_cast<unsigned>(__builtin_ctzll(w)) >> 3;  // leading zeros
  const std::uint64_t text = (w + 0x3030303030303030ull) >> (8 * lead);
  std::memcpy(p, &text, sizeof text);
  return p + 8 - lead;
}

// The scalar writers, out of line: inlined into a caller's run of wide
// writes, their loops would cost every call the registers they save.
[[gnu::noinline, gnu::cold]] inline char* write_uint_apart(char* p, std::uint64_t v) noexcept {
  return write_uint(p, v);
}
[[gnu::noinline, gnu::cold]] inline char* write_decimal_apart(char* p, Decimal d) noexcept {
  return write_decimal(p, d);
}
}  // namespace detail

// write_uint(p, v), writing up to kMaxUintChars bytes at p. (Always
// inlined, as is write_decimal_wide: a report writes several in a row.)
[[gnu::always_inline]] inline char* write_uint_wide(char* p, std::uint64_t v) noexcept {
  constexpr std::uint64_t k1e8 = 100'000'000;
  if (v < k1e8) return detail::put_below_1e8(p, static_cast<std::uint32_t>(v));
  if (v >= k1e8 * k1e8) [[unlikely]]
    return detail::write_uint_apart(p, v);
  p = detail::put_below_1e8(p, static_cast<std::uint32_t>(v / k1e8));
  const std::uint64_t low = detail::eight_digits(static_cast<std::uint32_t>(v % k1e8)) + 0x3030303030303030ull;
  std::memcpy(p, &low, sizeof low);
  return p + 8;
}

// write_decimal(p, d), writing up to kMaxDecimalChars bytes at p. Word at a
// time for a whole number or a mantissa below 10^8 with digits before its
// point; write_decimal for the rest.
[[gnu::always_inline]] inline char* write_decimal_wide(char* p, Decimal d) noexcept {
  if (d.mantissa < 0 || d.mantissa >= 100'000'000) [[unlikely]]
    return detail::write_decimal_apart(p, d);
  const auto m = static_cast<std::uint32_t>(d.mantissa);
  if (d.exponent == 0) {
    if (m < 10) {  // a report's zero quantities and prices: one byte
      *p = static_cast<char>('0' + m);
      return p + 1;
    }
    return detail::put_below_1e8(p, m);
  }
  if (d.exponent > 0 || m == 0) [[unlikely]]
    return detail::write_decimal_apart(p, d);
  const std::uint64_t w = detail::eight_digits(m);
  const unsigned lead = static_cast<unsigned>(__builtin_ctzll(w)) >> 3;
  const unsigned n = 8 - lead;                                    // digits
  const auto frac = static_cast<unsigned>(-static_cast<std::int64_t>(d.exponent));  // digits after the point
  if (n <= frac) return detail::write_decimal_apart(p, d);  // "0.0ddd"
  const unsigned whole = n - frac;
  const std::uint64_t text = (w + 0x3030303030303030ull) >> (8 * lead);
  std::memcpy(p, &text, sizeof text);
  p[whole] = '.';
  const std::uint64_t after = text >> (8 * whole);
  std::memcpy(p + whole + 1, &after, sizeof after);
  return p + n + 1;
}

}  // namespace kite::codec
