// The field index: one walk over a complete frame records, for every field,
// its tag and where its value lies. Nothing is copied: values are views into
// the frame, parsed on demand. The index allocates once, at construction, and
// resets in O(1) between messages (a generation counter on the tag table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kite/codec/data_pairs.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/framer.hpp"
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

// frame_and_build's answer: the frame's, and the index's when the frame is complete.
struct FramedIndex {
  FrameResult frame;  // as frame() answers
  IndexResult index;  // as build() answers; empty unless frame is complete
};

// Field access result for typed reads.
enum class Get : std::uint8_t { ok, missing, bad_format };

namespace detail {
// Data fields whose value may contain SOH: the length field that must
// immediately precede each, and the data field it governs (0: not a length
// field). Rare on the walk's path: is_length_tag answers first. (Always
// inlined: the levels' walks, built for other instructions, call it.)
[[gnu::always_inline]] constexpr std::uint32_t data_tag_for_length(std::uint32_t length_tag) noexcept {
  std::uint32_t lo = 0, hi = std::size(kLengthDataPairs);
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (kLengthDataPairs[mid].length_tag < length_tag) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < std::size(kLengthDataPairs) && kLengthDataPairs[lo].length_tag == length_tag
             ? kLengthDataPairs[lo].data_tag
             : 0;
}

// Bit t set when tag t is a length field: a cheap test before the search.
inline constexpr std::uint32_t kFirstLengthTag = kLengthDataPairs[0].length_tag;
inline constexpr std::uint32_t kLastLengthTag = kLengthDataPairs[std::size(kLengthDataPairs) - 1].length_tag;
struct LengthTagBits {
  std::uint64_t words[kLastLengthTag / 64 + 1] = {};
  constexpr LengthTagBits() {
    for (const LengthDataPair& p : kLengthDataPairs)
      words[p.length_tag / 64] |= std::uint64_t{1} << (p.length_tag % 64);
  }
};
inline constexpr LengthTagBits kLengthTags{};

[[gnu::always_inline]] constexpr bool is_length_tag(std::uint32_t tag) noexcept {
  // Below the first length tag (most header and order tags): one compare.
  return tag - kFirstLengthTag <= kLastLengthTag - kFirstLengthTag &&
         ((kLengthTags.words[tag / 64] >> (tag % 64)) & 1u) != 0;
}

// A level's bulk walk writes the fields, slots and its position arrays of an
// index (FieldIndex::bulk_arrays).
struct BulkArrays {
  FieldRef* fields;  // the first field it may write
  std::uint32_t* slots;
  std::uint32_t* ends;
  std::uint32_t* sohs;
  std::uint32_t* tags;
  std::uint32_t capacity;         // fields it may write
  std::uint32_t generation_bits;  // the index's generation << 16
  std::uint32_t readable;         // bytes of the frame it may read (its size)
};
}  // namespace detail

class FieldIndex {
 public:
  static constexpr std::uint32_t kDirectTags = 2048;  // tags below this are found in O(1)

  explicit FieldIndex(std::uint32_t capacity = 1024);
  FieldIndex(const FieldIndex&) = delete;
  FieldIndex& operator=(const FieldIndex&) = delete;
  // A moved-from index has no arrays: it may only be assigned to or destroyed.
  FieldIndex(FieldIndex&& o) noexcept { *this = std::move(o); }
  FieldIndex& operator=(FieldIndex&& o) noexcept;

  // Walks a complete frame (as framed by frame()) and indexes every field,
  // the header's and trailer's included. The frame's bytes must outlive the
  // views handed out. Scan picks the walk: FastScan (the default) that of
  // the level in use (level.hpp), ScalarScan, SwarScan or Sse2Scan a
  // portable one; all give the same index. Frames are limited to 4 GiB.
  template <class Scan = FastScan>
  IndexResult build(const char* frame, std::size_t size) noexcept;
  IndexResult build(std::string_view frame) noexcept;
  // The same index for a frame that frame() found complete (`framed` is its
  // answer): the BeginString, BodyLength and CheckSum fields it checked are
  // recorded from their known places and only the body is walked.
  template <class Scan = FastScan>
  IndexResult build(const char* frame, const FrameResult& framed) noexcept;
  // frame() and build() in one: frames the message at the start of the
  // buffer and, when it is complete, indexes it, taking the checksum on the
  // way (the AVX-512 walks sum the blocks they load; other walks check it
  // as frame() does). Answers exactly what frame() and then build() would;
  // when the frame is not complete the index is left empty.
  template <class Scan = FastScan>
  FramedIndex frame_and_build(const char* bytes, std::size_t n,
                              std::uint32_t max_size = kDefaultMaxMessageSize) noexcept;

