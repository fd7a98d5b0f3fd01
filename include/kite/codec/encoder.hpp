// The encoder writes a message straight into a buffer it is handed.
//
// A HeaderTemplate is rendered once per session: BeginString and the CompID,
// SubID and LocationID fields that never change. MessageWriter then writes
//   8=BeginString|9=NNN|35=MsgType|<template fields>|34=SeqNum|52=SendingTime|
// followed by body fields from typed calls, and finish() fills BodyLength and
// the CheckSum in place. BodyLength's digits are reserved from the previous
// message's count, so the body moves only when that count changes.
// SendingTime's text is re-rendered once per millisecond (per thread).
// Nothing allocates after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "kite/codec/digits.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/scan.hpp"
#include "kite/codec/values.hpp"

namespace kite::codec {

struct HeaderFields {
  std::string begin_string = "FIX.4.4";
  std::string sender_comp_id;
  std::string target_comp_id;
  std::string sender_sub_id;
  std::string target_sub_id;
  std::string sender_location_id;
  std::string target_location_id;
};

class HeaderTemplate {
 public:
  explicit HeaderTemplate(const HeaderFields& f);

  std::string_view begin() const noexcept { return begin_; }  // "8=FIX.4.4|9="
  std::string_view fixed() const noexcept { return fixed_; }  // "49=S|56=T|..." (may be empty)
  const HeaderFields& fields() const noexcept { return fields_; }

 private:
  HeaderFields fields_;
  std::string begin_;
  std::string fixed_;
};

class MessageWriter {
 public:
  explicit MessageWriter(const HeaderTemplate& h, TimePrecision precision = TimePrecision::millis) noexcept
      : header_(&h), precision_(precision) {}

  // The template's texts as this writer keeps its copy of them: "8=" BeginString
  // SOH "9=" then the fixed fields; loaded now if not yet, empty when they do
  // not fit the copy. kHeaderTextRoom bytes are readable from its start.
  static constexpr std::size_t kHeaderTextRoom = 48;
  std::string_view header_text() noexcept {
    if (begin_len_ == 0) load_header();
    return text_inline_ ? std::string_view(text_, begin_len_ + fixed_len_) : std::string_view();
  }
  const char* header_text_data() const noexcept { return text_; }

  // Starts a message at buf. Header fields other than the template's, 34 and
  // 52 (PossDupFlag, OrigSendingTime, OnBehalfOfCompID...) are added next with
  // the typed calls, before the body fields.
  void begin(char* buf, std::size_t capacity, std::string_view msg_type, std::uint64_t seq_num,
             std::int64_t sending_time_ns) noexcept {
    buf_ = buf;
    end_ = buf + capacity;
    ok_ = true;
    p_ = buf;
    if (begin_len_ == 0) [[unlikely]]
      load_header();
    // The template's texts, from this writer's copy when they fit it.
    const char* const b = text_inline_ ? text_ : header_->begin().data();
    const char* const f = text_inline_ ? text_ + begin_len_ : header_->fixed().data();
    // One room check for everything up to MsgSeqNum: "8=...|9=" digits SOH
    // "35=" type SOH and the fixed fields.
    const std::size_t type_len = msg_type.size();
    const std::size_t need = begin_len_ + length_digits_ + 1 + 3 + type_len + 1 + fixed_len_;
    if (!room(need)) return;
    char* q = p_;
    // With 32 bytes to spare, the copies are of fixed sizes (no call); the
    // bytes past each text are written over by what follows.
    const bool wide = text_short_ && static_cast<std::size_t>(end_ - p_) >= need + 32;
    if (wide)
      std::memcpy(q, b, 16);
    else
      std::memcpy(q, b, begin_len_);
    q += begin_len_ + length_digits_;  // BodyLength's digits, written by finish()
    *q++ = kSoh;
    body_ = q;
    std::memcpy(q, "35=", 3);
    q += 3;
    if (type_len == 1)
      *q = msg_type[0];
    else if (type_len != 0)
      std::memcpy(q, msg_type.data(), type_len);
    q += type_len;
    *q++ = kSoh;
    if (wide)
      std::memcpy(q, f, 32);
    else if (fixed_len_ != 0)
      std::memcpy(q, f, fixed_len_);
    p_ = q + fixed_len_;
    // "34=" seq SOH "52=" time SOH: constant tags and word-wide writes when
    // the room for their longest form is free, else the typed calls.
    // (Nothing else is kept in the writer: its fields are two of the
    // session's hot lines.)
    constexpr std::size_t kSeqAndTime = 3 + 8 + 1 + 3 + kMaxTimestampChars + 1;
    if (seq_num < 100'000'000 && static_cast<std::size_t>(end_ - p_) >= kSeqAndTime) [[likely]] {
      q = p_;
      std::memcpy(q, "34=", 3);
      q = detail::put_below_1e8(q + 3, static_cast<std::uint32_t>(seq_num));
      std::memcpy(q, "\x01" "52=", 4);
      q = render_timestamp(q + 4, sending_time_ns, precision_);
      *q = kSoh;
      p_ = q + 1;
      return;
    }
    add_uint(tag::MsgSeqNum, seq_num);
    add_timestamp(tag::SendingTime, sending_time_ns);
  }

