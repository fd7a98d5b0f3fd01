// The index's walks, as templates of the scan: the general word-at-a-time
// walk, and the call into a level's vector walk where its scan has one
// (Scan::bulk_walk, src/codec). Included by field_index.hpp; not a contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kite/codec/field_index.hpp"

namespace kite::codec {

template <class Scan>
IndexResult FieldIndex::build(const char* frame, std::size_t size) noexcept {
  reset();
  base_ = frame;
  size_ = static_cast<std::uint32_t>(size);
  // A frame that ends in its trailer ("<SOH>10=ddd<SOH>", as frame() finds
  // it): a data field must end before it, as the framed build's body walk
  // requires, rather than take the CheckSum field into its value.
  std::uint32_t stated;
  const bool trailer = size >= 8 && detail::checksum_field(frame + size - 7, stated);
  return walk<Scan>(frame, 0, size, 0, nullptr, trailer ? size - 7 : size);
}

template <class Scan>
IndexResult FieldIndex::build(const char* frame, const FrameResult& framed) noexcept {
  const std::uint32_t size = framed.size, body_begin = framed.body_begin, body_end = framed.body_end;
  if (framed.status != FrameStatus::complete || body_begin < 7) [[unlikely]] {
    return build<Scan>(frame, framed.status == FrameStatus::complete ? size : 0);
  }
  std::uint32_t begin_string_end = frame[9] == kSoh ? 9 : 2;  // 9: "8=FIX.x.y"
  while (begin_string_end < body_begin && frame[begin_string_end] != kSoh) ++begin_string_end;
  if (body_end < body_begin || size != body_end + 7 || begin_string_end + 4 > body_begin) [[unlikely]] {
    return build<Scan>(frame, size);  // not frame()'s answer
  }
  return build_body<Scan>(frame, size, body_begin, body_end, begin_string_end, nullptr);
}

template <class Scan>
FramedIndex FieldIndex::frame_and_build(const char* bytes, std::size_t n, std::uint32_t max_size) noexcept {
  FramedIndex out;  // written in place (the scalars below, not the layout, live across the walk)
  const detail::Layout l = detail::frame_layout<Scan>(bytes, n, max_size);
  out.frame = l.result;
  if (out.frame.status != FrameStatus::complete) [[unlikely]] {
    clear(bytes);
    return out;
  }
  const std::uint32_t size = l.result.size, body_end = l.result.body_end, stated = l.stated;
  constexpr std::uint64_t kNoSum = ~std::uint64_t{0};
  std::uint64_t sum = kNoSum;
  out.index = build_body<Scan>(bytes, size, l.result.body_begin, body_end, l.begin_string_end, &sum);
  if (sum == kNoSum) sum = Scan::checksum(bytes, bytes + body_end);
  if ((sum & 0xFFu) != stated) [[unlikely]] {
    clear(bytes);
    out.frame = detail::invalid(FrameError::checksum_mismatch, size);
    out.index = {};
  }
  return out;
}

template <class Scan>
[[gnu::always_inline]] inline IndexResult FieldIndex::build_body(const char* frame, std::uint32_t size,
                                                                 std::uint32_t body_begin, std::uint32_t body_end,
                                                                 std::uint32_t begin_string_end,
                                                                 std::uint64_t* sum) noexcept {
  if (capacity_ < 3) [[unlikely]]
    return build<Scan>(frame, size);
  reset();
  base_ = frame;
  size_ = size;
  // frame() checked "8=" BeginString SOH "9=" digits SOH and "10=" ddd SOH:
  // those three fields are recorded as they are, the body is walked.
  FieldRef* const fields = fields_;
  fields[0] = {tag::BeginString, 2, begin_string_end - 2};
  fields[1] = {tag::BodyLength, begin_string_end + 3, body_begin - 1 - (begin_string_end + 3)};
  const IndexResult r = walk<Scan>(frame, body_begin, body_end, 2, sum);
  // A body that does not index, or no room for CheckSum: the whole frame's
  // walk says what and where, as build(frame, size) would (errors are rare).
  if (!r || count_ == capacity_) [[unlikely]]
    return build<Scan>(frame, size);
  std::uint32_t* const slots = slots_;
  const std::uint32_t generation_bits = generation_ << 16;
  // The first two fields come first, whatever the body repeats.
  slots[tag::BeginString] = generation_bits | 0;
  slots[tag::BodyLength] = generation_bits | 1;
  fields[count_] = {tag::CheckSum, body_end + 3, 3};
  if (slots[tag::CheckSum] < generation_bits) slots[tag::CheckSum] = generation_bits | count_;
  ++count_;
  return {};  // r, which is all zeros here (a constant saves copying it about)
}

template <class Scan>
[[gnu::always_inline]] inline IndexResult FieldIndex::walk(const char* frame, std::size_t begin, std::size_t end,
                                                           std::uint32_t first, [[maybe_unused]] std::uint64_t* sum,
                                                           std::size_t data_end) noexcept {
  if constexpr (requires { &Scan::bulk_walk; }) {  // a level with a block walk (x86-64)
    if (end - begin >= 4 && end < (std::size_t{1} << 30) && capacity_ > first) [[likely]] {
      std::size_t p = begin;
      const std::uint32_t count = first + Scan::bulk_walk(bulk_arrays(first), frame, begin, end, first, p, sum);
      if (p >= end) [[likely]] {  // it took every field
        count_ = count;
        return {};
      }
      return walk_rest<Scan>(frame, p, end, count, data_end);
    }
    return walk_rest<Scan>(frame, begin, end, first, data_end);
  } else {
    return walk_general<Scan>(frame, begin, end, first, data_end);
  }
}

// What a block walk leaves (a data field, a long tag, an error, a short
// frame) is rare: out of line, the general walk keeps its code out of the
// lines an order runs through.
template <class Scan>
[[gnu::noinline, gnu::cold]] IndexResult FieldIndex::walk_rest(const char* frame, std::size_t begin, std::size_t end,
                                                               std::uint32_t first, std::size_t data_end) noexcept {
  return walk_general<Scan>(frame, begin, end, first, data_end);
}

template <class Scan>
[[gnu::always_inline]] inline IndexResult FieldIndex::walk_general(const char* frame, std::size_t begin,
                                                                   std::size_t end, std::uint32_t first,
                                                                   std::size_t data_end) noexcept {
  if (data_end > end) data_end = end;
  // Locals, not members: stores into the uint32_t field table could alias
  // members and force reloads on every field.
  FieldRef* const fields = fields_;
  std::uint32_t* const slots = slots_;
  const std::uint32_t capacity = capacity_;
  // Slots of older generations hold smaller values (the table is cleared
  // when the generation wraps), so "not set in this walk" is one compare.
  const std::uint32_t generation_bits = generation_ << 16;
  std::uint32_t count = first;
  const auto done = [&](IndexError e, std::size_t at, std::uint32_t tag) __attribute__((always_inline)) {
    count_ = count;
    return IndexResult{e, static_cast<std::uint32_t>(at), tag};
  };
  // The walk's steps are always inlined: out of line, a lambda costs a call
  // per field, and seek's closure would keep the walk's variables on the
  // stack.
  const auto record = [&](std::uint32_t tag, std::size_t v, std::size_t soh) __attribute__((always_inline)) {
    fields[count] = {tag, static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(soh - v)};
    if (tag < kDirectTags && slots[tag] < generation_bits) slots[tag] = generation_bits | count;
    ++count;
  };

  // SOH positions, 64 bytes at a time: `pending` holds the block's SOH bits
  // not consumed yet. Consuming one clears the lowest bit, so the walk's
  // loop-carried work is one instruction per field.
  std::size_t start = 0;
  std::uint64_t pending = 0;
  const auto load = [&](std::size_t at) __attribute__((always_inline)) {
    start = at & ~std::size_t{63};
    const std::size_t n = end - start;
    std::uint64_t eq_bits;  // unused: the compiler drops its computation
    if (n >= 64) {
      Scan::classify(frame + start, 64, eq_bits, pending);
    } else if (end >= 64) {  // the last, partial block: the frame's last 64 bytes, shifted
      Scan::classify(frame + end - 64, 64, eq_bits, pending);
      pending >>= 64 - n;
    } else {
      Scan::classify(frame + start, n, eq_bits, pending);
    }
  };
  const auto seek = [&](std::size_t pos) __attribute__((always_inline)) {  // drop SOH bits before pos
    if (pos >= end) {
      pending = 0;
      start = end;
      return;
    }
    if (pos - start >= 64) load(pos);
    pending &= ~std::uint64_t{0} << (pos - start);
  };
  std::size_t p = begin;
  if (end > begin) {
    load(begin);
    pending &= ~std::uint64_t{0} << (begin - start);
  }

  // The common case: a tag of 1 to 7 digits and '=' in the word at p, an
  // SOH ahead, room in the table, no data field. Anything else leaves this
  // loop with the state untouched for the general walk below, which handles
  // it (errors included).
  constexpr bool kWide = !std::is_same_v<Scan, ScalarScan>;  // ScalarScan: the plain twin
  // One field from w, the 8 bytes at p (zeros past the frame's end); false
  // when it is not the common case, with nothing changed.
  const auto common_field = [&](std::uint64_t w) __attribute__((always_inline)) {
    // One pass finds the tag's end and checks its digits: the first byte
    // that is not a digit must be the '=' and must not be the first byte.
    const std::uint64_t x = w ^ 0x3030303030303030ull;                                      // digits become 0..9
    const std::uint64_t other = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;  // lowest bit exact
    if (other == 0) [[unlikely]]
      return false;
    const auto bit = static_cast<unsigned>(__builtin_ctzll(other));  // 8 * tag_len + 7
    const std::size_t tag_len = bit >> 3;
    if (tag_len == 0 || static_cast<unsigned char>(w >> (bit - 7)) != '=' || static_cast<unsigned char>(w) == '0')
        [[unlikely]]
      return false;
    const std::uint32_t tag = detail::digits_value(x, tag_len);
    if (detail::is_length_tag(tag)) [[unlikely]]
      return false;  // a data field may follow
    if (pending == 0) [[unlikely]] {
      if (end - start <= 64) return false;
      load(start + 64);
      if (pending == 0) [[unlikely]]
        return false;
    }
    const std::size_t soh = start + static_cast<unsigned>(__builtin_ctzll(pending));
    pending &= pending - 1;
    record(tag, p + tag_len + 1, soh);
    p = soh + 1;
    return true;
  };
  // (After a block walk that stopped: from where it stopped.)
  if (kWide && end >= 8 && capacity > count && p < end) {
    // A field takes at least 3 bytes, so while p - from <= 3 * room - 3
    // fewer than `room` fields are recorded: the bound replaces a check per field.
    const std::size_t room_stop = p + 3 * std::size_t{capacity - count} - 3;
    const std::size_t stop = end - 8 < room_stop ? end - 8 : room_stop;
    while (p <= stop) {
      std::uint64_t w;
      std::memcpy(&w, frame + p, sizeof w);
      if (!common_field(w)) [[unlikely]]
        break;  // then p <= stop: no tail below
    }
    // The last field (usually CheckSum) within the last 8 bytes: the frame's
    // last word, shifted so that p's byte comes first.
    if (p > end - 8 && p < end && p <= room_stop) {
      std::uint64_t w;
      std::memcpy(&w, frame + end - 8, sizeof w);
      common_field(w >> (8 * (8 - (end - p))));
    }
  }

  std::uint32_t pending_data_tag = 0;  // set right after a length field
  std::uint64_t pending_data_len = 0;
  while (p < end) {
    // The tag: the first '=' within 8 bytes, digits before it.
    std::size_t tag_len;
    std::uint32_t tag;
    std::uint64_t eq8 = 0;
    std::uint64_t w = 0;
    if (kWide && end - p >= 8) [[likely]] {
      std::memcpy(&w, frame + p, sizeof w);
      eq8 = SwarScan::exact_match(w, '=');
    }
    if (eq8 != 0) [[likely]] {
      tag_len = static_cast<std::size_t>(__builtin_ctzll(eq8)) >> 3;
      if (tag_len == 0 || frame[p] == '0' || !detail::parse_digits8(w, tag_len, tag))
        return done(IndexError::bad_tag, p, 0);
    } else {  // a long tag, the frame's last bytes, or no '=' at all
      const char* eq = Scan::find(frame + p, frame + end, '=');
      if (eq == frame + end) return done(IndexError::missing_equals, p, 0);
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
      if (v >= data_end || pending_data_len >= data_end - v || frame[v + pending_data_len] != kSoh) {
        return done(IndexError::bad_data_length, p, tag);
      }
      soh = v + pending_data_len;
      seek(soh + 1);
    } else {
      // The next SOH: the tag held none (its bytes are digits), so it is
      // the value's terminator.
      while (pending == 0) {
        if (end - start <= 64) return done(IndexError::missing_soh, p, tag);
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
