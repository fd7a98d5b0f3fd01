// The mask walk of the index for the levels without VBMI (scalar on x86-64:
// SSE2; avx2; avx512bw): the frame's structure from three 64-bit masks per
// 64-byte block, then a short loop per field over the masks' bits. Included
// only by the level translation units; Masks gives the level's instructions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kite/codec/field_index.hpp"
#include "kite/codec/scan.hpp"
#include "tag_ends.hpp"

namespace kite::codec::detail {

// The checksum's accumulator of a level that takes it in the walk (Masks::Sum), else a stand-in.
template <class Masks>
auto mask_walk_sum() noexcept {
  if constexpr (requires { typename Masks::Sum; }) {
    return typename Masks::Sum{};
  } else {
    return 0;
  }
}

// Per block, bits for '=' (eq), SOH (soh) and digits (digit), as in the
// VBMI walk (avx512_walk.hpp): a tag starts at begin and after every SOH
// (starts); adding starts to digit carries through each run of digits that
// begins at a start and lands on the byte after it, so
// ends = (digit + starts) & ~digit marks every tag's end. The block suits the
// walk when every start is a digit and every end an '='; then the fields
// come in order end, SOH, end, SOH..., and each field is one bit popped from
// each mask (an end may lie in an earlier block than its SOH: it is carried).
// A tag's value comes from the 8 bytes at its start and its length from the
// masks (its digits are known to be digits).
//
// Masks::block(p, eq, soh, digit) classifies the 64 bytes at p. For the
// checksum, where Masks has a Sum (bytes added in wrapping 8-bit lanes):
// sum_add(acc, p) adds the 64 bytes at p, sum_masked(acc, p, mask) those of
// them where the 64 bytes at mask are 0xFF, and sum_fold(acc) gives their total.
//
// It indexes the fields of [begin, end) after the first `first` fields,
// returns how many it indexed and sets p to where the general walk must go
// on: the start of the first field it did not take (one in a block that does
// not suit it, a tag with a leading zero or of 9 or more digits, a field
// after a length field, which a data field may follow, or no room), else
// end. It writes the slots of the fields it indexed (first field wins).
// With sum not null, when it walks to end, it sets *sum to the sum of the
// bytes of [0, end) (begin <= 64 and Masks::Sum only; else it leaves it).
template <class Masks>
[[gnu::always_inline]] inline std::uint32_t mask_walk(const BulkArrays& a, const char* frame, std::size_t begin,
                                                      std::size_t end, std::uint32_t first, std::size_t& p,
                                                      std::uint64_t* sum) noexcept {
  constexpr std::uint32_t kDirectTags = FieldIndex::kDirectTags;
  // Few live values, so that the field loop keeps them all in registers:
  // the next field's entry and its slot value stand for the count.
  FieldRef* out = a.fields;
  std::uint32_t room = a.capacity;  // fields the table has room for, less the blocks' so far
  std::uint32_t* const slots = a.slots;
  const std::uint32_t generation_bits = a.generation_bits;
  std::uint32_t position = generation_bits | first;  // the next field's slot value
  p = begin;
  if (end < 64 || frame[end - 1] != kSoh) return 0;  // (a shorter frame: the general walk)

  // A tag starts at least 3 bytes before end: with 5 readable bytes past
  // end (a framed body, its trailer after it), every tag's 8 bytes can be
  // read whole, and the walk needs no tail read.
  const bool tails_fit = a.readable >= end + 5;
  std::size_t next = begin;  // the start of the first field not taken
  // One field: its tag ends at e, its value at s. False (nothing written)
  // when the general walk must take it. kTail: the 8 bytes at the tag's
  // start may run past end.
  const auto take = [&](std::size_t e, std::size_t s, auto tail) __attribute__((always_inline)) {
    const std::size_t start = next, tag_len = e - start;
    std::uint64_t w;
    if (!decltype(tail)::value || start + 8 <= end) [[likely]] {
      std::memcpy(&w, frame + start, sizeof w);
    } else {  // the frame's last word, moved so that start's byte comes first
      std::memcpy(&w, frame + end - 8, sizeof w);
      w >>= 8 * (start + 8 - end);
    }
    std::uint32_t tag;
    if (tag_len <= 4 && static_cast<unsigned char>(w) != '0') [[likely]] {
      // The digits less '0' (a byte past them may borrow from the next: those are shifted out).
      std::uint32_t y = (static_cast<std::uint32_t>(w) - 0x30303030u) << (32 - 8 * tag_len);
      y = (y * 10 + (y >> 8)) & 0x00FF00FFu;
      tag = (y * ((100u << 16) + 1)) >> 16;
    } else {
      if (tag_len > 8 || static_cast<unsigned char>(w) == '0') return false;  // long, or a leading zero
      tag = digits_value(w ^ 0x3030303030303030ull, tag_len);
    }
    // Below the first length tag (most tags): no data field follows, and a slot.
    bool direct = true;
    if (tag >= kFirstLengthTag) [[unlikely]] {
      if (is_length_tag(tag)) return false;  // a data field may follow
      direct = tag < kDirectTags;
    }
    *out = {tag, static_cast<std::uint32_t>(e + 1), static_cast<std::uint32_t>(s - e - 1)};
    if (direct && slots[tag] < generation_bits) slots[tag] = position;
    ++out;
    ++position;
    next = s + 1;
    return true;
  };
  // The block's fields, one per SOH bit; false when the walk stops.
  const auto fields_of = [&](std::size_t base, std::uint64_t & ends, std::uint64_t sohs, auto tail)
      __attribute__((always_inline)) {
    while (sohs != 0) {
      const std::size_t s = base + static_cast<unsigned>(__builtin_ctzll(sohs));
      const std::size_t e = base + static_cast<unsigned>(__builtin_ctzll(ends));
      sohs &= sohs - 1;
      ends &= ends - 1;
      if (!take(e, s, tail)) [[unlikely]]
        return false;
    }
    return true;
  };

  // Byte masks: 0xFF from kByteMask[64] to kByteMask[127], 0 around.
  struct ByteMask {
    alignas(64) unsigned char bytes[192];
  };
  static constexpr ByteMask kMask = [] {
    ByteMask m{};
    for (unsigned i = 64; i < 128; ++i) m.bytes[i] = 0xFF;
    return m;
  }();
  const unsigned char* const kByteMask = kMask.bytes;
  // The checksum's bytes, when wanted: [0, begin) first (the frame has 64 bytes).
  constexpr bool kSums = requires { typename Masks::Sum; };
  const bool summing = kSums && sum != nullptr && begin <= 64;
  auto bytes_sum = mask_walk_sum<Masks>();
  if constexpr (kSums) {
    if (summing) Masks::sum_masked(bytes_sum, frame, kByteMask + 128 - begin);
  }

  std::uint64_t soh_carry = 1, run_carry = 0;  // a tag starts at begin
  std::size_t carried_end = 0;                 // an end whose SOH lies in a later block
  bool carried = false;
  std::size_t base = begin;
  for (; base < end; base += 64) {
    const std::size_t n = end - base;
    std::uint64_t eq, soh, digit, valid = ~std::uint64_t{0};
    if (n >= 64) [[likely]] {
      Masks::block(frame + base, eq, soh, digit);
      if constexpr (kSums) {
        if (summing) Masks::sum_add(bytes_sum, frame + base);
      }
    } else {
      // The frame's last 64 bytes, the masks moved down to base.
      Masks::block(frame + end - 64, eq, soh, digit);
      if constexpr (kSums) {
        if (summing) Masks::sum_masked(bytes_sum, frame + end - 64, kByteMask + n);
      }
      eq >>= 64 - n;
      soh >>= 64 - n;
      digit >>= 64 - n;
      valid = (std::uint64_t{1} << n) - 1;
    }
    std::uint64_t sum_bits;
    const std::uint64_t starts = block_tag_starts(soh, digit, valid, soh_carry, run_carry, sum_bits);
    std::uint64_t ends = sum_bits & ~digit & valid;
    std::uint64_t sohs = soh & valid;
    // A field takes at least 3 bytes, so the room is checked per block.
    const auto n_sohs = static_cast<std::uint32_t>(__builtin_popcountll(sohs));
    if (((starts & ~digit) | (ends & ~eq)) != 0 || n_sohs > room) [[unlikely]]
      break;
    room -= n_sohs;
    if (carried && sohs != 0) {
      const std::size_t s = base + static_cast<unsigned>(__builtin_ctzll(sohs));
      sohs &= sohs - 1;
      carried = false;
      if (!take(carried_end, s, std::true_type{})) [[unlikely]]
        break;
    }
    // Tags that start in a block ending 8 bytes or more before end can be read whole.
    if (tails_fit || base + 72 <= end ? !fields_of(base, ends, sohs, std::false_type{})
                                      : !fields_of(base, ends, sohs, std::true_type{})) [[unlikely]] {
      break;
    }
    if (ends != 0) {
      carried_end = base + static_cast<unsigned>(__builtin_ctzll(ends));
      carried = true;
    }
  }
  if constexpr (kSums) {
    if (summing && base >= end) *sum = Masks::sum_fold(bytes_sum);
  }
  p = next;
  return static_cast<std::uint32_t>(out - a.fields);
}

}  // namespace kite::codec::detail
