// The standard header, read from a field index: views into the frame plus the
// few numbers and flags the session layer acts on.
#pragma once

#include <cstdint>
#include <string_view>

#include "kite/codec/field_index.hpp"

namespace kite::codec {

struct Header {
  std::string_view begin_string;
  std::uint32_t body_length = 0;
  std::string_view msg_type;
  std::string_view sender_comp_id;
  std::string_view target_comp_id;
  std::string_view sender_sub_id;
  std::string_view target_sub_id;
  std::string_view sender_location_id;
  std::string_view target_location_id;
  std::string_view on_behalf_of_comp_id;
  std::string_view on_behalf_of_sub_id;
  std::string_view on_behalf_of_location_id;
  std::string_view deliver_to_comp_id;
  std::string_view deliver_to_sub_id;
  std::string_view deliver_to_location_id;
  std::uint64_t msg_seq_num = 0;  // 0 when absent
  std::string_view sending_time;
  std::string_view orig_sending_time;
  bool poss_dup = false;
  bool poss_resend = false;
};

enum class HeaderError : std::uint8_t {
  none,
  begin_string_not_first,
  body_length_not_second,
  msg_type_not_third,
  msg_type_empty,
  bad_msg_seq_num,  // present but not a non-negative integer
  bad_body_length,
  bad_poss_dup,     // not Y or N
  bad_poss_resend,  // not Y or N
};

const char* to_string(HeaderError e) noexcept;

struct HeaderResult {
  HeaderError error = HeaderError::none;
  std::uint32_t tag = 0;  // the field concerned
  explicit operator bool() const noexcept { return error == HeaderError::none; }
};

namespace detail {
// The value of the first field with tag t, or an empty view (inlined: out
// of line, its call cost more than its lookup on the per-message path).
[[gnu::always_inline]] inline std::string_view view_or_empty(const FieldIndex& ix, std::uint32_t t) noexcept {
  const std::int32_t i = ix.find_pos(t);
  return i < 0 ? std::string_view{} : ix.value_at(static_cast<std::uint32_t>(i));
}

// The header's views that nearly no message carries, one lookup each (out of
// line: the inlined read_header stays small).
[[gnu::noinline]] inline void read_rare_views(const FieldIndex& ix, Header& h) noexcept {
  h.sender_sub_id = view_or_empty(ix, tag::SenderSubID);
  h.target_sub_id = view_or_empty(ix, tag::TargetSubID);
  h.sender_location_id = view_or_empty(ix, tag::SenderLocationID);
  h.target_location_id = view_or_empty(ix, tag::TargetLocationID);
  h.on_behalf_of_comp_id = view_or_empty(ix, tag::OnBehalfOfCompID);
  h.on_behalf_of_sub_id = view_or_empty(ix, tag::OnBehalfOfSubID);
  h.on_behalf_of_location_id = view_or_empty(ix, tag::OnBehalfOfLocationID);
  h.deliver_to_comp_id = view_or_empty(ix, tag::DeliverToCompID);
  h.deliver_to_sub_id = view_or_empty(ix, tag::DeliverToSubID);
  h.deliver_to_location_id = view_or_empty(ix, tag::DeliverToLocationID);
  h.orig_sending_time = view_or_empty(ix, tag::OrigSendingTime);
}
}  // namespace detail

// Reads the header fields from an index built over a complete frame. Missing
// optional fields are empty views; required fields' presence (MsgSeqNum,
// SenderCompID, ...) is the session's and the validator's business. Always
// inlined: every received message runs it, and without a profile GCC judged
// it too large to inline once its lookups were.
[[gnu::always_inline]] inline HeaderResult read_header(const FieldIndex& ix, Header& h) noexcept {
  if (ix.size() < 3 || ix[0].tag != tag::BeginString) return {HeaderError::begin_string_not_first, tag::BeginString};
  if (ix[1].tag != tag::BodyLength) return {HeaderError::body_length_not_second, tag::BodyLength};
  if (ix[2].tag != tag::MsgType) return {HeaderError::msg_type_not_third, tag::MsgType};
  h.begin_string = ix.value_at(0);
  std::uint64_t body = 0;
  if (!parse_uint(ix.value_at(1), body)) return {HeaderError::bad_body_length, tag::BodyLength};
  h.body_length = static_cast<std::uint32_t>(body);
  h.msg_type = ix.value_at(2);
  if (h.msg_type.empty()) return {HeaderError::msg_type_empty, tag::MsgType};

  using detail::view_or_empty;
  h.sender_comp_id = view_or_empty(ix, tag::SenderCompID);
  h.target_comp_id = view_or_empty(ix, tag::TargetCompID);
  // Nearly every message carries none of these: one test for all of them.
  const bool rare = ix.may_have_any<tag::SenderSubID, tag::TargetSubID, tag::SenderLocationID, tag::TargetLocationID,
                                    tag::OnBehalfOfCompID, tag::OnBehalfOfSubID, tag::OnBehalfOfLocationID,
                                    tag::DeliverToCompID, tag::DeliverToSubID, tag::DeliverToLocationID,
                                    tag::OrigSendingTime, tag::PossDupFlag, tag::PossResend>();
  if (rare) [[unlikely]] {
    detail::read_rare_views(ix, h);
  } else {
    h.sender_sub_id = {};
    h.target_sub_id = {};
    h.sender_location_id = {};
    h.target_location_id = {};
    h.on_behalf_of_comp_id = {};
    h.on_behalf_of_sub_id = {};
    h.on_behalf_of_location_id = {};
    h.deliver_to_comp_id = {};
    h.deliver_to_sub_id = {};
    h.deliver_to_location_id = {};
    h.orig_sending_time = {};
  }
  h.sending_time = view_or_empty(ix, tag::SendingTime);

  h.msg_seq_num = 0;
  if (const std::int32_t i = ix.find_pos(tag::MsgSeqNum); i >= 0) {
    // 0 is read: a SequenceReset in reset mode may carry it; the session judges.
    if (!parse_uint(ix.value_at(static_cast<std::uint32_t>(i)), h.msg_seq_num))
      return {HeaderError::bad_msg_seq_num, tag::MsgSeqNum};
  }
  h.poss_dup = false;
  if (!rare) [[likely]] {
    h.poss_resend = false;
    return {};
  }
  if (const std::int32_t i = ix.find_pos(tag::PossDupFlag); i >= 0) {
    if (!parse_bool(ix.value_at(static_cast<std::uint32_t>(i)), h.poss_dup))
      return {HeaderError::bad_poss_dup, tag::PossDupFlag};
  }
  h.poss_resend = false;
  if (const std::int32_t i = ix.find_pos(tag::PossResend); i >= 0) {
    if (!parse_bool(ix.value_at(static_cast<std::uint32_t>(i)), h.poss_resend))
      return {HeaderError::bad_poss_resend, tag::PossResend};
  }
  return {};
}

}  // namespace kite::codec
