// Repeating groups over a field index, with their layout from the dictionary.
//
// A GroupView starts at the position of a NumInGroup field. Each entry is a
// range [begin, end) of index positions: it starts at the group's delimiter
// and runs while fields are members of the group (nested groups are skipped
// over as a whole and can be opened from the entry). The group ends at the
// first field that is not a member, or at the next field after the last
// entry. Iteration reads the index and the dictionary's O(1) tables only: no
// allocation, no copies, nothing validated (run the Validator for that; on an
// unvalidated message the view reports what is there, which may differ from
// the declared count).
//
//   const GroupDef* parties = dict.group("D", tag::NoPartyIDs);
//   for (GroupEntry e : GroupView::at(ix, tag::NoPartyIDs, parties)) {
//     std::string_view id;
//     e.get(tag::PartyID, id);
//   }
#pragma once

#include <cstdint>
#include <string_view>

#include "kite/codec/dictionary.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/values.hpp"

namespace kite::codec {

namespace detail {
// The position after the entry that starts at `begin` (a delimiter).
std::uint32_t group_entry_end(const FieldIndex& ix, std::uint32_t begin, const GroupDef& g) noexcept;
// The position after the whole group whose count field is at `count_pos`.
std::uint32_t group_end(const FieldIndex& ix, std::uint32_t count_pos, const GroupDef& g) noexcept;
}  // namespace detail

class GroupView;

class GroupEntry {
 public:
  GroupEntry(const FieldIndex& ix, const GroupDef& g, std::uint32_t begin, std::uint32_t end) noexcept
      : ix_(&ix), def_(&g), begin_(begin), end_(end) {}

  std::uint32_t begin() const noexcept { return begin_; }  // index position of the delimiter
  std::uint32_t end() const noexcept { return end_; }      // one past the entry's last field
  const GroupDef& def() const noexcept { return *def_; }

  // Position of the first field with this tag inside the entry, or -1.
  std::int32_t find_pos(std::uint32_t tag) const noexcept {
    for (std::uint32_t i = begin_; i < end_; ++i)
      if ((*ix_)[i].tag == tag) return static_cast<std::int32_t>(i);
    return -1;
  }
  const FieldRef* find(std::uint32_t tag) const noexcept {
    const std::int32_t i = find_pos(tag);
    return i < 0 ? nullptr : &(*ix_)[static_cast<std::uint32_t>(i)];
  }
  bool has(std::uint32_t tag) const noexcept { return find_pos(tag) >= 0; }

  // Typed reads of a field of the entry, as FieldIndex::get.
  Get get(std::uint32_t tag, std::string_view& out) const noexcept {
    const FieldRef* f = find(tag);
    if (f == nullptr) return Get::missing;
    out = ix_->value(*f);
    return Get::ok;
  }
  Get get(std::uint32_t tag, std::uint64_t& out) const noexcept { return get_as<std::uint64_t, parse_uint>(tag, out); }
  Get get(std::uint32_t tag, std::int64_t& out) const noexcept { return get_as<std::int64_t, parse_int>(tag, out); }
  Get get(std::uint32_t tag, Decimal& out) const noexcept { return get_as<Decimal, parse_decimal>(tag, out); }
  Get get(std::uint32_t tag, char& out) const noexcept { return get_as<char, parse_char>(tag, out); }
  Get get(std::uint32_t tag, bool& out) const noexcept { return get_as<bool, parse_bool>(tag, out); }

  // A nested group of this entry; an empty view when absent or not a group.
  inline GroupView group(std::uint32_t count_tag) const noexcept;

 private:
  template <class T, bool (*Parse)(std::string_view, T&) noexcept>
  Get get_as(std::uint32_t tag, T& out) const noexcept {
    const FieldRef* f = find(tag);
    if (f == nullptr) return Get::missing;
    return Parse(ix_->value(*f), out) ? Get::ok : Get::bad_format;
  }

  const FieldIndex* ix_;
  const GroupDef* def_;
  std::uint32_t begin_;
  std::uint32_t end_;
};

class GroupView {
 public:
  GroupView() noexcept = default;  // empty: no entries
  // The group whose NumInGroup field is at index position `count_pos`.
  GroupView(const FieldIndex& ix, std::uint32_t count_pos, const GroupDef& g) noexcept
      : ix_(&ix), def_(&g), count_pos_(count_pos) {}

  // The first occurrence of a top-level group in a message (count tag found
  // through the index); empty when the field or the layout is absent.
  static GroupView at(const FieldIndex& ix, std::uint32_t count_tag, const GroupDef* g) noexcept {
    const std::int32_t pos = ix.find_pos(count_tag);
    if (pos < 0 || g == nullptr) return {};
    return GroupView(ix, static_cast<std::uint32_t>(pos), *g);
  }

  bool empty() const noexcept { return def_ == nullptr || begin() == end(); }
  explicit operator bool() const noexcept { return def_ != nullptr; }
  const GroupDef* def() const noexcept { return def_; }
  std::uint32_t count_pos() const noexcept { return count_pos_; }

  // The NumInGroup value as sent; false when it is not a count.
  bool declared_count(std::uint64_t& out) const noexcept {
    return def_ != nullptr && parse_uint(ix_->value_at(count_pos_), out);
  }
  // Entries actually present (a walk).
  std::uint32_t size() const noexcept {
    std::uint32_t k = 0;
    for (auto it = begin(); it != end(); ++it) ++k;
    return k;
  }
  // Position of the first field after the group (count field included).
  std::uint32_t end_pos() const noexcept { return def_ == nullptr ? 0 : detail::group_end(*ix_, count_pos_, *def_); }

  class iterator {
   public:
    iterator() noexcept = default;
    GroupEntry operator*() const noexcept { return {*ix_, *def_, pos_, next_}; }
    iterator& operator++() noexcept {
      pos_ = next_;
      settle();
      return *this;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.pos_ == b.pos_; }
    friend bool operator!=(const iterator& a, const iterator& b) noexcept { return a.pos_ != b.pos_; }

   private:
    friend class GroupView;
    static constexpr std::uint32_t kEnd = 0xFFFFFFFFu;
    iterator(const FieldIndex* ix, const GroupDef* g, std::uint32_t pos) noexcept : ix_(ix), def_(g), pos_(pos) {
      settle();
    }
    void settle() noexcept {
      if (pos_ >= ix_->size() || (*ix_)[pos_].tag != def_->delimiter()) {
        pos_ = kEnd;
        return;
      }
      next_ = detail::group_entry_end(*ix_, pos_, *def_);
    }
    const FieldIndex* ix_ = nullptr;
    const GroupDef* def_ = nullptr;
    std::uint32_t pos_ = kEnd;
    std::uint32_t next_ = kEnd;
  };

  iterator begin() const noexcept { return def_ == nullptr ? iterator() : iterator(ix_, def_, count_pos_ + 1); }
  iterator end() const noexcept { return iterator(); }

 private:
  const FieldIndex* ix_ = nullptr;
  const GroupDef* def_ = nullptr;
  std::uint32_t count_pos_ = 0;
};

inline GroupView GroupEntry::group(std::uint32_t count_tag) const noexcept {
  const GroupDef* nested = def_->group(count_tag);
  const std::int32_t pos = find_pos(count_tag);
  if (nested == nullptr || pos < 0) return {};
  return GroupView(*ix_, static_cast<std::uint32_t>(pos), *nested);
}

}  // namespace kite::codec
