// Error text for the codec's result codes: built for people, never on the hot path.
#include "kite/codec/field_index.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/header.hpp"

namespace kite::codec {

const char* to_string(FrameError e) noexcept {
  switch (e) {
    case FrameError::none: return "none";
    case FrameError::garbage_before_begin_string: return "garbage before BeginString (8=)";
    case FrameError::bad_begin_string: return "BeginString (8) is not FIX.x.y or FIXT.1.1";
    case FrameError::body_length_missing: return "BodyLength (9) missing: the second field must be 9";
    case FrameError::body_length_not_number: return "BodyLength (9) is not a number";
    case FrameError::body_length_mismatch: return "BodyLength (9) does not match: no field boundary where the body should end";
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
    case HeaderError::bad_msg_seq_num: return "MsgSeqNum (34) is not a positive integer";
    case HeaderError::bad_body_length: return "BodyLength (9) is not a number";
    case HeaderError::bad_poss_dup: return "PossDupFlag (43) is not Y or N";
    case HeaderError::bad_poss_resend: return "PossResend (97) is not Y or N";
  }
  return "unknown header error";
}

FieldIndex::FieldIndex(std::uint32_t capacity)
    : ends_(new std::uint32_t[(capacity > 0xFFFFu ? 0xFFFFu : capacity) + 64]),
      sohs_(new std::uint32_t[(capacity > 0xFFFFu ? 0xFFFFu : capacity) + 64]),
      tags_(new std::uint32_t[(capacity > 0xFFFFu ? 0xFFFFu : capacity) + 64]),
      fields_(new FieldRef[(capacity > 0xFFFFu ? 0xFFFFu : capacity) + 16]),
      slots_(new std::uint32_t[kDirectTags]()),
      capacity_(capacity > 0xFFFFu ? 0xFFFFu : capacity) {}

}  // namespace kite::codec
