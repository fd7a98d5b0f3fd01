// The field index: one walk over a complete frame records, for every field,
// its tag and where its value lies. Nothing is copied: values are views into
// the frame, parsed on demand. The index allocates once, at construction, and
// resets in O(1) between messages (a generation counter on the tag table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>

#include "kite/codec/fix.hpp"
#include "kite/codec/scan.hpp"
#include "kite/codec/values.hpp"

namespace kite::codec {

struct FieldRef {
  std::uint32_t tag;
  std::uint32_t offset;  // of the value's first byte, from the frame's start
  std::uint32_t length;  // of the value, without the SOH
};

enum class IndexError : std::uint8_t {
  none,
  bad_tag,          // a tag that is empty, zero, not digits or too long
  missing_equals,   // a field without '=' before the end of the frame
  missing_soh,      // a value that runs to the end of the frame unterminated
  bad_data_length,  // a data field whose stated length does not fit the frame
  too_many_fields,  // more fields than the index's capacity
};

const char* to_string(IndexError e) noexcept;

struct IndexResult {
  IndexError error = IndexError::none;
  std::uint32_t offset = 0;  // where the problem was found
  std::uint32_t tag = 0;     // the field it concerns, when known
  explicit operator bool() const noexcept { return error == IndexError::none; }
};

// Field access result for typed reads.
enum class Get : std::uint8_t { ok, missing, bad_format };

namespace detail {
// Data fields whose value may contain SOH: the length field that must
// immediately precede each, and the data field it governs.
constexpr std::uint32_t data_tag_for_length(std::uint32_t length_tag) noexcept {
  switch (length_tag) {
    case 90: return 91;    // SecureDataLen -> SecureData
    case 93: return 89;    // SignatureLength -> Signature
    case 95: return 96;    // RawDataLength -> RawData
    case 212: return 213;  // XmlDataLen -> XmlData
    case 348: return 349;  // EncodedIssuerLen
    case 350: return 351;  // EncodedSecurityDescLen
    case 352: return 353;  // EncodedListExecInstLen
    case 354: return 355;  // EncodedTextLen
    case 356: return 357;  // EncodedSubjectLen
    case 358: return 359;  // EncodedHeadlineLen
    case 360: return 361;  // EncodedAllocTextLen
    case 362: return 363;  // EncodedUnderlyingIssuerLen
    case 364: return 365;  // EncodedUnderlyingSecurityDescLen
    case 445: return 446;  // EncodedListStatusTextLen
    case 618: return 619;  // EncodedLegIssuerLen
    case 621: return 622;  // EncodedLegSecurityDescLen
    default: return 0;
  }
}

// Bit t set when tag t is a length field above: a cheap test before the switch.
inline constexpr std::uint32_t kLengthTagLimit = 640;
struct LengthTagBits {
  std::uint64_t words[kLengthTagLimit / 64] = {};
  constexpr LengthTagBits() {
    for (std::uint32_t t = 0; t < kLengthTagLimit; ++t)
      if (data_tag_for_length(t) != 0) words[t / 64] |= std::uint64_t{1} << (t % 64);
  }
};
inline constexpr LengthTagBits kLengthTags{};

constexpr bool length_tags_within(std::uint32_t lo, std::uint32_t hi) noexcept {
  for (std::uint32_t t = 0; t < kLengthTagLimit; ++t)
    if (data_tag_for_length(t) != 0 && (t < lo || t > hi)) return false;
  return true;
}
static_assert(length_tags_within(90, 621));

constexpr bool is_length_tag(std::uint32_t tag) noexcept {
  // Every length tag lies in 90..621: one compare rejects almost every tag.
  return tag - 90u <= 621u - 90u && ((kLengthTags.words[tag / 64] >> (tag % 64)) & 1u) != 0;
}
}  // namespace detail

class FieldIndex {
 public:
  static constexpr std::uint32_t kDirectTags = 2048;  // tags below this are found in O(1)

  explicit FieldIndex(std::uint32_t capacity = 1024);
  FieldIndex(const FieldIndex&) = delete;
  FieldIndex& operator=(const FieldIndex&) = delete;
  FieldIndex(FieldIndex&&) noexcept = default;
  FieldIndex& operator=(FieldIndex&&) noexcept = default;