  void add_string(std::uint32_t t, std::string_view v) noexcept {
    if (char* q = claim(t, v.size())) {
      if (!v.empty()) std::memcpy(q, v.data(), v.size());  // an empty view's data() may be null
      q[v.size()] = kSoh;
    }
  }
  void add_char(std::uint32_t t, char c) noexcept {
    if (char* q = claim(t, 1)) {
      q[0] = c;
      q[1] = kSoh;
    }
  }
  void add_bool(std::uint32_t t, bool b) noexcept { add_char(t, b ? 'Y' : 'N'); }
  void add_uint(std::uint32_t t, std::uint64_t v) noexcept {
    if (char* q = claim(t, uint_digits(v))) *write_uint(q, v) = kSoh;
  }
  void add_int(std::uint32_t t, std::int64_t v) noexcept {
    const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    if (char* q = claim(t, uint_digits(magnitude) + (v < 0))) *write_int(q, v) = kSoh;
  }
  void add_decimal(std::uint32_t t, Decimal d) noexcept {
    if (char* q = claim(t, decimal_chars(d))) *write_decimal(q, d) = kSoh;
  }
  // A UTCTimestamp at the writer's precision (or the one given).
  void add_timestamp(std::uint32_t t, std::int64_t nanos) noexcept { add_timestamp(t, nanos, precision_); }
  void add_timestamp(std::uint32_t t, std::int64_t nanos, TimePrecision precision) noexcept;
  // Bytes already in "tag=value<SOH>" form (a stored body, a pre-rendered block).
  void add_raw(std::string_view fields) noexcept { put(fields); }

  // Fields written by the caller, for a run of them whose length is known
  // to be at most n: one room check, then unchecked writes (codec::put
  // below). reserve() returns where they go, or nullptr when n bytes are
  // not free (nothing changes: the typed calls may still fit what is
  // shorter); advance(q) ends the run at q, which must lie in the n bytes.
  char* reserve(std::size_t n) noexcept { return static_cast<std::size_t>(end_ - p_) >= n ? p_ : nullptr; }
  void advance(char* q) noexcept { p_ = q; }
  // A UTCTimestamp value at the writer's precision at q, without tag or
  // SOH (at most kMaxTimestampChars bytes); returns its end.
  char* put_timestamp(char* q, std::int64_t nanos) noexcept { return render_timestamp(q, nanos, precision_); }

  // Fills BodyLength and CheckSum; returns the message's length (it starts at
  // buf), or 0 when it did not fit the capacity. Room is checked exactly: a
  // message of n bytes fits any capacity >= n, and nothing is ever written at
  // or past buf + capacity.
  std::size_t finish() noexcept {
    if (!ok_) return 0;
    const std::size_t body = static_cast<std::size_t>(p_ - body_);
    const std::size_t digits = uint_digits(body);
    if (digits != length_digits_) {  // rare: the reserved width was wrong
      const std::ptrdiff_t shift = static_cast<std::ptrdiff_t>(digits) - static_cast<std::ptrdiff_t>(length_digits_);
      if (shift > 0 && end_ - p_ < shift) return fail();
      std::memmove(body_ + shift, body_, body);
      body_ += shift;
      p_ += shift;
      length_digits_ = static_cast<std::uint8_t>(digits);
    }
    char* const length = body_ - 1 - digits;
    if (digits == 3) [[likely]]
      put_3_digits(length, static_cast<std::uint32_t>(body));
    else
      write_uint(length, body);
    body_[-1] = kSoh;
    if (!room(7)) return 0;
    // "10=" NNN SOH built in a word and stored at once (byte stores through
    // char* would make the compiler reload p_ after each).
    char* const p = p_;
    const std::uint32_t sum = FastScan::checksum(buf_, p);
    const std::uint32_t pair = sum % 100;
    const std::uint64_t trailer = 0x3d3031u | std::uint64_t{'0' + sum / 100} << 24 |
                                  std::uint64_t{static_cast<unsigned char>(detail::kDigitPairs[pair * 2])} << 32 |
                                  std::uint64_t{static_cast<unsigned char>(detail::kDigitPairs[pair * 2 + 1])} << 40 |
                                  std::uint64_t{kSoh} << 48;
    std::memcpy(p, &trailer, 7);  // little-endian: the lowest byte first
    p_ = p + 7;
    return static_cast<std::size_t>(p_ - buf_);
  }

