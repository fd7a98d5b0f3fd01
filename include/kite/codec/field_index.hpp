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
// field). Rare on the walk's path: is_length_tag answers first.
constexpr std::uint32_t data_tag_for_length(std::uint32_t length_tag) noexcept {
  std::uint32_t lo = 0, hi = std::size(kLengthDataPairs);
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (kLengthDataPairs[mid].length_tag < length_tag) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < std::size(kLengthDataPairs) && kLengthDataPairs[lo].length_tag == length_tag ? kLengthDataPairs[lo].data_tag : 0;
}

// Bit t set when tag t is a length field: a cheap test before the search.
inline constexpr std::uint32_t kFirstLengthTag = kLengthDataPairs[0].length_tag;
inline constexpr std::uint32_t kLastLengthTag = kLengthDataPairs[std::size(kLengthDataPairs) - 1].length_tag;
struct LengthTagBits {
  std::uint64_t words[kLastLengthTag / 64 + 1] = {};
  constexpr LengthTagBits() {
    for (const LengthDataPair& p : kLengthDataPairs) words[p.length_tag / 64] |= std::uint64_t{1} << (p.length_tag % 64);
  }
};
inline constexpr LengthTagBits kLengthTags{};

// The host-tuned walk looks the tags below kVectorLengthTagLimit up in the
// table's first words (two vectors) and sends any tag from
// kFirstHighLengthTag on to its scalar check: no length tag lies between.
inline constexpr std::uint32_t kVectorLengthTagLimit = 640;
inline constexpr std::uint32_t kFirstHighLengthTag = [] {
  for (const LengthDataPair& p : kLengthDataPairs)
    if (p.length_tag >= kVectorLengthTagLimit) return p.length_tag;
  return kLastLengthTag + 1;
}();

inline constexpr std::uint32_t kPow10[8] = {1, 1, 10, 100, 1000, 10000, 100000, 1000000};  // [n]: the least n-digit tag

constexpr bool is_length_tag(std::uint32_t tag) noexcept {
  // Below the first length tag (most header and order tags): one compare.
  return tag - kFirstLengthTag <= kLastLengthTag - kFirstLengthTag &&
         ((kLengthTags.words[tag / 64] >> (tag % 64)) & 1u) != 0;
}
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
  // views handed out. Scan picks the SIMD, SWAR or scalar classification
  // (all give the same index). Frames are limited to 4 GiB.
  template <class Scan = FastScan>
  IndexResult build(const char* frame, std::size_t size) noexcept;
  IndexResult build(std::string_view frame) noexcept { return build<FastScan>(frame.data(), frame.size()); }
  // The same index for a frame that frame() found complete (`framed` is its
  // answer): the BeginString, BodyLength and CheckSum fields it checked are
  // recorded from their known places and only the body is walked.
  template <class Scan = FastScan>
  IndexResult build(const char* frame, const FrameResult& framed) noexcept;
  // frame() and build() in one: frames the message at the start of the
  // buffer and, when it is complete, indexes it, taking the checksum on the
  // way (the host-tuned walk sums the blocks it loads; other walks check it
  // as frame() does). Answers exactly what frame() and then build() would;
  // when the frame is not complete the index is left empty.
  template <class Scan = FastScan>
  FramedIndex frame_and_build(const char* bytes, std::size_t n, std::uint32_t max_size = kDefaultMaxMessageSize) noexcept;

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
    if (f->offset + std::uint64_t{8} <= size_ && Word(base_ + f->offset, f->length, out)) [[likely]] return Get::ok;
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
    if (detail::parse_utc_timestamp_word(base_ + f->offset, f->length, nanos, digits, size_ - f->offset)) [[likely]] return Get::ok;
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
  void clear(const char* base) noexcept {
    reset();
    base_ = base;
    size_ = 0;
  }
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

  // build(frame, framed) for a layout already checked (as frame() checks it;
  // begin_string_end: where BeginString's SOH is). When sum is not null and
  // the walk can take it, *sum is set to the sum of the bytes before
  // CheckSum (else it is left alone).
  template <class Scan>
  IndexResult build_body(const char* frame, std::uint32_t size, std::uint32_t body_begin, std::uint32_t body_end,
                         std::uint32_t begin_string_end, std::uint64_t* sum) noexcept;
  // Indexes the fields of [begin, end) after the first `first` fields; sum
  // as for build_body, for the bytes of [0, end).
  template <class Scan>
  IndexResult walk(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first, std::uint64_t* sum = nullptr) noexcept;
  // The host-tuned bulk walk, defined where KITE_CODEC_AVX512 is set; its
  // arrays of '=' and SOH positions and tags (capacity_ + 64 each) exist in
  // every build, so that the class is the same in every translation unit.
  std::uint32_t bulk_walk(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first, std::size_t& p,
                          std::uint64_t* sum) noexcept;
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