  std::string_view frame() const noexcept { return {base_, size_}; }
  std::uint32_t size() const noexcept { return count_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  const FieldRef& operator[](std::uint32_t i) const noexcept { return fields_[i]; }
  const FieldRef* begin() const noexcept { return fields_; }
  const FieldRef* end() const noexcept { return fields_ + count_; }

  std::string_view value(const FieldRef& f) const noexcept { return {base_ + f.offset, f.length}; }
  std::string_view value_at(std::uint32_t i) const noexcept { return value(fields_[i]); }

  // Position of the first field with this tag, or -1.
  std::int32_t find_pos(std::uint32_t tag) const noexcept {
    if (tag < kDirectTags) {
      // Slots of older generations hold smaller values (the table is cleared
      // when the generation wraps): one compare, no shift.
      const std::uint32_t slot = slots_[tag];
      return slot >= generation_ << 16 ? static_cast<std::int32_t>(slot & 0xFFFFu) : -1;
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
  // False when no field has any of these tags (each below kDirectTags); true
  // when one may (find_pos tells). The slots are ORed and compared once, no
  // branch per tag: an OR of older generations' slots can answer true.
  template <std::uint32_t... Tags>
  bool may_have_any() const noexcept {
    static_assert(sizeof...(Tags) != 0 && ((Tags < kDirectTags) && ...));
    return (slots_[Tags] | ...) >= generation_ << 16;
  }

  // The first field with this tag, or false. (A position turned into the
  // pointer only when found: the reads need no null test after the lookup.)
  bool locate(std::uint32_t tag, const FieldRef*& f) const noexcept {
    const std::int32_t i = find_pos(tag);
    if (i < 0) return false;
    f = &fields_[static_cast<std::uint32_t>(i)];
    return true;
  }

  // Typed reads of the first field with a tag.
  Get get(std::uint32_t tag, std::string_view& out) const noexcept {
    const FieldRef* f;
    if (!locate(tag, f)) return Get::missing;
    out = value(*f);
    return Get::ok;
  }
  template <class T, bool (*Parse)(std::string_view, T&) noexcept>
  Get get_as(std::uint32_t tag, T& out) const noexcept {
    const FieldRef* f;
    if (!locate(tag, f)) return Get::missing;
    return Parse(value(*f), out) ? Get::ok : Get::bad_format;
  }
  // Numbers of up to 8 bytes are read a word at a time when the 8 bytes at
  // the value lie inside the frame (always, for a framed message's body);
  // anything the word parse does not take goes to the byte loop. Always
  // inlined (as are the three reads below), so that no read becomes a call
  // returning its result through the stack.
  template <class T, bool (*Word)(const char*, std::size_t, T&) noexcept, bool (*Parse)(std::string_view, T&) noexcept>
  [[gnu::always_inline]] Get get_number(std::uint32_t tag, T& out) const noexcept {
    const FieldRef* f;
    if (!locate(tag, f)) return Get::missing;
    if (f->offset + std::uint64_t{8} <= size_ && Word(base_ + f->offset, f->length, out)) [[likely]]
      return Get::ok;
    return parse_apart<T, Parse>(value(*f), out);
  }
  [[gnu::always_inline]] Get get(std::uint32_t tag, std::uint64_t& out) const noexcept {
    return get_number<std::uint64_t, detail::parse_uint_word, parse_uint>(tag, out);
  }
  [[gnu::always_inline]] Get get(std::uint32_t tag, std::int64_t& out) const noexcept {
    return get_number<std::int64_t, detail::parse_int_word, parse_int>(tag, out);
  }
  [[gnu::always_inline]] Get get(std::uint32_t tag, Decimal& out) const noexcept {
    return get_number<Decimal, detail::parse_decimal_word, parse_decimal>(tag, out);
  }
  Get get(std::uint32_t tag, char& out) const noexcept { return get_as<char, parse_char>(tag, out); }
  Get get(std::uint32_t tag, bool& out) const noexcept { return get_as<bool, parse_bool>(tag, out); }
  Get get_timestamp(std::uint32_t tag, std::int64_t& nanos) const noexcept {
    const FieldRef* f;
    if (!locate(tag, f)) return Get::missing;
    std::size_t digits;
    if (detail::parse_utc_timestamp_word(base_ + f->offset, f->length, nanos, digits, size_ - f->offset)) [[likely]]
      return Get::ok;
    std::int64_t parsed = 0;  // as in parse_apart (below)
    if (!parse_utc_timestamp(value(*f), parsed)) return Get::bad_format;
    nanos = parsed;
    return Get::ok;
  }

 private:
  // The general parse (out of line) of a value the word parse did not take,
  // into a local that is copied to out when it parses: out's address stays
  // in the inlined read, so a caller's variable can live in a register
  // rather than on the stack. out is left alone on bad_format.
  template <class T, bool (*Parse)(std::string_view, T&) noexcept>
  static Get parse_apart(std::string_view v, T& out) noexcept {
    T parsed{};
    if (!Parse(v, parsed)) return Get::bad_format;
    out = parsed;
    return Get::ok;
  }

  // The index of nothing, over base (a frame that did not index).
  [[gnu::always_inline]] void clear(const char* base) noexcept {
    reset();
    base_ = base;
    size_ = 0;
  }
  [[gnu::always_inline]] void reset() noexcept {
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

  // build(frame, framed) for a layout already checked (as frame() checks it;
  // begin_string_end: where BeginString's SOH is). When sum is not null and
  // the walk can take it, *sum is set to the sum of the bytes before
  // CheckSum (else it is left alone).
  template <class Scan>
  IndexResult build_body(const char* frame, std::uint32_t size, std::uint32_t body_begin, std::uint32_t body_end,
                         std::uint32_t begin_string_end, std::uint64_t* sum) noexcept;
  // Indexes the fields of [begin, end) after the first `first` fields; sum
  // as for build_body, for the bytes of [0, end). A data field's value and
  // its SOH must end before data_end (at most end; SIZE_MAX: end).
  template <class Scan>
  IndexResult walk(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first,
                   std::uint64_t* sum = nullptr, std::size_t data_end = ~std::size_t{0}) noexcept;
  // The word-at-a-time walk that walk() runs where a level has no block walk,
  // and walk_rest() (out of line) for what a block walk leaves.
  template <class Scan>
  IndexResult walk_general(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first,
                           std::size_t data_end) noexcept;
  template <class Scan>
  IndexResult walk_rest(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first,
                        std::size_t data_end) noexcept;
  // What a level's bulk walk (detail/index_walk.hpp) writes into: the
  // fields from the first it may write, the slots, and its own arrays of
  // '=' and SOH positions and tags (capacity_ + 64 each).
  [[gnu::always_inline]] detail::BulkArrays bulk_arrays(std::uint32_t first) const noexcept {
    return {fields_ + first, slots_, ends_, sohs_, tags_, capacity_ - first, generation_ << 16, size_};
  }
  // The five arrays live in one block, aligned to a page, each starting at a
  // fixed place in its page (see the constructor), so that the decode's time
  // does not depend on where the heap puts them (a 64-byte store across a
  // page's end, or two arrays at the same offset in their pages, slows it).
  struct PageFree {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{kPage}); }
  };
  static constexpr std::size_t kPage = 4096;
  std::unique_ptr<std::byte[], PageFree> arena_;
  std::uint32_t* slots_ = nullptr;  // kDirectTags: generation << 16 | position
  FieldRef* fields_ = nullptr;      // capacity_ + 16: the bulk walk stores whole vectors
  std::uint32_t* ends_ = nullptr;   // capacity_ + 64 each: the bulk walk's positions and tags
  std::uint32_t* sohs_ = nullptr;
  std::uint32_t* tags_ = nullptr;
  const char* base_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t generation_ = 1;  // slots start at 0: an older generation
};

// The default scan: one call into the walk of the level in use (level.hpp).
template <>
inline IndexResult FieldIndex::build<FastScan>(const char* frame, std::size_t size) noexcept {
  return detail::g_active_ops->build(*this, frame, size);
}
template <>
inline IndexResult FieldIndex::build<FastScan>(const char* frame, const FrameResult& framed) noexcept {
  return detail::g_active_ops->build_framed(*this, frame, framed);
}
template <>
inline FramedIndex FieldIndex::frame_and_build<FastScan>(const char* bytes, std::size_t n,
                                                         std::uint32_t max_size) noexcept {
  return detail::g_active_ops->frame_and_build(*this, bytes, n, max_size);
}
inline IndexResult FieldIndex::build(std::string_view frame) noexcept {
  return build<FastScan>(frame.data(), frame.size());
}

}  // namespace kite::codec

// The walks' templates, instantiated with a scan by each level and by tests.
#include "kite/codec/detail/index_walk.hpp"
