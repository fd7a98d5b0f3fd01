// The FIX data dictionary: fields, enums, messages, header, trailer and
// repeating groups, loaded from QuickFIX-layout XML (FIX42.xml, FIX44.xml,
// FIXT11.xml + FIX50SP2.xml).
//
// Loading is set-up work: it parses XML, resolves every <component> reference
// recursively and flattens each message, header, trailer and group into a
// FieldSet. After loading, a Dictionary is immutable and every lookup used by
// validation and group iteration is O(1) and allocation free:
//   field(tag)            dense array up to the highest tag (fallback search
//                         for custom tags above kDenseTagLimit);
//   message(msg_type)     open-addressed table keyed on the packed MsgType;
//   FieldSet::find(tag)   open-addressed table per message, group, header.
// A Dictionary is shared read-only by any number of threads and sessions.
//
// Views (names, enum values, descriptions, spans) point into the Dictionary
// and live as long as it does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kite::codec {

// The FIX data types a dictionary names. `unknown` is never stored.
enum class FieldType : std::uint8_t {
  unknown,
  // integers
  integer,
  length,
  seqnum,
  numingroup,
  tagnum,
  dayofmonth,
  // decimals (fixed point)
  floating,
  qty,
  price,
  priceoffset,
  amt,
  percentage,
  // single characters and booleans
  character,
  boolean,
  // strings
  string,
  multiplevaluestring,
  multiplecharvalue,
  multiplestringvalue,
  country,
  currency,
  exchange,
  language,
  xid,
  xidref,
  // dates and times
  monthyear,
  utctimestamp,
  utctimeonly,
  utcdateonly,
  utcdate,
  localmktdate,
  localmkttime,
  tztimeonly,
  tztimestamp,
  // raw data (may contain SOH, governed by a length field)
  data,
  xmldata,
};

// The dictionary's spelling ("INT", "UTCTIMESTAMP", ...).
const char* to_string(FieldType t) noexcept;
// Parses a dictionary type name (also the legacy "DATE", "TIME" and
// "NUMINGROUP"-less spellings older dictionaries use); unknown when not a type.
FieldType field_type_from_name(std::string_view name) noexcept;

// True for the types whose values are space-separated lists of items.
constexpr bool is_multiple_value(FieldType t) noexcept {
  return t == FieldType::multiplevaluestring || t == FieldType::multiplecharvalue ||
         t == FieldType::multiplestringvalue;
}

struct EnumValue {
  std::string_view value;
  std::string_view description;
};

struct FieldDef {
  std::uint32_t tag = 0;
  std::uint32_t id = 0;  // dense 0..field_count()-1, for per-field scratch tables
  FieldType type = FieldType::unknown;
  bool in_header = false;   // member of the standard header
  bool in_trailer = false;  // member of the standard trailer
  bool free_text = false;   // any non-empty value is valid: no format rule, no enums
  std::string_view name;
  std::span<const EnumValue> enums;  // sorted by value; empty when any value is allowed
  // When every enum value is one character: bit c set for each allowed c.
  const std::uint64_t* char_set = nullptr;

  bool has_enums() const noexcept { return !enums.empty(); }
  // Whether v is one of the enum values (always true when there are none).
  bool allows(std::string_view v) const noexcept {
    if (char_set != nullptr) {
      if (v.size() != 1) return false;
      const auto c = static_cast<unsigned char>(v[0]);
      return ((char_set[c >> 6] >> (c & 63)) & 1u) != 0;
    }
    return enums.empty() || find_enum(v) != nullptr;
  }
  // The enum entry for v, or nullptr.
  const EnumValue* find_enum(std::string_view v) const noexcept;
};

class GroupDef;

// One field of a FieldSet in dictionary order. `group` is set when the field
// is a NumInGroup count that opens a repeating group.
struct Member {
  std::uint32_t tag = 0;
  std::uint32_t field_id = 0;
  bool required = false;
  const GroupDef* group = nullptr;
};

// The flattened fields of a message body, the header, the trailer or one
// entry of a repeating group, components resolved.
class FieldSet {
 public:
  std::span<const Member> members() const noexcept { return members_; }
  // Positions in members() of the required ones.
  std::span<const std::uint32_t> required() const noexcept { return required_; }

  // Position in members() of the field with this tag, or -1. O(1).
  std::int32_t find(std::uint32_t tag) const noexcept {
    if (mask_ == 0) return -1;
    std::uint32_t h = (tag * 0x9E3779B1u) >> 16;
    for (;;) {
      const Slot s = slots_[h & mask_];
      if (s.tag == tag) return static_cast<std::int32_t>(s.member);
      if (s.tag == 0) return -1;
      ++h;
    }
  }
  bool contains(std::uint32_t tag) const noexcept { return find(tag) >= 0; }
  // The group opened by this count tag, or nullptr.
  const GroupDef* group(std::uint32_t count_tag) const noexcept {
    const std::int32_t m = find(count_tag);
    return m < 0 ? nullptr : members_[static_cast<std::uint32_t>(m)].group;
  }

 private:
  friend class DictionaryBuilder;
  struct Slot {
    std::uint32_t tag = 0;  // 0: empty
    std::uint32_t member = 0;
  };
  void add(const Member& m);  // set-up only; ignores a tag already present
  void seal();                // builds the lookup table