#if KITE_CODEC_AVX512
// GCC 12's AVX-512 headers start some vectors from _mm512_undefined, which
// -Wuninitialized or -Wmaybe-uninitialized reports wherever they are inlined
// (which one depends on the optimisation level and the caller).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The host-tuned walk: the frame's structure and its tags from a few vector
// instructions per 64-byte block, then a short scalar loop per field.
//
// Per block, bits for '=' (eq), SOH (soh) and digits (digit). A tag starts at
// the frame's first byte and after every SOH (starts). Adding starts to digit
// carries through each run of digits that begins at a start and lands on the
// byte after it: ends = (digit + starts) & ~digit marks every tag's end, and
// digit & ~(digit + starts) every tag's bytes (the digits the carry cleared).
// The frame suits this walk when every start
// is a digit other than '0' and every end is an '=' (values may hold '=' and
// digits: only runs that begin at a start count). The positions of the ends
// and SOHs are compressed out of the masks (vpcompressb of the offsets 0..63).
// Each tag's value: the 4 bytes before its '=' are permuted out of this block's
// and the previous block's tag digits (zero outside tags, so the bytes before
// a short tag count as leading zeros) and summed by two multiply-adds (x10 + y,
// then x100 + y). A tag of 5 or more digits is redone in scalar code.
//
// It indexes the fields of [begin, end) after the first `first` fields of
// the index, returns how many it indexed and sets p to where the general walk
// must go on: begin when the bytes do not suit it (the general walk then
// finds the error, or the data field that broke the pattern), else the start
// of the first field it did not take (a length field, which a data field may
// follow; a tag of 8 or more digits), or end. It writes the slots of the
// fields it indexed only (first field wins among them).
//
// With sum not null it also adds up the bytes of [0, end) for the checksum:
// the blocks it loads, and [0, begin) in one more load (begin <= 64 only).
[[gnu::always_inline]] inline std::uint32_t FieldIndex::bulk_walk(const char* frame, std::size_t begin, std::size_t end,
                                                               std::uint32_t first, std::size_t& p, std::uint64_t* sum) noexcept {
  FieldRef* const fields = fields_ + first;
  std::uint32_t* const slots = slots_;
  std::uint32_t* const ends_at = ends_;
  std::uint32_t* const sohs_at = sohs_;
  std::uint32_t* const tags_at = tags_;
  const std::uint32_t capacity = capacity_ - first;
  const std::uint32_t generation_bits = generation_ << 16;
  p = begin;
  if (frame[end - 1] != kSoh) return 0;

  struct Tables {
    alignas(64) std::uint8_t offsets[64];  // 0..63
    // For the dword lane k of group g, four times the byte index 16g + k.
    alignas(64) std::uint8_t spread[4][64];
    // Added to each spread byte: the 4 bytes before the '=', as indexes into
    // the previous block's digits (0..63) and this block's (64..127).
    alignas(64) std::uint8_t before[64];
  };
  static constexpr Tables kT = [] {
    Tables t{};
    for (unsigned i = 0; i < 64; ++i) {
      t.offsets[i] = static_cast<std::uint8_t>(i);
      for (unsigned g = 0; g < 4; ++g) t.spread[g][i] = static_cast<std::uint8_t>(16 * g + i / 4);
      t.before[i] = static_cast<std::uint8_t>(60 + i % 4);
    }
    return t;
  }();
  const __m512i offsets = _mm512_load_si512(kT.offsets);
  const __m512i before = _mm512_load_si512(kT.before);
  const __m512i tens = _mm512_set1_epi16(0x010A);        // bytes 10, 1
  const __m512i hundreds = _mm512_set1_epi32(0x00010064);  // words 100, 1
  // Up to 64 byte offsets, widened to positions and stored 16 at a time (the
  // arrays have room for a partial vector past the count).
  const auto store_positions = [](std::uint32_t* out, __m512i bytes, unsigned n, std::uint32_t base) noexcept {
    const __m512i b = _mm512_set1_epi32(static_cast<int>(base));
    _mm512_storeu_si512(out, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(bytes)), b));
    if (n > 16) [[unlikely]] {
      _mm512_storeu_si512(out + 16, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 1)), b));
      if (n > 32) {
        _mm512_storeu_si512(out + 32, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 2)), b));
        if (n > 48)
          _mm512_storeu_si512(out + 48, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(bytes, 3)), b));
      }
    }
  };

  std::uint32_t n_ends = 0, n_sohs = 0;
  std::uint64_t bad = 0, soh_carry = 1, run_carry = 0;
  __m512i previous_digits = _mm512_setzero_si512();
  // The checksum's bytes, when it is wanted, added in 64 byte lanes that
  // wrap (only the sum modulo 256 counts); folded by one vpsadbw at the end.
  // A header of more than 64 bytes is left to the caller.
  const bool summing = sum != nullptr && begin <= 64;
  __m512i bytes_sum = _mm512_setzero_si512();
  if (summing) bytes_sum = _mm512_maskz_loadu_epi8(_bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(begin)), frame);
  // One block of 64 bytes at base, `valid` marking those before end; false
  // when the arrays could overflow (the general walk then reports it).
  const auto block = [&](std::size_t base, std::uint64_t valid) __attribute__((always_inline)) {
    const __m512i v = _mm512_maskz_loadu_epi8(valid, frame + base);
    if (sum != nullptr) bytes_sum = _mm512_add_epi8(bytes_sum, v);  // known where inlined: no test per block
    const std::uint64_t eq = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('='));
    const std::uint64_t soh = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(kSoh));
    const __m512i value = _mm512_sub_epi8(v, _mm512_set1_epi8('0'));
    const __mmask64 digit_k = _mm512_cmplt_epu8_mask(value, _mm512_set1_epi8(10));
    const std::uint64_t digit = digit_k;
    const std::uint64_t leading = _mm512_mask_cmpneq_epi8_mask(digit_k, value, _mm512_setzero_si512());  // 1..9
    const std::uint64_t starts = ((soh << 1) | soh_carry) & valid;
    soh_carry = soh >> 63;
    std::uint64_t partial, sum_bits;
    const bool c = __builtin_add_overflow(digit, starts, &partial);
    const bool c2 = __builtin_add_overflow(partial, run_carry, &sum_bits);
    run_carry = static_cast<std::uint64_t>(c | c2);
    const std::uint64_t ends = sum_bits & ~digit, tag_bits = digit & ~sum_bits;
    bad |= (starts & ~leading) | (ends & ~eq);
    const auto n_e = static_cast<unsigned>(_mm_popcnt_u64(ends));
    const auto n_s = static_cast<unsigned>(_mm_popcnt_u64(soh));
    // Ends and SOHs lie on the bytes walked: at most base + 64 - begin each
    // so far, so the counts are checked only when the arrays could fill.
    if (base + 64 - begin > capacity && (n_ends + n_e > capacity || n_sohs + n_s > capacity)) [[unlikely]] return false;
    const auto at = static_cast<std::uint32_t>(base);
    const __m512i end_offsets = _mm512_maskz_compress_epi8(ends, offsets);
    store_positions(ends_at + n_ends, end_offsets, n_e, at);
    store_positions(sohs_at + n_sohs, _mm512_maskz_compress_epi8(soh, offsets), n_s, at);
    const __m512i digits = _mm512_maskz_mov_epi8(tag_bits, value);  // tag digits, zero elsewhere
    const auto tags16 = [&](unsigned g) __attribute__((always_inline)) {  // the tags of ends g..g+15
      const __m512i index = _mm512_add_epi8(_mm512_permutexvar_epi8(_mm512_load_si512(kT.spread[g / 16]), end_offsets), before);
      const __m512i four = _mm512_permutex2var_epi8(previous_digits, index, digits);
      _mm512_storeu_si512(tags_at + n_ends + g, _mm512_madd_epi16(_mm512_maddubs_epi16(four, tens), hundreds));
    };
    tags16(0);  // (with no ends, stores that the next block or the count leave unread)
    for (unsigned g = 16; g < n_e; g += 16) [[unlikely]] tags16(g);
    previous_digits = digits;
    n_ends += n_e;
    n_sohs += n_s;
    return true;
  };
  // Whole blocks, then the last (1 to 64 bytes; BZHI keeps all 64 bits for 64).
  std::size_t base = begin;
  for (; end - base > 64; base += 64)
    if (!block(base, ~std::uint64_t{0})) return 0;
  if (!block(base, _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(end - base)))) return 0;
  if (summing) {  // eight sums of 8 lanes, their low bytes (vpmovqb: modulo 256 is all that counts), their sum
    const __m128i low_bytes = _mm512_cvtepi64_epi8(_mm512_sad_epu8(bytes_sum, _mm512_setzero_si512()));
    *sum = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_sad_epu8(low_bytes, _mm_setzero_si128())));
  }
  if (bad != 0 || run_carry != 0 || n_ends != n_sohs || n_ends == 0) return 0;

  // Checks, 16 fields at a time, in order: a lane needs scalar work when the
  // vector sum saw too little (a tag of 5 or more digits) or too much (the
  // previous tag's last digit, when that field was 3 bytes: "1=" and its SOH
  // right before a 1-digit tag), or when its tag is a length field (a data
  // field may follow: the walk stops there) or, from kFirstHighLengthTag on,
  // may be one (the scalar code looks those up).
  alignas(64) static constexpr std::uint32_t kReverse[16] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  // The first n of 16 lanes (BZHI reads only 8 bits of its count: clamp first).
  const auto lanes_below = [](std::uint32_t n) noexcept { return static_cast<__mmask16>(_bzhi_u32(0xFFFFu, n < 16 ? n : 16)); };
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i four = _mm512_set1_epi32(4);
  // detail::kLengthTags' first 64-bit words read as 32-bit ones (bit t % 32
  // of word t / 32, little-endian): 20 words, in two vectors for a permute.
  static_assert(detail::kVectorLengthTagLimit == 20 * 32 && sizeof detail::kLengthTags.words >= 20 * 4);
  const __m512i words_lo = _mm512_loadu_si512(detail::kLengthTags.words);
  const __m512i words_hi = _mm512_maskz_loadu_epi32(0x000F, detail::kLengthTags.words + 8);
  std::uint32_t taken = n_ends;  // fields the walk indexes
  p = end;
  // The fields from i, in e, s and t (their ends, SOHs and tags, lanes past
  // n_ends zero), checked; false when the walk stops among them (taken and
  // p then say where). Tags the scalar code redoes are stored in tags_at.
  const auto check = [&](std::uint32_t i, __m512i e, __m512i s, __m512i t, __m512i previous_soh, __m512i previous_end,
                         bool& patched) __attribute__((always_inline)) {
    const __mmask16 in = lanes_below(n_ends - i);
    const __m512i f = _mm512_add_epi32(_mm512_alignr_epi32(s, previous_soh, 15), one);
    const __m512i pe = _mm512_alignr_epi32(e, previous_end, 15);
    const __m512i word = _mm512_permutex2var_epi32(words_lo, _mm512_srli_epi32(t, 5), words_hi);
    const __mmask16 special =
        in & (_mm512_cmpgt_epu32_mask(_mm512_sub_epi32(e, f), four) | _mm512_cmplt_epu32_mask(_mm512_sub_epi32(e, pe), four) |
              (_mm512_cmplt_epu32_mask(t, _mm512_set1_epi32(detail::kVectorLengthTagLimit)) &
               _mm512_test_epi32_mask(_mm512_srlv_epi32(word, _mm512_and_si512(t, _mm512_set1_epi32(31))), one)) |
              _mm512_cmpge_epu32_mask(t, _mm512_set1_epi32(detail::kFirstHighLengthTag)));
    if (special == 0) [[likely]] return true;
    patched = true;
    std::uint32_t fs[16];
    _mm512_storeu_si512(fs, f);
    for (unsigned m = special; m != 0; m &= m - 1) {
      const auto j = static_cast<unsigned>(__builtin_ctz(m));
      const std::uint32_t from = fs[j], to = ends_at[i + j];
      std::uint32_t tag = 0;
      if (to - from <= 7) {
        for (std::uint32_t d = from; d < to; ++d) tag = tag * 10 + (static_cast<unsigned char>(frame[d]) - '0');
      }
      if (to - from > 7 || detail::is_length_tag(tag)) {  // the general walk takes it from here
        taken = i + j;
        p = from;
        return false;
      }
      tags_at[i + j] = tag;
    }
    return true;
  };

  // The fields, as {tag, offset, length}, and their slots, 16 at a time from
  // the last: a scatter writes its lanes in order, so with the fields in
  // reverse lane order and the vectors taken last to first, each slot ends
  // up holding the first field with its tag.
  struct Interleave {
    alignas(64) std::uint32_t two[3][16];    // tag (0..15) or offset (16..31) for each dword
    alignas(64) std::uint32_t third[3][16];  // the length's lane, where the dword is a length
    std::uint16_t is_length[3];
  };
  static constexpr Interleave kI = [] {
    Interleave t{};
    for (unsigned q = 0; q < 48; ++q) {
      const unsigned field = q / 3, part = q % 3, r = q / 16, d = q % 16;
      t.two[r][d] = part == 0 ? field : part == 1 ? 16 + field : 0;
      t.third[r][d] = field;
      if (part == 2) t.is_length[r] = static_cast<std::uint16_t>(t.is_length[r] | (1u << d));
    }
    return t;
  }();
  static_assert(sizeof(FieldRef) == 12);
  const __m512i reverse = _mm512_load_si512(kReverse);  // also each lane's field, reversed
  // Fields i.. from e, s and t (lanes from taken on are not scattered; they
  // are written where the general walk writes after this one).
  const auto emit = [&](std::uint32_t i, __m512i e, __m512i s, __m512i t) __attribute__((always_inline)) {
    const __m512i offset = _mm512_add_epi32(e, one);
    const __m512i length = _mm512_sub_epi32(_mm512_sub_epi32(s, e), one);
    auto* out = reinterpret_cast<std::uint32_t*>(fields + i);
    // Whole vectors: the lanes past the last field land in the table's 16
    // spare entries or on entries written after this walk (and a masked
    // store would keep the reads that follow from taking the values straight
    // from the store).
    for (unsigned r = 0; r < 3; ++r) {
      const __m512i to = _mm512_permutex2var_epi32(t, _mm512_load_si512(kI.two[r]), offset);
      _mm512_storeu_si512(out + 16 * r, _mm512_mask_permutexvar_epi32(to, kI.is_length[r], _mm512_load_si512(kI.third[r]), length));
    }
    const __m512i rt = _mm512_permutexvar_epi32(reverse, t);
    const __m512i position = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(generation_bits | (first + i))), reverse);
    const __mmask16 direct = _mm512_cmplt_epu32_mask(reverse, _mm512_set1_epi32(static_cast<int>(taken - i))) &
                             _mm512_cmplt_epu32_mask(rt, _mm512_set1_epi32(kDirectTags));
    _mm512_mask_i32scatter_epi32(slots, direct, rt, position, 4);
  };

  const __m512i first_soh = _mm512_set1_epi32(static_cast<int>(begin) - 1);  // the first field starts at begin
  const __m512i no_end = _mm512_set1_epi32(static_cast<int>(0xFFFFFFF0u));    // before the first: far away
  bool patched = false;
  if (n_ends <= 16) {  // one vector: checked and written from the same registers
    const __mmask16 in = lanes_below(n_ends);
    const __m512i e = _mm512_maskz_loadu_epi32(in, ends_at), s = _mm512_maskz_loadu_epi32(in, sohs_at);
    const __m512i t = _mm512_maskz_loadu_epi32(in, tags_at);
    check(0, e, s, t, first_soh, no_end, patched);
    if (taken != 0) emit(0, e, s, patched ? _mm512_maskz_loadu_epi32(in, tags_at) : t);
    return taken;
  }
  __m512i previous_soh = first_soh, previous_end = no_end;
  for (std::uint32_t i = 0; i < n_ends; i += 16) {
    const __mmask16 in = lanes_below(n_ends - i);
    const __m512i e = _mm512_maskz_loadu_epi32(in, ends_at + i), s = _mm512_maskz_loadu_epi32(in, sohs_at + i);
    if (!check(i, e, s, _mm512_maskz_loadu_epi32(in, tags_at + i), previous_soh, previous_end, patched)) break;
    previous_soh = s;
    previous_end = e;
  }
  for (std::uint32_t i = taken == 0 ? 0 : (taken - 1) & ~15u; taken != 0; i -= 16) {
    const __mmask16 in = lanes_below(taken - i);
    emit(i, _mm512_maskz_loadu_epi32(in, ends_at + i), _mm512_maskz_loadu_epi32(in, sohs_at + i),
         _mm512_maskz_loadu_epi32(in, tags_at + i));
    if (i == 0) break;
  }
  return taken;
}
#pragma GCC diagnostic pop
#endif

