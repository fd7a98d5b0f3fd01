// Entry and group extents: mutual recursion bounded by the dictionary's
// nesting depth, one hash probe per field.
#include "kite/codec/group.hpp"

namespace kite::codec::detail {

std::uint32_t group_entry_end(const FieldIndex& ix, std::uint32_t begin, const GroupDef& g) noexcept {
  const FieldSet& set = g.fields();
  const auto members = set.members();
  const std::uint32_t n = ix.size();
  std::uint32_t j = begin + 1;
  while (j < n) {
    const std::uint32_t tag = ix[j].tag;
    if (tag == g.delimiter()) break;  // the next entry
    const std::int32_t m = set.find(tag);
    if (m < 0) break;  // the group is over
    const GroupDef* nested = members[static_cast<std::uint32_t>(m)].group;
    j = nested != nullptr ? group_end(ix, j, *nested) : j + 1;
  }
  return j;
}

std::uint32_t group_end(const FieldIndex& ix, std::uint32_t count_pos, const GroupDef& g) noexcept {
  const std::uint32_t n = ix.size();
  std::uint32_t j = count_pos + 1;
  while (j < n && ix[j].tag == g.delimiter()) j = group_entry_end(ix, j, g);
  return j;
}

}  // namespace kite::codec::detail
