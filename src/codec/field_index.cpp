// The FieldIndex's construction and move (its arrays' layout), and the error
// text of the frame, index and header result codes (built for people, never
// on the hot path).
#include "kite/codec/field_index.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/header.hpp"

namespace kite::codec {

namespace detail {
std::uint32_t trailer_end(const char* p, std::size_t from, std::size_t n) noexcept {
  const std::string_view s(p, n);
  for (std::size_t at = s.find("\x01"
                               "10=",
                               from);
       at != std::string_view::npos; at = s.find("\x01"
                                                 "10=",
                                                 at + 1)) {
    std::size_t i = at + 4;
    while (i < n && i < at + 7 && s[i] >= '0' && s[i] <= '9') ++i;
    if (i < n && s[i] == kSoh) return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

bool valid_begin_string(const char* s, std::size_t n) noexcept {
  const std::string_view v(s, n);
  if (v == "FIXT.1.1") return true;
  return n == 7 && v.substr(0, 4) == "FIX." && s[4] >= '4' && s[4] <= '5' && s[5] == '.' && s[6] >= '0' && s[6] <= '9';
}

std::uint32_t resync(const char* p, std::size_t limit) noexcept {
  constexpr char kStart[] = "8=FIX";
  for (std::size_t i = 1; i < limit; ++i) {
    if (p[i] != '8') continue;
    std::size_t k = 1;
    while (k < 5 && i + k < limit && p[i + k] == kStart[k]) ++k;
    if (k == 5 || i + k == limit) return static_cast<std::uint32_t>(i);
  }
  return static_cast<std::uint32_t>(limit);
}
}  // namespace detail

const char* to_string(FrameError e) noexcept {
  switch (e) {
    case FrameError::none: return "none";
    case FrameError::garbage_before_begin_string: return "garbage before BeginString (8=)";
    case FrameError::bad_begin_string: return "BeginString (8) is not FIX.x.y or FIXT.1.1";
    case FrameError::body_length_missing: return "BodyLength (9) missing: the second field must be 9";
    case FrameError::body_length_not_number: return "BodyLength (9) is not a number";
    case FrameError::body_length_mismatch:
      return "BodyLength (9) does not match: no field boundary where the body should end";
    case FrameError::checksum_missing: return "CheckSum (10) missing where BodyLength says the body ends";
    case FrameError::checksum_not_three_digits: return "CheckSum (10) is not three digits";
    case FrameError::checksum_mismatch: return "CheckSum (10) does not match the message's bytes";
    case FrameError::too_large: return "message larger than the maximum message size";
  }
  return "unknown frame error";
}

const char* to_string(IndexError e) noexcept {
  switch (e) {
    case IndexError::none: return "none";
    case IndexError::bad_tag: return "invalid tag number";
    case IndexError::missing_equals: return "field without '='";
    case IndexError::missing_soh: return "value not terminated by SOH";
    case IndexError::bad_data_length: return "data field does not match its length field";
    case IndexError::too_many_fields: return "more fields than the index can hold";
  }
  return "unknown index error";
}

const char* to_string(HeaderError e) noexcept {
  switch (e) {
    case HeaderError::none: return "none";
    case HeaderError::begin_string_not_first: return "BeginString (8) is not the first field";
    case HeaderError::body_length_not_second: return "BodyLength (9) is not the second field";
    case HeaderError::msg_type_not_third: return "MsgType (35) is not the third field";
    case HeaderError::msg_type_empty: return "MsgType (35) is empty";
    case HeaderError::bad_msg_seq_num: return "MsgSeqNum (34) is not a non-negative integer";
    case HeaderError::bad_body_length: return "BodyLength (9) is not a number";
    case HeaderError::bad_poss_dup: return "PossDupFlag (43) is not Y or N";
    case HeaderError::bad_poss_resend: return "PossResend (97) is not Y or N";
  }
  return "unknown header error";
}

FieldIndex::FieldIndex(std::uint32_t capacity) : capacity_(capacity > 0xFFFFu ? 0xFFFFu : capacity) {
  // Offsets in one page-aligned block. The slots fill whole pages; the
  // others start a quarter, a half, five eighths and three quarters into a
  // page, so that for messages of up to 64 fields the walk's stores (whole
  // vectors past the last entry included) neither cross a page's end nor
  // share page offsets with each other or with the slots of tags below 256
  // (which alias in the store buffer when they do).
  std::size_t size = 0;
  const auto place = [&size](std::size_t page_offset, std::size_t bytes) {
    size += (page_offset + kPage - size % kPage) % kPage;
    const std::size_t at = size;
    size += bytes;
    return at;
  };
  const std::size_t slots = place(0, kDirectTags * sizeof(std::uint32_t));
  const std::size_t fields = place(1024, (capacity_ + 16) * sizeof(FieldRef));
  const std::size_t ends = place(2048, (capacity_ + 64) * sizeof(std::uint32_t));
  const std::size_t sohs = place(2560, (capacity_ + 64) * sizeof(std::uint32_t));
  const std::size_t tags = place(3072, (capacity_ + 64) * sizeof(std::uint32_t));
  arena_.reset(new (std::align_val_t{kPage}) std::byte[size]());
  std::byte* const b = arena_.get();
  slots_ = reinterpret_cast<std::uint32_t*>(b + slots);
  fields_ = reinterpret_cast<FieldRef*>(b + fields);
  ends_ = reinterpret_cast<std::uint32_t*>(b + ends);
  sohs_ = reinterpret_cast<std::uint32_t*>(b + sohs);
  tags_ = reinterpret_cast<std::uint32_t*>(b + tags);
}

FieldIndex& FieldIndex::operator=(FieldIndex&& o) noexcept {
  if (this == &o) return *this;
  arena_ = std::move(o.arena_);
  slots_ = std::exchange(o.slots_, nullptr);
  fields_ = std::exchange(o.fields_, nullptr);
  ends_ = std::exchange(o.ends_, nullptr);
  sohs_ = std::exchange(o.sohs_, nullptr);
  tags_ = std::exchange(o.tags_, nullptr);
  base_ = std::exchange(o.base_, nullptr);
  size_ = std::exchange(o.size_, 0);
  count_ = std::exchange(o.count_, 0);
  capacity_ = std::exchange(o.capacity_, 0);
  generation_ = std::exchange(o.generation_, 1);
  return *this;
}

}  // namespace kite::codec