template <class Scan>
IndexResult FieldIndex::build(const char* frame, std::size_t size) noexcept {
  reset();
  base_ = frame;
  size_ = static_cast<std::uint32_t>(size);
  return walk<Scan>(frame, 0, size, 0);
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
[[gnu::always_inline]] inline IndexResult FieldIndex::build_body(const char* frame, std::uint32_t size, std::uint32_t body_begin,
                                                                 std::uint32_t body_end, std::uint32_t begin_string_end,
                                                                 std::uint64_t* sum) noexcept {
  if (capacity_ < 3) [[unlikely]] return build<Scan>(frame, size);
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
  if (!r || count_ == capacity_) [[unlikely]] return build<Scan>(frame, size);
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
[[gnu::always_inline]] inline IndexResult FieldIndex::walk(const char* frame, std::size_t begin, std::size_t end, std::uint32_t first,
                                                           [[maybe_unused]] std::uint64_t* sum) noexcept {
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
  bool bulk_done = false;  // the host-tuned bulk walk ran: p is where the general walk goes on
#if KITE_CODEC_AVX512
  if constexpr (std::is_same_v<Scan, Avx512Scan>) {
    if (end - begin >= 4 && end < (std::size_t{1} << 30) && capacity > first) {
      count = first + bulk_walk(frame, begin, end, first, p, sum);
      bulk_done = true;
      if (p < end) {
        load(p);
        pending &= ~std::uint64_t{0} << (p - start);
      }
    }
  }
#endif
  if (!bulk_done && end > begin) {
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
      if (end - start <= 64) return false;
      load(start + 64);
      if (pending == 0) [[unlikely]] return false;
    }
    const std::size_t soh = start + static_cast<unsigned>(__builtin_ctzll(pending));
    pending &= pending - 1;
    record(tag, p + tag_len + 1, soh);
    p = soh + 1;
    return true;
  };
  if (kWide && !bulk_done && end >= 8 && capacity > first) {
    // A field takes at least 3 bytes, so while p - begin <= 3 * room - 3
    // fewer than `room` fields are recorded: the bound replaces a check per field.
    const std::size_t room_stop = begin + 3 * std::size_t{capacity - first} - 3;
    const std::size_t stop = end - 8 < room_stop ? end - 8 : room_stop;
    while (p <= stop) {
      std::uint64_t w;
      std::memcpy(&w, frame + p, sizeof w);
      if (!common_field(w)) [[unlikely]] break;  // then p <= stop: no tail below
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
      if (tag_len == 0 || frame[p] == '0' || !detail::parse_digits8(w, tag_len, tag)) return done(IndexError::bad_tag, p, 0);
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
      if (pending_data_len >= end - v || frame[v + pending_data_len] != kSoh) {
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
