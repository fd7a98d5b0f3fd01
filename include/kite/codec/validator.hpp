// Validation of a framed and indexed message against a data dictionary.
//
// The Validator makes one walk over a FieldIndex built from a complete frame
// and reports the first problem as a SessionRejectReason, the RefTagID it
// concerns and a text for people:
//   11 invalid_msg_type                 MsgType not in the dictionary
//    0 invalid_tag_number               tag not in the dictionary
//    4 tag_specified_without_value      empty value
//    2 tag_not_defined_for_message_type tag defined, but not for this MsgType
//   13 tag_appears_more_than_once       repeated outside a group, or twice in one group entry
//    6 incorrect_data_format            value not of the field's type
//    5 value_incorrect                  value not in the field's enum (each
//                                       item of a MULTIPLE*VALUE field)
//   14 tag_out_of_order                 8, 9, 35 not first; a header field
//                                       after a body field; a field after the trailer began
//   15 repeating_group_fields_out_of_order  an entry not starting with the
//                                       delimiter, members out of dictionary order
//   16 incorrect_num_in_group_count     NumInGroup differs from the entries present
//                                       (reported before a bad value inside the group)
//    1 required_tag_missing             header, body, trailer, or inside a group entry
//
// validate() never allocates, never throws, and costs one dense-array lookup
// and one hash probe per field plus the value check. Not validating costs
// nothing: the caller simply does not call it. A Validator holds per-field
// scratch state, so it serves one thread (one per session or per engine
// thread); the Dictionary it reads may be shared.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "kite/codec/dictionary.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/header.hpp"

namespace kite::codec {

struct ValidationOptions {
  // Reject (14) header fields after the body and fields after the trailer
  // began; reject (15) group members out of dictionary order.
  bool check_fields_out_of_order = true;
  // Let tags >= 5000 (user-defined range) pass unchecked when the dictionary
  // does not place them in the message.
  bool allow_user_defined_fields = false;
  // Let tags the dictionary does not define at all, or not for this
  // message, pass unchecked (QuickFIX's AllowUnknownMsgFields).
  bool allow_unknown_fields = false;
  // Reject (4) a field with an empty value.
  bool check_fields_have_values = true;
  // Check each value's format against its type (6) and its enum (5).
  bool check_values = true;
};

struct ValidationResult {
  bool ok = true;
  RejectReason reason = RejectReason::other;
  std::uint32_t ref_tag = 0;  // RefTagID (371) for the Reject
  // Index position of the offending field; for a required field missing
  // from a group entry, the entry's delimiter; size() when ok or when a
  // header, body or trailer field is missing.
  std::uint32_t position = 0;
  // Static text or text in the Validator's buffer: valid until its next validate().
  const char* text = "";
  explicit operator bool() const noexcept { return ok; }
};

// SessionRejectReason's description ("Required tag missing", ...).
const char* to_string(RejectReason r) noexcept;

// Format check of one value against a FIX type; true when it is well formed.
// (Used by the Validator; exposed for tools and tests.)
bool value_has_format(FieldType type, std::string_view v) noexcept;

class Validator {
 public:
  static constexpr std::uint32_t kUserDefinedMin = 5000;
  static constexpr std::size_t kTextCapacity = 192;

  explicit Validator(const Dictionary& dictionary, ValidationOptions options = {});

  // Validates a message whose frame was indexed into `ix` (the index's frame
  // must still be alive). The MsgType is taken from header.msg_type, or from
  // field 2 in the overload without a Header.
  ValidationResult validate(const FieldIndex& ix, const Header& header) noexcept;
  ValidationResult validate(const FieldIndex& ix) noexcept;

  const Dictionary& dictionary() const noexcept { return *dict_; }
  const ValidationOptions& options() const noexcept { return options_; }
  void set_options(const ValidationOptions& o) noexcept { options_ = o; }

 private:
  ValidationResult run(const FieldIndex& ix, std::string_view msg_type) noexcept;
  bool walk_group(const FieldIndex& ix, std::uint32_t count_pos, const GroupDef& g, std::uint32_t& next,
                  ValidationResult& r) noexcept;
  bool check_field(const FieldIndex& ix, std::uint32_t pos, const FieldDef& def, ValidationResult& r) noexcept;
  bool missing_required(const FieldSet& set, std::uint32_t stamp, std::uint32_t pos, const char* where,
                        ValidationResult& r) noexcept;
  std::uint32_t next_stamp() noexcept;
  ValidationResult& fail(ValidationResult& r, RejectReason reason, std::uint32_t tag, std::uint32_t pos,
                         const char* detail) noexcept;

  const Dictionary* dict_;
  ValidationOptions options_;
  std::unique_ptr<std::uint32_t[]> seen_;  // per field id: stamp of the scope it was last seen in
  std::uint32_t stamp_ = 0;
  char text_[kTextCapacity] = {};
};

}  // namespace kite::codec
