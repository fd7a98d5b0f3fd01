// validate() and group iteration allocate nothing: this binary replaces the
// global operator new/delete with counting versions.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/group.hpp"
#include "kite/codec/header.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace kite::codec {
namespace {

using testing::fix_message;

std::string dict_dir() { return util::dictionary_dir(); }

const std::string kHdr = "49=CLIENT|56=KITE|34=7|52=20240315-09:30:00.123|";

std::vector<std::string> messages() {
  const std::string nos = "35=D|" + kHdr + "11=ORD1|453=2|448=BRKR|447=D|452=1|802=1|523=D1|803=4|448=C|447=D|452=3|";
  return {
      fix_message("FIX.4.4", nos + "55=MSFT|54=1|60=20240315-09:30:00|38=1500|40=2|44=101.25|"),         // valid
      fix_message("FIX.4.4", nos + "55=MSFT|54=Z|60=20240315-09:30:00|38=1500|40=2|"),                   // 5
      fix_message("FIX.4.4", nos + "55=MSFT|54=1|60=2024031|38=1500|40=2|"),                             // 6
      fix_message("FIX.4.4", "35=D|" + kHdr + "453=3|448=A|55=X|54=1|60=20240315-09:30:00|40=1|11=O|"),  // 16
      fix_message("FIX.4.4", "35=D|" + kHdr + "55=X|54=1|60=20240315-09:30:00|40=1|"),                   // 1
      fix_message("FIX.4.4", "35=ZZ|" + kHdr),                                                           // 11
      fix_message("FIX.4.4", "35=0|" + kHdr + "4999=1|"),                                                // 3
  };
}

TEST(ValidateAllocTest, theCounterSeesAllocations) {
  const std::uint64_t before = kite::test::allocations();
  auto* s = new std::string(100, 'x');
  delete s;
  EXPECT_GT(kite::test::allocations(), before);
}

TEST(ValidateAllocTest, validateAllocatesNothingValidOrNot) {
  const DictionaryLoad d = Dictionary::load(dict_dir() + "/FIX44.xml");
  ASSERT_TRUE(d) << d.error;
  Validator v(*d.dictionary);
  FieldIndex ix;
  const std::vector<std::string> msgs = messages();
  std::uint64_t ok = 0, rejected = 0, text_bytes = 0;

  const std::uint64_t before = kite::test::allocations();
  for (int round = 0; round < 200; ++round) {
    for (const std::string& m : msgs) {
      const FrameResult fr = frame(m);
      if (fr.status != FrameStatus::complete || !ix.build(m)) continue;
      Header h;
      if (!read_header(ix, h)) continue;
      const ValidationResult r = v.validate(ix, h);
      (r.ok ? ok : rejected) += 1;
      text_bytes += std::char_traits<char>::length(r.text);
    }
  }
  const std::uint64_t allocs = kite::test::allocations() - before;
  EXPECT_EQ(allocs, 0u);
  EXPECT_EQ(ok, 200u);
  EXPECT_EQ(rejected, 200u * (msgs.size() - 1));
  EXPECT_GT(text_bytes, 0u);
}

TEST(ValidateAllocTest, groupIterationAllocatesNothing) {
  const DictionaryLoad d = Dictionary::load(dict_dir() + "/FIX44.xml");
  ASSERT_TRUE(d) << d.error;
  const std::string m = messages().front();
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  const GroupDef* parties = d.dictionary->group("D", tag::NoPartyIDs);
  ASSERT_NE(parties, nullptr);
  std::uint64_t fields = 0;

  const std::uint64_t before = kite::test::allocations();
  for (int round = 0; round < 1000; ++round) {
    for (const GroupEntry e : GroupView::at(ix, tag::NoPartyIDs, parties)) {
      std::string_view id;
      if (e.get(tag::PartyID, id) == Get::ok) fields += id.size();
      for (const GroupEntry s : e.group(802)) fields += s.end() - s.begin();
    }
  }
  EXPECT_EQ(kite::test::allocations() - before, 0u);
  EXPECT_EQ(fields, 1000u * (4 + 1 + 2));
}

}  // namespace
}  // namespace kite::codec