  // Walks a complete frame (as framed by frame()) and indexes every field,
  // the header's and trailer's included. The frame's bytes must outlive the
  // views handed out. Scan picks the SIMD, SWAR or scalar classification
  // (all give the same index). Frames are limited to 4 GiB.
  template <class Scan = FastScan>
  IndexResult build(const char* frame, std::size_t size) noexcept;
  IndexResult build(std::string_view frame) noexcept { return build<FastScan>(frame.data(), frame.size()); }

  std::string_view frame() const noexcept { return {base_, size_}; }
  std::uint32_t size() const noexcept { return count_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  const FieldRef& operator[](std::uint32_t i) const noexcept { return fields_[i]; }
  const FieldRef* begin() const noexcept { return fields_.get(); }
  const FieldRef* end() const noexcept { return fields_.get() + count_; }

  std::string_view value(const FieldRef& f) const noexcept { return {base_ + f.offset, f.length}; }
  std::string_view value_at(std::uint32_t i) const noexcept { return value(fields_[i]); }

  // Position of the first field with this tag, or -1.
  std::int32_t find_pos(std::uint32_t tag) const noexcept {
    if (tag < kDirectTags) {
      const std::uint32_t slot = slots_[tag];
      return (slot >> 16) == generation_ ? static_cast<std::int32_t>(slot & 0xFFFFu) : -1;
    }
    for (std::uint32_t i = 0; i < count_; ++i)
      if (fields_[i].tag == tag) return static_cast<std::int32_t>(i);
    return -1;
  }
  // Position of the first field with this tag at or after `from`, or -1.
  std::int32_t find_pos_from(std::uint32_t tag, std::uint32_t from) const noexcept {
    for (std::uint32_t i = from; i < count_; ++i)
      if (fields_[i].tag == tag) return static_cast<std::int32_t>(i);
    return -1;
  }
  const FieldRef* find(std::uint32_t tag) const noexcept {
    const std::int32_t i = find_pos(tag);
    return i < 0 ? nullptr : &fields_[i];
  }
  bool has(std::uint32_t tag) const noexcept { return find_pos(tag) >= 0; }

  // Typed reads of the first field with a tag.
  Get get(std::uint32_t tag, std::string_view& out) const noexcept {
    const FieldRef* f = find(tag);
    if (f == nullptr) return Get::missing;
    out = value(*f);
    return Get::ok;
  }
  template <class T, bool (*Parse)(std::string_view, T&) noexcept>
  Get get_as(std::uint32_t tag, T& out) const noexcept {
    const FieldRef* f = find(tag);
    if (f == nullptr) return Get::missing;
    return Parse(value(*f), out) ? Get::ok : Get::bad_format;
  }
  Get get(std::uint32_t tag, std::uint64_t& out) const noexcept { return get_as<std::uint64_t, parse_uint>(tag, out); }
  Get get(std::uint32_t tag, std::int64_t& out) const noexcept { return get_as<std::int64_t, parse_int>(tag, out); }
  Get get(std::uint32_t tag, Decimal& out) const noexcept { return get_as<Decimal, parse_decimal>(tag, out); }
  Get get(std::uint32_t tag, char& out) const noexcept { return get_as<char, parse_char>(tag, out); }
  Get get(std::uint32_t tag, bool& out) const noexcept { return get_as<bool, parse_bool>(tag, out); }
  Get get_timestamp(std::uint32_t tag, std::int64_t& nanos) const noexcept {
    const FieldRef* f = find(tag);
    if (f == nullptr) return Get::missing;
    return parse_utc_timestamp(value(*f), nanos) ? Get::ok : Get::bad_format;
  }

 private:
  void reset() noexcept {
    count_ = 0;
    if (++generation_ == 0x10000u) {  // 16-bit generation wrapped: clear once
      for (std::uint32_t i = 0; i < kDirectTags; ++i) slots_[i] = 0;
      generation_ = 1;
    }
  }
  bool push(std::uint32_t tag, std::uint32_t offset, std::uint32_t length) noexcept {
    if (count_ == capacity_) return false;
    fields_[count_] = {tag, offset, length};
    if (tag < kDirectTags && slots_[tag] < (generation_ << 16)) slots_[tag] = (generation_ << 16) | count_;
    ++count_;
    return true;
  }

  std::unique_ptr<FieldRef[]> fields_;
  std::unique_ptr<std::uint32_t[]> slots_;  // generation << 16 | position
  const char* base_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t generation_ = 0;
};

template <class Scan>
IndexResult FieldIndex::build(const char* frame, std::size_t size) noexcept {
  reset();
  base_ = frame;
  size_ = static_cast<std::uint32_t>(size);
  // Locals, not members: stores into the uint32_t field table could alias
  // members and force reloads on every field.
  FieldRef* const fields = fields_.get();
  std::uint32_t* const slots = slots_.get();
  const std::uint32_t capacity = capacity_;
  // Slots of older generations hold smaller values (the table is cleared
  // when the generation wraps), so "not set in this walk" is one compare.
  const std::uint32_t generation_bits = generation_ << 16;
  std::uint32_t count = 0;
  const auto done = [&](IndexError e, std::size_t at, std::uint32_t tag) noexcept {
    count_ = count;
    return IndexResult{e, static_cast<std::uint32_t>(at), tag};
  };
  const auto record = [&](std::uint32_t tag, std::size_t v, std::size_t soh) noexcept {
    fields[count] = {tag, static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(soh - v)};
    if (tag < kDirectTags && slots[tag] < generation_bits) slots[tag] = generation_bits | count;
    ++count;
  };

  // SOH positions, 64 bytes at a time: `pending` holds the block's SOH bits
  // not consumed yet. Consuming one clears the lowest bit, so the walk's
  // loop-carried work is one instruction per field.
  std::size_t start = 0;
  std::uint64_t pending = 0;
  const auto load = [&](std::size_t at) noexcept {
    start = at & ~std::size_t{63};
    const std::size_t n = size - start;
    std::uint64_t eq_bits;  // unused: the compiler drops its computation
    if (n >= 64) {
      Scan::classify(frame + start, 64, eq_bits, pending);
    } else if (size >= 64) {  // the last, partial block: the frame's last 64 bytes, shifted
      Scan::classify(frame + size - 64, 64, eq_bits, pending);
      pending >>= 64 - n;
    } else {
      Scan::classify(frame + start, n, eq_bits, pending);
    }
  };
  const auto seek = [&](std::size_t pos) noexcept {  // drop SOH bits before pos
    if (pos >= size) {
      pending = 0;
      start = size;
      return;
    }
    if (pos - start >= 64) load(pos);
    pending &= ~std::uint64_t{0} << (pos - start);
  };
  if (size != 0) load(0);

  std::size_t p = 0;
  // The common case: a tag of 1 to 7 digits and '=' in the word at p, an
  // SOH ahead, room in the table, no data field. Anything else leaves this
  // loop with the state untouched for the general walk below, which handles
  // it (errors included).
  constexpr bool kWide = !std::is_same_v<Scan, ScalarScan>;  // ScalarScan: the plain twin
  // One field from w, the 8 bytes at p (zeros past the frame's end); false
  // when it is not the common case, with nothing changed.
  const auto common_field = [&](std::uint64_t w) noexcept {
    // One pass finds the tag's end and checks its digits: the first byte
    // that is not a digit must be the '=' and must not be the first byte.
    const std::uint64_t x = w ^ 0x3030303030303030ull;  // digits become 0..9
    const std::uint64_t other = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;  // lowest bit exact
    if (other == 0) [[unlikely]] return false;
    const auto bit = static_cast<unsigned>(__builtin_ctzll(other));  // 8 * tag_len + 7
    const std::size_t tag_len = bit >> 3;
    if (tag_len == 0 || static_cast<unsigned char>(w >> (bit - 7)) != '=' || static_cast<unsigned char>(w) == '0')
      [[unlikely]] return false;
    const std::uint32_t tag = detail::digits_value(x, tag_len);
    if (detail::is_length_tag(tag)) [[unlikely]] return false;  // a data field may follow
    if (pending == 0) [[unlikely]] {
      if (size - start <= 64) return false;
      load(start + 64);
      if (pending == 0) [[unlikely]] return false;
    }
    const std::size_t soh = start + static_cast<unsigned>(__builtin_ctzll(pending));
    pending &= pending - 1;
    record(tag, p + tag_len + 1, soh);
    p = soh + 1;
    return true;
  };
  if (kWide && size >= 8 && capacity != 0) {
    // A field takes at least 3 bytes, so while p <= 3 * capacity - 3 fewer
    // than `capacity` fields are recorded: the bound replaces a check per field.
    const std::size_t room_stop = 3 * std::size_t{capacity} - 3;
    const std::size_t stop = size - 8 < room_stop ? size - 8 : room_stop;
    while (p <= stop) {
      std::uint64_t w;
      std::memcpy(&w, frame + p, sizeof w);
      if (!common_field(w)) [[unlikely]] break;  // then p <= stop: no tail below
    }
    // The last field (usually CheckSum) within the last 8 bytes: the frame's
    // last word, shifted so that p's byte comes first.
    if (p > size - 8 && p < size && p <= room_stop) {
      std::uint64_t w;
      std::memcpy(&w, frame + size - 8, sizeof w);
      common_field(w >> (8 * (8 - (size - p))));
    }
  }

  std::uint32_t pending_data_tag = 0;  // set right after a length field
  std::uint64_t pending_data_len = 0;
  while (p < size) {
    // The tag: the first '=' within 8 bytes, digits before it.
    std::size_t tag_len;
    std::uint32_t tag;
    std::uint64_t eq8 = 0;
    std::uint64_t w = 0;
    if (kWide && size - p >= 8) [[likely]] {
      std::memcpy(&w, frame + p, sizeof w);
      eq8 = SwarScan::exact_match(w, '=');
    }
    if (eq8 != 0) [[likely]] {
      tag_len = static_cast<std::size_t>(__builtin_ctzll(eq8)) >> 3;
      if (tag_len == 0 || frame[p] == '0' || !detail::parse_digits8(w, tag_len, tag)) return done(IndexError::bad_tag, p, 0);
    } else {  // a long tag, the frame's last bytes, or no '=' at all
      const char* eq = Scan::find(frame + p, frame + size, '=');
      if (eq == frame + size) return done(IndexError::missing_equals, p, 0);
      tag_len = static_cast<std::size_t>(eq - (frame + p));
      if (tag_len - 1 >= 9 || frame[p] == '0') return done(IndexError::bad_tag, p, 0);
      tag = 0;
      for (std::size_t d = p; d < p + tag_len; ++d) {
        const unsigned v = static_cast<unsigned char>(frame[d]) - static_cast<unsigned>('0');
        if (v > 9) return done(IndexError::bad_tag, p, 0);
        tag = tag * 10 + v;
      }
    }
    const std::size_t v = p + tag_len + 1;
    std::size_t soh;
    if (pending_data_tag != 0 && tag == pending_data_tag) [[unlikely]] {
      if (pending_data_len >= size - v || frame[v + pending_data_len] != kSoh) {
        return done(IndexError::bad_data_length, p, tag);
      }
      soh = v + pending_data_len;
      seek(soh + 1);
    } else {
      // The next SOH: the tag held none (its bytes are digits), so it is
      // the value's terminator.
      while (pending == 0) {
        if (size - start <= 64) return done(IndexError::missing_soh, p, tag);
        load(start + 64);
      }
      soh = start + static_cast<std::size_t>(__builtin_ctzll(pending));
      pending &= pending - 1;
    }
    if (count == capacity) return done(IndexError::too_many_fields, p, tag);
    record(tag, v, soh);
    pending_data_tag = 0;
    if (detail::is_length_tag(tag)) [[unlikely]] {
      if (parse_uint({frame + v, soh - v}, pending_data_len)) pending_data_tag = detail::data_tag_for_length(tag);
    }
    p = soh + 1;
  }
  return done(IndexError::none, 0, 0);
}

}  // namespace kite::codec
