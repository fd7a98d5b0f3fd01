// Repeating-group views: entries as index ranges, find inside an entry,
// nested groups, the group's end, and layouts looked up by MsgType.
#include "kite/codec/group.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/framer.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace kite::codec {
namespace {

using testing::fix_message;

const Dictionary& dict(const char* file) {
  static std::vector<std::pair<std::string, DictionaryLoad>> cache;
  for (auto& [name, d] : cache)
    if (name == file) return *d.dictionary;
  DictionaryLoad d = Dictionary::load(util::dictionary_dir() + "/" + file);
  if (!d) throw std::runtime_error(d.error);
  cache.emplace_back(file, std::move(d));
  return *cache.back().second.dictionary;
}

class GroupTest : public ::testing::Test {
 protected:
  void index(const std::string& m) {
    bytes_ = m;
    ASSERT_EQ(frame(bytes_).status, FrameStatus::complete);
    ASSERT_TRUE(ix_.build(bytes_));
  }
  std::string bytes_;
  FieldIndex ix_;
};

const std::string kParties = fix_message("FIX.4.4",
                                         "35=D|49=C|56=K|34=1|52=20240315-09:30:00|11=ORD1|"
                                         "453=3|448=BRKR|447=D|452=1|802=2|523=DESK1|803=4|523=TRADER7|803=9|"
                                         "448=CUST|447=D|452=3|"
                                         "448=EXCH|452=22|"
                                         "55=MSFT|54=1|60=20240315-09:30:00|38=100|40=2|");

TEST_F(GroupTest, iteratesEntriesAsIndexRanges) {
  index(kParties);
  const GroupDef* parties = dict("FIX44.xml").group("D", tag::NoPartyIDs);
  ASSERT_NE(parties, nullptr);
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, parties);
  ASSERT_TRUE(g);
  std::uint64_t declared = 0;
  ASSERT_TRUE(g.declared_count(declared));
  EXPECT_EQ(declared, 3u);
  EXPECT_EQ(g.size(), 3u);

  std::vector<std::string> ids;
  std::vector<std::uint32_t> lengths;
  for (const GroupEntry e : g) {
    std::string_view id;
    ASSERT_EQ(e.get(tag::PartyID, id), Get::ok);
    ids.emplace_back(id);
    lengths.push_back(e.end() - e.begin());
    EXPECT_EQ(ix_[e.begin()].tag, tag::PartyID);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"BRKR", "CUST", "EXCH"}));
  EXPECT_EQ(lengths, (std::vector<std::uint32_t>{8, 3, 2}));  // the first holds its nested group
}

TEST_F(GroupTest, findStaysInsideTheEntry) {
  index(kParties);
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, dict("FIX44.xml").group("D", tag::NoPartyIDs));
  auto it = g.begin();
  ++it;
  ++it;
  const GroupEntry third = *it;
  EXPECT_FALSE(third.has(tag::PartyIDSource));  // the other entries have 447; this one does not
  std::uint64_t role = 0;
  EXPECT_EQ(third.get(tag::PartyRole, role), Get::ok);
  EXPECT_EQ(role, 22u);
  char c = 0;
  EXPECT_EQ(third.get(tag::Symbol, c), Get::missing);  // a body field after the group
  ++it;
  EXPECT_EQ(it, g.end());
}

TEST_F(GroupTest, nestedGroupsOpenFromTheirEntry) {
  index(kParties);
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, dict("FIX44.xml").group("D", tag::NoPartyIDs));
  const GroupEntry first = *g.begin();
  const GroupView subs = first.group(802);
  ASSERT_TRUE(subs);
  std::vector<std::string> values;
  std::vector<std::uint64_t> types;
  for (const GroupEntry s : subs) {
    std::string_view v;
    std::uint64_t t = 0;
    EXPECT_EQ(s.get(523, v), Get::ok);
    EXPECT_EQ(s.get(803, t), Get::ok);
    values.emplace_back(v);
    types.push_back(t);
  }
  EXPECT_EQ(values, (std::vector<std::string>{"DESK1", "TRADER7"}));
  EXPECT_EQ(types, (std::vector<std::uint64_t>{4, 9}));
  EXPECT_FALSE((*++g.begin()).group(802));  // the second entry has none
  EXPECT_FALSE(first.group(tag::Symbol));   // not a group
}

