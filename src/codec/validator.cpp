// One walk over the index: each field is classified (header, body, trailer,
// group entry) with the dictionary's O(1) tables, checked, and stamped in a
// per-field scratch table so that repeats and missing required fields are
// found without clearing anything between messages.
#include "kite/codec/validator.hpp"

#include <cstring>

#include "kite/codec/values.hpp"

namespace kite::codec {

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

bool all_digits(std::string_view s, std::size_t at, std::size_t n) noexcept {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

std::uint32_t two_digits(std::string_view s, std::size_t at) noexcept {
  return static_cast<std::uint32_t>((s[at] - '0') * 10 + (s[at + 1] - '0'));
}

// "-"? digits ("." digits?)? with at least one digit; no exponent.
bool decimal_format(std::string_view s) noexcept {
  std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  bool digit = false, dot = false;
  for (; i < s.size(); ++i) {
    if (is_digit(s[i])) {
      digit = true;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digit;
}

bool int_format(std::string_view s, bool allow_sign) noexcept {
  std::size_t i = allow_sign && !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

bool date_format(std::string_view s) noexcept {
  Date d;
  return s.size() == 8 && parse_date(s, d);
}

// Time of day at s[at]: HH:MM[:SS[.f{1,12}]]; seconds required when asked.
// On success `at` is just past it.
bool time_format(std::string_view s, std::size_t& at, bool need_seconds) noexcept {
  if (!all_digits(s, at, 2) || at + 5 > s.size() || s[at + 2] != ':' || !all_digits(s, at + 3, 2)) return false;
  if (two_digits(s, at) > 23 || two_digits(s, at + 3) > 59) return false;
  at += 5;
  if (at == s.size() || s[at] != ':') return !need_seconds;
  if (!all_digits(s, at + 1, 2) || two_digits(s, at + 1) > 60) return false;  // 60: leap second
  at += 3;
  if (at < s.size() && s[at] == '.') {
    std::size_t n = 0;
    ++at;
    while (at < s.size() && is_digit(s[at])) ++at, ++n;
    if (n == 0 || n > 12) return false;
  }
  return true;
}

// The end of a TZ time: nothing, "Z", or +/-hh[:mm].
bool tz_suffix(std::string_view s, std::size_t at) noexcept {
  if (at == s.size()) return true;
  if (s[at] == 'Z') return at + 1 == s.size();
  if (s[at] != '+' && s[at] != '-') return false;
  if (!all_digits(s, at + 1, 2) || two_digits(s, at + 1) > 14) return false;
  at += 3;
  if (at == s.size()) return true;
  return s[at] == ':' && at + 3 == s.size() && all_digits(s, at + 1, 2) && two_digits(s, at + 1) <= 59;
}

bool month_year_format(std::string_view s) noexcept {
  if (!all_digits(s, 0, 6)) return false;
  const std::uint32_t month = two_digits(s, 4);
  if (month < 1 || month > 12) return false;
  if (s.size() == 6) return true;
  if (s.size() == 8 && s[6] == 'w') return s[7] >= '1' && s[7] <= '5';
  return date_format(s);
}

// Appends to a fixed buffer, truncating silently.
struct TextOut {
  char* p;
  char* end;
  void put(std::string_view s) noexcept {
    for (const char c : s) {
      if (p == end) return;
      *p++ = c;
    }
  }
  void put_uint(std::uint64_t v) noexcept {
    char digits[kMaxUintChars];
    put({digits, static_cast<std::size_t>(write_uint(digits, v) - digits)});
  }
};

}  // namespace

bool value_has_format(FieldType type, std::string_view v) noexcept {
  switch (type) {
    case FieldType::integer: return int_format(v, true);
    case FieldType::length:
    case FieldType::seqnum:
    case FieldType::numingroup: return int_format(v, false);
    case FieldType::tagnum: return int_format(v, false) && v[0] != '0';
    case FieldType::dayofmonth: {
      if (!int_format(v, false) || v.size() > 2) return false;
      const std::uint32_t d = v.size() == 1 ? static_cast<std::uint32_t>(v[0] - '0') : two_digits(v, 0);
      return d >= 1 && d <= 31;
    }
    case FieldType::floating:
    case FieldType::qty:
    case FieldType::price:
    case FieldType::priceoffset:
    case FieldType::amt:
    case FieldType::percentage: return decimal_format(v);
    case FieldType::character: return v.size() == 1;
    case FieldType::boolean: return v.size() == 1 && (v[0] == 'Y' || v[0] == 'N');
    case FieldType::country: return v.size() == 2;
    case FieldType::currency: return v.size() == 3;
    case FieldType::monthyear: return month_year_format(v);
    case FieldType::utctimestamp: {
      std::size_t at = 9;
      return v.size() > 9 && date_format(v.substr(0, 8)) && v[8] == '-' && time_format(v, at, true) && at == v.size();
    }
    case FieldType::utctimeonly:
    case FieldType::localmkttime: {
      std::size_t at = 0;
      return time_format(v, at, true) && at == v.size();
    }
    case FieldType::utcdateonly:
    case FieldType::utcdate:
    case FieldType::localmktdate: return date_format(v);
    case FieldType::tztimeonly: {
      std::size_t at = 0;
      return time_format(v, at, false) && tz_suffix(v, at);
    }
    case FieldType::tztimestamp: {
      std::size_t at = 9;
      return v.size() > 9 && date_format(v.substr(0, 8)) && v[8] == '-' && time_format(v, at, false) &&
             tz_suffix(v, at);
    }
    case FieldType::multiplecharvalue:
    case FieldType::multiplevaluestring:
    case FieldType::multiplestringvalue: {
      // Items separated by single spaces, none empty.
      if (v.empty() || v.front() == ' ' || v.back() == ' ') return false;
      for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i] == ' ' && v[i - 1] == ' ') return false;
      if (type == FieldType::multiplecharvalue) {
        for (std::size_t i = 0; i < v.size(); i += 2)
          if (i + 1 < v.size() && v[i + 1] != ' ') return false;
      }
      return true;
    }
    case FieldType::unknown:
    case FieldType::string:
    case FieldType::exchange:
    case FieldType::language:
    case FieldType::xid:
    case FieldType::xidref:
    case FieldType::data:
    case FieldType::xmldata: return true;
  }
  return true;
}

const char* to_string(RejectReason r) noexcept {
  switch (r) {
    case RejectReason::invalid_tag_number: return "Invalid tag number";
    case RejectReason::required_tag_missing: return "Required tag missing";
    case RejectReason::tag_not_defined_for_message_type: return "Tag not defined for this message type";
    case RejectReason::undefined_tag: return "Undefined tag";
    case RejectReason::tag_specified_without_value: return "Tag specified without a value";
    case RejectReason::value_incorrect: return "Value is incorrect (out of range) for this tag";
    case RejectReason::incorrect_data_format: return "Incorrect data format for value";
    case RejectReason::decryption_problem: return "Decryption problem";
    case RejectReason::signature_problem: return "Signature problem";
    case RejectReason::compid_problem: return "CompID problem";
    case RejectReason::sending_time_accuracy_problem: return "SendingTime accuracy problem";
    case RejectReason::invalid_msg_type: return "Invalid MsgType";
    case RejectReason::xml_validation_error: return "XML validation error";
    case RejectReason::tag_appears_more_than_once: return "Tag appears more than once";
    case RejectReason::tag_out_of_order: return "Tag specified out of required order";
    case RejectReason::repeating_group_fields_out_of_order: return "Repeating group fields out of order";
    case RejectReason::incorrect_num_in_group_count: return "Incorrect NumInGroup count for repeating group";
    case RejectReason::non_data_value_includes_field_delimiter: return "Non-data value includes field delimiter";
    case RejectReason::other: return "Other";
  }
  return "Other";
}

Validator::Validator(const Dictionary& dictionary, ValidationOptions options)
    : dict_(&dictionary), options_(options), seen_(new std::uint32_t[dictionary.field_count() + 1]()) {}

std::uint32_t Validator::next_stamp() noexcept {
  if (++stamp_ == 0) {  // wrapped: forget every old stamp once
    std::memset(seen_.get(), 0, sizeof(std::uint32_t) * (dict_->field_count() + 1));
    stamp_ = 1;
  }
  return stamp_;
}

ValidationResult& Validator::fail(ValidationResult& r, RejectReason reason, std::uint32_t tag, std::uint32_t pos,
                                  const char* detail) noexcept {
  r.ok = false;
  r.reason = reason;
  r.ref_tag = tag;
  r.position = pos;
  TextOut out{text_, text_ + kTextCapacity - 1};
  out.put(to_string(reason));
  if (tag != 0) {
    out.put(": tag ");
    out.put_uint(tag);
    if (const FieldDef* def = dict_->field(tag)) {
      out.put(" (");
      out.put(def->name);
      out.put(")");
    }
  }
  if (detail != nullptr) {
    out.put(", ");
    out.put(detail);
  }
  *out.p = '\0';
  r.text = text_;
  return r;
}

bool Validator::check_field(const FieldIndex& ix, std::uint32_t pos, const FieldDef& def,
                            ValidationResult& r) noexcept {
  if (!options_.check_values) return true;
  const std::string_view v = ix.value_at(pos);
  if (!value_has_format(def.type, v)) {
    fail(r, RejectReason::incorrect_data_format, def.tag, pos, to_string(def.type));
    return false;
  }
  if (!def.has_enums()) return true;
  if (is_multiple_value(def.type)) {
    std::size_t start = 0;
    while (start <= v.size()) {
      std::size_t sp = v.find(' ', start);
      if (sp == std::string_view::npos) sp = v.size();
      if (!def.allows(v.substr(start, sp - start))) {
        fail(r, RejectReason::value_incorrect, def.tag, pos, "an item is not one of the field's values");
        return false;
      }
      start = sp + 1;
    }
    return true;
  }
  if (!def.allows(v)) {
    fail(r, RejectReason::value_incorrect, def.tag, pos, "not one of the field's values");
    return false;
  }
  return true;
}

bool Validator::missing_required(const FieldSet& set, std::uint32_t stamp, std::uint32_t pos, const char* where,
                                 ValidationResult& r) noexcept {
  const auto members = set.members();
  for (const std::uint32_t m : set.required()) {
    if (seen_[members[m].field_id] != stamp) {
      fail(r, RejectReason::required_tag_missing, members[m].tag, pos, where);
      return true;
    }
  }
  return false;
}

bool Validator::walk_group(const FieldIndex& ix, std::uint32_t count_pos, const GroupDef& g, std::uint32_t& next,
                           ValidationResult& r) noexcept {
  const std::uint32_t n = ix.size();
  std::uint64_t declared = 0;
  if (!parse_uint(ix.value_at(count_pos), declared)) {
    fail(r, RejectReason::incorrect_data_format, g.count_tag(), count_pos, "NumInGroup must be a count");
    return false;
  }
  const FieldSet& set = g.fields();
  const auto members = set.members();
  std::uint64_t entries = 0;
  std::uint32_t entry_stamp = 0;
  std::uint32_t entry_start = 0;
  std::int32_t last_member = -1;
  std::uint32_t bad_value = 0;  // position + 1 of the first value that failed its check
  std::uint32_t j = count_pos + 1;
  while (j < n) {
    const FieldRef& f = ix[j];
    const std::int32_t m = set.find(f.tag);
    if (m < 0) break;  // the first non-member ends the group
    if (f.tag == g.delimiter()) {
      if (entries != 0 && missing_required(set, entry_stamp, entry_start, "inside a repeating group entry", r))
        return false;
      ++entries;
      entry_stamp = next_stamp();
      entry_start = j;
      last_member = 0;
    } else if (entries == 0) {
      fail(r, RejectReason::repeating_group_fields_out_of_order, g.delimiter(), j,
           "the first field of a repeating group entry must be its delimiter");
      return false;
    } else {
      if (options_.check_fields_out_of_order && m < last_member) {
        fail(r, RejectReason::repeating_group_fields_out_of_order, f.tag, j,
             "field out of the group's order within an entry");
        return false;
      }
      last_member = m;
    }
    const Member& member = members[static_cast<std::uint32_t>(m)];
    const FieldDef& def = *dict_->field(f.tag);
    if (f.length == 0 && options_.check_fields_have_values) {
      fail(r, RejectReason::tag_specified_without_value, f.tag, j, nullptr);
      return false;
    }
    if (seen_[def.id] == entry_stamp) {
      fail(r, RejectReason::tag_appears_more_than_once, f.tag, j, "twice in one repeating group entry");
      return false;
    }
    seen_[def.id] = entry_stamp;
    // A bad value is reported after the count: the count is checked first.
    if (bad_value == 0 && !def.free_text && f.length != 0 && !check_field(ix, j, def, r)) bad_value = j + 1;
    if (member.group != nullptr) {
      if (!walk_group(ix, j, *member.group, j, r)) return false;
    } else {
      ++j;
    }
  }
  if (entries != 0 && missing_required(set, entry_stamp, entry_start, "inside a repeating group entry", r))
    return false;
  if (entries != declared) {
    fail(r, RejectReason::incorrect_num_in_group_count, g.count_tag(), count_pos,
         entries < declared ? "fewer entries than the count" : "more entries than the count");
    return false;
  }
  if (bad_value != 0) {  // its text again: later checks wrote over it
    check_field(ix, bad_value - 1, *dict_->field(ix[bad_value - 1].tag), r);
    return false;
  }
  next = j;
  return true;
}

ValidationResult Validator::validate(const FieldIndex& ix, const Header& header) noexcept {
  return run(ix, header.msg_type);
}

ValidationResult Validator::validate(const FieldIndex& ix) noexcept {
  return run(ix, ix.size() > 2 && ix[2].tag == tag::MsgType ? ix.value_at(2) : std::string_view{});
}

ValidationResult Validator::run(const FieldIndex& ix, std::string_view msg_type) noexcept {
  ValidationResult r;
  const std::uint32_t n = ix.size();
  r.position = n;
  if (n < 4 || ix[0].tag != tag::BeginString)
    return fail(r, RejectReason::tag_out_of_order, tag::BeginString, 0, "BeginString must be the first field");
  if (ix[1].tag != tag::BodyLength)
    return fail(r, RejectReason::tag_out_of_order, tag::BodyLength, 1, "BodyLength must be the second field");
  if (ix[2].tag != tag::MsgType)
    return fail(r, RejectReason::tag_out_of_order, tag::MsgType, 2, "MsgType must be the third field");
  if (ix[n - 1].tag != tag::CheckSum)
    return fail(r, RejectReason::tag_out_of_order, tag::CheckSum, n - 1, "CheckSum must be the last field");
  const MessageDef* msg = dict_->message(msg_type);
  if (msg == nullptr) return fail(r, RejectReason::invalid_msg_type, tag::MsgType, 2, "MsgType not in the dictionary");

  enum class Section : std::uint8_t { header, body, trailer };
  Section state = Section::header;
  const FieldSet& header = dict_->header();
  const FieldSet& trailer = dict_->trailer();
  const FieldSet& body = msg->body;
  const bool check_order = options_.check_fields_out_of_order;
  const std::uint32_t stamp = next_stamp();

  for (std::uint32_t i = 0; i < n;) {
    const FieldRef& f = ix[i];
    const FieldDef* def = dict_->field(f.tag);
    if (def == nullptr) {
      if (options_.allow_unknown_fields || (options_.allow_user_defined_fields && f.tag >= kUserDefinedMin)) {
        ++i;
        continue;
      }
      return fail(r, RejectReason::invalid_tag_number, f.tag, i, nullptr);
    }
    if (f.length == 0 && options_.check_fields_have_values)
      return fail(r, RejectReason::tag_specified_without_value, f.tag, i, nullptr);

    const FieldSet* set;
    std::int32_t m;
    if (def->in_header && state == Section::header) {
      set = &header;
      m = header.find(f.tag);
    } else if ((m = body.find(f.tag)) >= 0) {
      if (state == Section::trailer && check_order)
        return fail(r, RejectReason::tag_out_of_order, f.tag, i, "body field after the trailer began");
      set = &body;
      state = Section::body;
    } else if (def->in_trailer) {
      set = &trailer;
      m = trailer.find(f.tag);
      state = Section::trailer;
    } else if (def->in_header) {
      if (check_order) return fail(r, RejectReason::tag_out_of_order, f.tag, i, "header field after the body began");
      set = &header;
      m = header.find(f.tag);
    } else {
      if (options_.allow_unknown_fields || (options_.allow_user_defined_fields && f.tag >= kUserDefinedMin)) {
        ++i;
        continue;
      }
      return fail(r, RejectReason::tag_not_defined_for_message_type, f.tag, i, nullptr);
    }

    if (seen_[def->id] == stamp) return fail(r, RejectReason::tag_appears_more_than_once, f.tag, i, nullptr);
    seen_[def->id] = stamp;
    // MsgType was checked by the message lookup above; an empty value let
    // through has no format to check.
    if (!def->free_text && i != 2 && f.length != 0 && !check_field(ix, i, *def, r)) return r;
    const Member& member = set->members()[static_cast<std::uint32_t>(m)];
    if (member.group != nullptr) {
      if (!walk_group(ix, i, *member.group, i, r)) return r;
    } else {
      ++i;
    }
  }
  if (missing_required(header, stamp, n, "in the header", r)) return r;
  if (missing_required(body, stamp, n, nullptr, r)) return r;
  if (missing_required(trailer, stamp, n, "in the trailer", r)) return r;
  return r;
}

}  // namespace kite::codec