  std::vector<Member> members_;
  std::vector<std::uint32_t> required_;
  std::vector<Slot> slots_;
  std::uint32_t mask_ = 0;
};

// A repeating group: its NumInGroup count tag, the delimiter (first field of
// every entry) and the layout of one entry (nested groups included).
class GroupDef {
 public:
  std::uint32_t count_tag() const noexcept { return count_tag_; }
  std::uint32_t delimiter() const noexcept { return delimiter_; }
  std::string_view name() const noexcept { return name_; }
  const FieldSet& fields() const noexcept { return fields_; }
  // A nested group of an entry, by its count tag; nullptr when none.
  const GroupDef* group(std::uint32_t count_tag) const noexcept { return fields_.group(count_tag); }

 private:
  friend class DictionaryBuilder;
  std::uint32_t count_tag_ = 0;
  std::uint32_t delimiter_ = 0;
  std::string_view name_;
  FieldSet fields_;
};

struct MessageDef {
  std::string_view msg_type;
  std::string_view name;
  bool admin = false;  // msgcat='admin'
  FieldSet body;
};

class Dictionary;

struct DictionaryLoad {
  std::shared_ptr<const Dictionary> dictionary;
  std::string error;  // on failure: names the file and what is wrong
  explicit operator bool() const noexcept { return dictionary != nullptr; }
};

class Dictionary {
 public:
  static constexpr std::uint32_t kDenseTagLimit = 65536;  // tags below: array lookup

  // One self-contained dictionary (FIX42.xml, FIX44.xml, ...).
  static DictionaryLoad load(const std::string& path);
  // A FIXT.1.1 session: header, trailer and admin messages from the
  // transport dictionary (FIXT11.xml), application messages from the
  // application dictionary (FIX50SP2.xml). Fields are the union of both.
  static DictionaryLoad load(const std::string& transport_path, const std::string& app_path);
  // The dictionary for a BeginString, from a folder holding the standard
  // files: FIX.4.2 -> FIX42.xml, FIX.4.4 -> FIX44.xml, FIXT.1.1 -> FIXT11.xml
  // + FIX50SP2.xml; also FIX.4.0/4.1/4.3/5.0 by the same naming rule.
  static DictionaryLoad load_for(const std::string& dir, std::string_view begin_string);

  Dictionary(const Dictionary&) = delete;
  Dictionary& operator=(const Dictionary&) = delete;
  ~Dictionary();

  // "FIX.4.4", "FIXT.1.1", ...
  std::string_view begin_string() const noexcept { return begin_string_; }
  // The application version of a FIXT dictionary ("FIX.5.0SP2"); else begin_string().
  std::string_view app_version() const noexcept { return app_version_; }

  const FieldDef* field(std::uint32_t tag) const noexcept {
    if (tag < dense_.size()) {
      const std::uint32_t id = dense_[tag];
      return id == 0 ? nullptr : &fields_[id - 1];
    }
    return field_sparse(tag);
  }
  std::uint32_t field_count() const noexcept { return static_cast<std::uint32_t>(fields_.size()); }
  std::span<const FieldDef> fields() const noexcept { return fields_; }
  // Set-up helper (linear in the number of fields).
  const FieldDef* field_by_name(std::string_view name) const noexcept;

  const MessageDef* message(std::string_view msg_type) const noexcept;
  std::span<const MessageDef> messages() const noexcept { return messages_; }
  const FieldSet& header() const noexcept { return header_; }
  const FieldSet& trailer() const noexcept { return trailer_; }

  // The layout of a top-level group of a message (body, else header or
  // trailer), by MsgType and NumInGroup tag; nullptr when there is none.
  const GroupDef* group(std::string_view msg_type, std::uint32_t count_tag) const noexcept;

  // Every (LENGTH field, DATA field it governs) pair the dictionary defines,
  // sorted by length tag: matched by name ("EncodedTextLen" -> "EncodedText",
  // "SignatureLength" -> "Signature"). For an index that must know which
  // values may contain SOH.
  struct DataPair {
    std::uint32_t length_tag;
    std::uint32_t data_tag;
  };
  std::span<const DataPair> data_pairs() const noexcept { return data_pairs_; }

 private:
  friend class DictionaryBuilder;
  Dictionary() = default;
  const FieldDef* field_sparse(std::uint32_t tag) const noexcept;

  struct MsgSlot {
    std::uint64_t key = 0;  // packed MsgType (up to 8 bytes); 0: empty
    std::uint32_t index = 0;
  };

  std::string begin_string_;
  std::string app_version_;
  std::vector<FieldDef> fields_;
  std::vector<std::uint32_t> dense_;                             // tag -> id + 1
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sparse_;  // (tag, id), sorted
  std::vector<MessageDef> messages_;
  std::vector<MsgSlot> msg_slots_;
  std::uint32_t msg_mask_ = 0;
  FieldSet header_;
  FieldSet trailer_;
  std::deque<GroupDef> groups_;  // stable addresses for Member::group
  std::vector<EnumValue> enums_;
  std::vector<std::uint64_t> char_sets_;
  std::vector<DataPair> data_pairs_;
  std::deque<std::string> strings_;  // storage behind every string_view
};

}  // namespace kite::codec