TEST_F(GroupTest, endPosIsTheFieldAfterTheGroup) {
  index(kParties);
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, dict("FIX44.xml").group("D", tag::NoPartyIDs));
  ASSERT_LT(g.end_pos(), ix_.size());
  EXPECT_EQ(ix_[g.end_pos()].tag, tag::Symbol);
}

TEST_F(GroupTest, absentGroupIsEmpty) {
  index(fix_message("FIX.4.4", "35=D|49=C|56=K|34=1|52=20240315-09:30:00|11=O|55=X|54=1|60=20240315-09:30:00|40=1|"));
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, dict("FIX44.xml").group("D", tag::NoPartyIDs));
  EXPECT_FALSE(g);
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.size(), 0u);
  int n = 0;
  for (const GroupEntry e : g) n += static_cast<int>(e.begin() + 1);
  EXPECT_EQ(n, 0);
  EXPECT_FALSE(GroupView::at(ix_, tag::NoPartyIDs, nullptr));
}

TEST_F(GroupTest, zeroCountGroupHasNoEntries) {
  index(fix_message("FIX.4.4",
                    "35=D|49=C|56=K|34=1|52=20240315-09:30:00|11=O|453=0|55=X|54=1|60=20240315-09:30:00|40=1|"));
  const GroupView g = GroupView::at(ix_, tag::NoPartyIDs, dict("FIX44.xml").group("D", tag::NoPartyIDs));
  ASSERT_TRUE(g);
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.end_pos(), g.count_pos() + 1);
}

TEST_F(GroupTest, fix42ListOrdersWithNestedAllocations) {
  index(fix_message("FIX.4.2",
                    "35=E|49=C|56=K|34=3|52=20240315-09:30:00|66=L1|394=3|68=2|"
                    "73=2|11=C1|67=1|78=2|79=A1|80=5|79=A2|80=7|55=IBM|54=1|38=12|40=1|"
                    "11=C2|67=2|55=MSFT|54=2|38=20|40=1|"));
  const GroupDef* orders = dict("FIX42.xml").group("E", 73);
  ASSERT_NE(orders, nullptr);
  const GroupView g = GroupView::at(ix_, 73, orders);
  ASSERT_EQ(g.size(), 2u);
  const GroupEntry first = *g.begin();
  std::string_view sym;
  EXPECT_EQ(first.get(tag::Symbol, sym), Get::ok);  // after the nested group: still the entry's
  EXPECT_EQ(sym, "IBM");
  Decimal total{};
  std::uint64_t allocs = 0;
  for (const GroupEntry a : first.group(78)) {
    Decimal q;
    ASSERT_EQ(a.get(80, q), Get::ok);
    total.mantissa += q.mantissa;
    ++allocs;
  }
  EXPECT_EQ(allocs, 2u);
  EXPECT_EQ(total.mantissa, 12);
  EXPECT_EQ(g.end_pos(), ix_.size() - 1);  // only CheckSum follows
}

TEST_F(GroupTest, headerGroupLayoutIsFoundByMsgType) {
  const Dictionary& d = dict("FIX44.xml");
  const GroupDef* hops = d.group("0", 627);
  ASSERT_NE(hops, nullptr);
  EXPECT_EQ(hops->delimiter(), 628u);
  index(fix_message("FIX.4.4", "35=0|49=C|56=K|34=1|52=20240315-09:30:00|627=2|628=H1|628=H2|629=20240315-09:30:00|"));
  const GroupView g = GroupView::at(ix_, 627, hops);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE((*++g.begin()).has(629));
}

}  // namespace
}  // namespace kite::codec
