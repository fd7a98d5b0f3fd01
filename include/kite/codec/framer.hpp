// Framing: where does the next FIX message in a byte buffer end?
//
// frame() looks at the start of a buffer that may hold nothing, part of a
// message, one message or many, and answers:
//   complete    the first `size` bytes are one whole message, checksum verified;
//   incomplete  more bytes are needed (nothing is consumed);
//   invalid     the bytes cannot start a valid message: `error` says why and
//               `size` (at least 1) is how many bytes to discard to reach the
//               next place a message could start.
// It never reads past the buffer and never looks at more than `max_size` bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "kite/codec/fix.hpp"
#include "kite/codec/scan.hpp"

namespace kite::codec {

enum class FrameStatus : std::uint8_t { complete, incomplete, invalid };

enum class FrameError : std::uint8_t {
  none,
  garbage_before_begin_string,  // the buffer does not start with "8="
  bad_begin_string,             // BeginString is not FIX.x.y or FIXT.1.1
  body_length_missing,          // the second field is not BodyLength (9)
  body_length_not_number,       // BodyLength is empty or not digits
  body_length_mismatch,         // no field boundary where BodyLength says the body ends
  checksum_missing,             // the body ends on a boundary but no "10=" follows
  checksum_not_three_digits,    // CheckSum is not exactly three digits and SOH
  checksum_mismatch,            // CheckSum does not match the bytes
  too_large,                    // BodyLength makes the message longer than max_size, or has
                                //   more than 9 digits
};

const char* to_string(FrameError e) noexcept;

struct FrameResult {
  FrameStatus status;
  FrameError error;
  std::uint32_t size;  // complete: frame length; invalid: bytes to discard; incomplete: 0
  // Offsets inside a complete frame, so the index walk need not find them again.
  std::uint32_t body_begin;  // first byte after "9=NNN<SOH>"
  std::uint32_t body_end;    // first byte of "10="
};

inline constexpr std::uint32_t kDefaultMaxMessageSize = 64 * 1024;

namespace detail {

// How many bytes to discard to reach the next place a message could start:
// the first position after 0 where "8=FIX" begins, or where the buffer ends
// in a prefix of it ("8", "8=F", ...), which is kept for the next call.
// At least 1; all of [0, limit) when no such place exists.
// (Out of line: the levels' walks, built for other instructions, share it.)
std::uint32_t resync(const char* p, std::size_t limit) noexcept;

// Where a frame already ends although BodyLength says it goes on: the first
// "<SOH>10=" at or after `from` followed by digits (none to three) and SOH
// inside [p, p + n). Returns the length up to and including that SOH, or 0.
// A CheckSum field cut short ("10=0") or a BodyLength pointing past the
// trailer is thereby discarded at once, not held until bytes of the next
// message arrive (and lost with them). A message not yet complete whose data
// field holds such bytes is the one case this misjudges.
// (Out of line, as resync.)
std::uint32_t trailer_end(const char* p, std::size_t from, std::size_t n) noexcept;

// "8=FIX." and "." in a little-endian word, the major version's byte masked off.
inline constexpr std::uint64_t kFixDotHead = 0x2E002E5849463D38ull;

[[gnu::always_inline]] inline FrameResult invalid(FrameError e, std::uint32_t discard) noexcept {
  return {FrameStatus::invalid, e, discard == 0 ? 1u : discard, 0, 0};
}

// "FIX.x.y" (x 4 or 5) or "FIXT.1.1". (Out of line, as resync.)
bool valid_begin_string(const char* s, std::size_t n) noexcept;

// The 8 bytes at t - 1 hold "<SOH>10=ddd<SOH>": true, and stated is ddd.
[[gnu::always_inline]] inline bool checksum_field(const char* t, std::uint32_t& stated) noexcept {
  std::uint64_t tail;
  std::memcpy(&tail, t - 1, sizeof tail);
  const std::uint64_t d = (tail >> 32 & 0xFFFFFFu) - 0x303030u;  // the three digits, '0' taken off
  if ((tail & 0xFF000000FFFFFFFFull) != 0x010000003D303101ull || (((d + 0x767676u) | d) & 0x808080u) != 0) return false;
  stated = static_cast<std::uint32_t>((d & 0xFF) * 100 + (d >> 8 & 0xFF) * 10 + (d >> 16));
  return true;
}

// frame() but its last step: a complete answer here means that the layout
// is right, and `stated` holds the CheckSum's value, which the caller compares
// with the sum of the bytes before "10=" (frame() with Scan::checksum,
// FieldIndex::frame_and_build with the sum its walk takes on the way).
struct Layout {
  [[gnu::always_inline]] Layout(const FrameResult& r, std::uint32_t s = 0, std::uint32_t b = 0) noexcept
      : result(r), stated(s), begin_string_end(b) {}
  FrameResult result;
  std::uint32_t stated;            // the CheckSum field's value
  std::uint32_t begin_string_end;  // offset of the SOH after BeginString
};

template <class Scan>
[[gnu::always_inline]] inline Layout frame_layout(const char* p, std::size_t n, std::uint32_t max_size) noexcept {
  constexpr FrameResult kIncomplete{FrameStatus::incomplete, FrameError::none, 0, 0, 0};
  constexpr bool kWide = !std::is_same_v<Scan, ScalarScan>;  // ScalarScan: the plain twin
  // The usual complete message, checked a word at a time: "8=FIX.x.y" SOH
  // "9=" with 1 to 7 digits and SOH, all of it inside the buffer and under
  // max_size, and "<SOH>10=ddd<SOH>" where BodyLength says. Anything else
  // (errors, other BeginStrings, a message not all here) takes the careful
  // path below, which gives the same answer for what this path takes.
  if (kWide && n >= 20) {
    std::uint64_t w0, w1, w2;
    std::memcpy(&w0, p, sizeof w0);       // "8=FIX.x."
    std::memcpy(&w1, p + 8, sizeof w1);   // "y" SOH "9=" and 4 bytes of BodyLength
    std::memcpy(&w2, p + 12, sizeof w2);  // BodyLength's digits and SOH
    const std::uint64_t major = ((w0 >> 48) & 0xFF) - '4', minor = (w1 & 0xFF) - '0';
    const std::uint64_t x = w2 ^ 0x3030303030303030ull;  // digits become 0..9, SOH 0x31
    const std::uint64_t other = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;  // lowest bit exact
    const std::size_t digits = static_cast<std::size_t>(__builtin_ctzll(other | (std::uint64_t{1} << 63))) >> 3;
    if ((w0 & 0xFF00FFFFFFFFFFFFull) == kFixDotHead && major <= 1 && minor <= 9 && (w1 & 0xFFFFFF00u) == 0x3D390100u &&
        digits - 1 < 7 && ((x >> (8 * digits)) & 0xFF) == (kSoh ^ 0x30)) [[likely]] {
      const std::uint64_t body_begin = 13 + digits, body_end = body_begin + detail::digits_value(x, digits);
      const std::uint64_t total = body_end + 7;
      std::uint32_t stated;
      if (body_end > body_begin && total <= n && total <= max_size && checksum_field(p + body_end, stated)) {
        return {{FrameStatus::complete, FrameError::none, static_cast<std::uint32_t>(total),
                 static_cast<std::uint32_t>(body_begin), static_cast<std::uint32_t>(body_end)},
                stated,
                9};
      }
    }
  }

  const std::size_t limit = n < max_size ? n : max_size;
  if (n == 0) return kIncomplete;

  // "8=" BeginString SOH
  if (p[0] != '8' || (n >= 2 && p[1] != '=')) {
    return detail::invalid(FrameError::garbage_before_begin_string, detail::resync(p, limit));
  }
  if (n < 2) return kIncomplete;
  constexpr std::size_t kMaxBeginString = 8;  // "FIXT.1.1"
  const char* bs = p + 2;
  const char* bs_end;
  std::uint64_t head;
  if (kWide && limit >= 16) std::memcpy(&head, p, sizeof head);
  if (kWide && limit >= 16 && (head & 0xFF00FFFFFFFFFFFFull) == detail::kFixDotHead && (p[6] == '4' || p[6] == '5') &&
      static_cast<unsigned>(p[8] - '0') <= 9 && p[9] == kSoh) [[likely]] {
    bs_end = p + 9;  // "8=FIX.x.y": the usual BeginString, checked without a search
  } else {
    const char* search_end = p + (limit < 2 + kMaxBeginString + 1 ? limit : 2 + kMaxBeginString + 1);
    bs_end = Scan::find(bs, search_end, kSoh);
    if (bs_end == search_end) {
      if (search_end == p + n && n < max_size) return kIncomplete;
      return detail::invalid(FrameError::bad_begin_string, detail::resync(p, limit));
    }
    if (!detail::valid_begin_string(bs, static_cast<std::size_t>(bs_end - bs))) {
      return detail::invalid(FrameError::bad_begin_string, detail::resync(p, limit));
    }
  }

  // "9=" digits SOH
  const char* q = bs_end + 1;
  const char* const stop = p + limit;
  if (stop - q < 2)
    return n < max_size ? kIncomplete : detail::invalid(FrameError::too_large, detail::resync(p, limit));
  if (q[0] != '9' || q[1] != '=') return detail::invalid(FrameError::body_length_missing, detail::resync(p, limit));
  q += 2;
  constexpr int kMaxDigits = 9;
  std::uint64_t body = 0;
  int digits = 0;
  std::uint64_t w = 0;
  std::uint64_t soh8 = 0;  // SOH bits of the word after "9=" (the lowest is exact)
  if (kWide && stop - q >= 8) {
    std::memcpy(&w, q, sizeof w);
    soh8 = SwarScan::match(w, kSoh);
  }
  std::uint32_t body32;
  const std::size_t soh_at = static_cast<std::size_t>(__builtin_ctzll(soh8 | (std::uint64_t{1} << 63))) >> 3;
  if (soh8 != 0 && soh_at != 0 && detail::parse_digits8(w, soh_at, body32)) [[likely]] {
    body = body32;  // 1 to 7 digits and their SOH in one word
    q += soh_at;
    digits = static_cast<int>(soh_at);
  } else {
    for (;; ++q, ++digits) {
      if (q == stop) {
        // The digits so far already name a frame over the limit: more of
        // them only make it larger, so a peer that stops here is not waited for.
        if (n >= max_size || static_cast<std::uint64_t>(q + 1 - p) + body + 7 > max_size)
          return detail::invalid(FrameError::too_large, detail::resync(p, limit));
        return kIncomplete;
      }
      const char c = *q;
      if (c == kSoh) break;
      if (c < '0' || c > '9') return detail::invalid(FrameError::body_length_not_number, detail::resync(p, limit));
      // A digit past the ninth is a length of a gigabyte or more: too large
      // (not garbage), refused at once like a short number over the limit.
      if (digits == kMaxDigits) return detail::invalid(FrameError::too_large, detail::resync(p, limit));
      body = body * 10 + static_cast<std::uint64_t>(c - '0');
    }
  }
  if (digits == 0) return detail::invalid(FrameError::body_length_not_number, detail::resync(p, limit));

  const std::uint64_t body_begin = static_cast<std::uint64_t>(q + 1 - p);
  const std::uint64_t body_end = body_begin + body;
  const std::uint64_t total = body_end + 7;  // "10=" ddd SOH
  if (total > max_size) return detail::invalid(FrameError::too_large, detail::resync(p, limit));
  if (total > n) {
    if (const std::uint32_t end = detail::trailer_end(p, body_begin - 1, n)) {
      const bool here = body_end < n && end > body_end && p[body_end - 1] == kSoh && p[body_end] == '1';
      return detail::invalid(here ? FrameError::checksum_not_three_digits : FrameError::body_length_mismatch, end);
    }
    return kIncomplete;
  }

  const char* t = p + body_end;
  std::uint32_t stated;
  if (kWide && body != 0 && checksum_field(t, stated)) [[likely]] {  // one word: [t - 1, t + 7) is inside the buffer
    return {{FrameStatus::complete, FrameError::none, static_cast<std::uint32_t>(total),
             static_cast<std::uint32_t>(body_begin), static_cast<std::uint32_t>(body_end)},
            stated,
            static_cast<std::uint32_t>(bs_end - p)};
  }
  if (body == 0 || t[-1] != kSoh || t[0] != '1' || t[1] != '0' || t[2] != '=') {
    const bool boundary = body != 0 && t[-1] == kSoh;
    return detail::invalid(boundary ? FrameError::checksum_missing : FrameError::body_length_mismatch,
                           detail::resync(p, limit));
  }
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!digit(t[3]) || !digit(t[4]) || !digit(t[5]) || t[6] != kSoh) {
    // A short CheckSum followed by a message start: discard up to the
    // CheckSum's own SOH, not into the next message.
    const std::uint32_t end = detail::trailer_end(p, body_end - 1, total);
    const bool next_starts = end != 0 && end < total && p[end] == '8';
    return detail::invalid(FrameError::checksum_not_three_digits,
                           next_starts ? end : static_cast<std::uint32_t>(total));
  }
  stated = static_cast<std::uint32_t>((t[3] - '0') * 100 + (t[4] - '0') * 10 + (t[5] - '0'));
  return {{FrameStatus::complete, FrameError::none, static_cast<std::uint32_t>(total),
           static_cast<std::uint32_t>(body_begin), static_cast<std::uint32_t>(body_end)},
          stated,
          static_cast<std::uint32_t>(bs_end - p)};
}
}  // namespace detail

template <class Scan = FastScan>
FrameResult frame(const char* p, std::size_t n, std::uint32_t max_size = kDefaultMaxMessageSize) noexcept {
  const detail::Layout l = detail::frame_layout<Scan>(p, n, max_size);
  if (l.result.status == FrameStatus::complete && l.stated != Scan::checksum(p, p + l.result.body_end)) [[unlikely]] {
    return detail::invalid(FrameError::checksum_mismatch, l.result.size);
  }
  return l.result;
}

// The default scan: one call into the level in use (level.hpp).
template <>
inline FrameResult frame<FastScan>(const char* p, std::size_t n, std::uint32_t max_size) noexcept {
  return detail::g_active_ops->frame(p, n, max_size);
}

inline FrameResult frame(std::string_view bytes, std::uint32_t max_size = kDefaultMaxMessageSize) noexcept {
  return frame<FastScan>(bytes.data(), bytes.size(), max_size);
}

}  // namespace kite::codec