  bool ok() const noexcept { return ok_; }
  // Bytes written so far (the message is not valid before finish()).
  std::size_t written() const noexcept { return static_cast<std::size_t>(p_ - buf_); }
  TimePrecision precision() const noexcept { return precision_; }
  // The MsgType begin() wrote (empty when even that did not fit).
  std::string_view msg_type() const noexcept {
    if (body_ == nullptr || p_ - body_ < 4) return {};
    const char* t = body_ + 3;  // "35="
    const char* e = t;
    while (e < p_ && *e != kSoh) ++e;
    return {t, static_cast<std::size_t>(e - t)};
  }

 private:
  // Whether n more bytes fit; once one call fails, every later one does too:
  // failing pulls end_ back to p_, so that one compare is the whole check.
  bool room(std::size_t n) noexcept {
    if (static_cast<std::size_t>(end_ - p_) >= n) [[likely]]
      return true;
    ok_ = false;
    end_ = p_;
    return false;
  }
  std::size_t fail() noexcept {
    ok_ = false;
    end_ = p_;
    return 0;
  }
  void put(std::string_view s) noexcept {
    if (!room(s.size()) || s.empty()) return;
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // One room check for "tag=" + value_len bytes + SOH: writes "tag=", moves
  // past the whole field and returns where the value goes (nullptr when the
  // field does not fit: nothing is written).
  char* claim(std::uint32_t t, std::size_t value_len) noexcept {
    const std::size_t tag_len = uint_digits(t);
    if (!room(tag_len + 1 + value_len + 1)) return nullptr;
    char* q = write_uint(p_, t);
    *q++ = '=';
    p_ = q + value_len + 1;
    return q;
  }
  // The three digits of v < 1000 at q.
  static void put_3_digits(char* q, std::uint32_t v) noexcept {
    const std::uint32_t pair = v % 100;
    q[0] = static_cast<char>('0' + v / 100);
    q[1] = detail::kDigitPairs[pair * 2];
    q[2] = detail::kDigitPairs[pair * 2 + 1];
  }
  // Copies the template's texts into text_ when they fit (first begin():
  // the template may be made after the writer, as in a Session).
  void load_header() noexcept {
    const std::string_view b = header_->begin(), f = header_->fixed();
    begin_len_ = static_cast<std::uint16_t>(b.size());  // BeginString is FIX.x.y or FIXT.1.1 (settings' check)
    fixed_len_ = static_cast<std::uint32_t>(f.size());
    text_inline_ = b.size() + f.size() <= sizeof text_;
    text_short_ = text_inline_ && begin_len_ <= 16 && fixed_len_ <= 32;
    if (!text_inline_) return;
    std::memcpy(text_, b.data(), b.size());
    if (!f.empty()) std::memcpy(text_ + b.size(), f.data(), f.size());
  }

  const HeaderTemplate* header_;
  TimePrecision precision_;
  std::uint8_t length_digits_ = 3;
  bool ok_ = true;
  char* buf_ = nullptr;
  char* p_ = nullptr;
  char* end_ = nullptr;
  char* body_ = nullptr;
  // The timestamp at precision; returns its end. (The text of the last
  // millisecond rendered is kept per thread, not here: two lines of every
  // session hold the writer.)
  char* render_timestamp(char* q, std::int64_t nanos, TimePrecision precision) noexcept;

  bool text_inline_ = false;
  bool text_short_ = false;      // inline, and within the fixed-size copies' 16 and 32 bytes
  std::uint16_t begin_len_ = 0;  // 0 until load_header(); "8=" BeginString SOH "9=" is short
  std::uint32_t fixed_len_ = 0;
  // begin() then fixed(), when both fit (the fixed-size copies read at most
  // 16 bytes from the start and 32 from fixed()'s: within these 48).
  char text_[kHeaderTextRoom] = {};
};

// Unchecked writes for MessageWriter::reserve(): each writes at q and
// returns the end. put::text copies a constant ("\x01" "37=": the SOH that
// ends one field and the tag of the next, in one store).
namespace put {
template <std::size_t N>
[[gnu::always_inline]] inline char* text(char* q, const char (&s)[N]) noexcept {
  std::memcpy(q, s, N - 1);
  return q + N - 1;
}
[[gnu::always_inline]] inline char* view(char* q, std::string_view v) noexcept {
  if (!v.empty()) std::memcpy(q, v.data(), v.size());  // an empty view's data() may be null
  return q + v.size();
}
[[gnu::always_inline]] inline char* chr(char* q, char c) noexcept {
  *q = c;
  return q + 1;
}
}  // namespace put

// Nanoseconds since the Unix epoch from CLOCK_REALTIME (SendingTime's clock).
std::int64_t utc_now_ns() noexcept;

}  // namespace kite::codec
