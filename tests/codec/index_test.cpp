#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"

namespace kite::codec {
namespace {

using testing::fix_message;
using testing::new_order_single_44;
using testing::soh;

TEST(FieldIndexTest, indexesEveryFieldWithTagOffsetAndLength) {
  const std::string m = new_order_single_44(7);
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  // Rebuild the message from the index: every byte is accounted for.
  std::string again;
  for (const FieldRef& f : ix) {
    again += std::to_string(f.tag) + "=" + std::string(ix.value(f)) + kSoh;
    EXPECT_EQ(m[f.offset - 1], '=');
    EXPECT_EQ(m[f.offset + f.length], kSoh);
  }
  EXPECT_EQ(again, m);
  EXPECT_EQ(ix[0].tag, tag::BeginString);
  EXPECT_EQ(ix[ix.size() - 1].tag, tag::CheckSum);
  EXPECT_EQ(ix.size(), 19u);
}

TEST(FieldIndexTest, typedReadsReturnValuesMissingAndBadFormat) {
  const std::string m = new_order_single_44(7);
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  std::string_view s;
  ASSERT_EQ(ix.get(tag::ClOrdID, s), Get::ok);
  EXPECT_EQ(s, "ORD-000000123456");
  Decimal px;
  ASSERT_EQ(ix.get(tag::Price, px), Get::ok);
  EXPECT_EQ(px, (Decimal{10125, -2}));
  std::uint64_t qty = 0;
  ASSERT_EQ(ix.get(tag::OrderQty, qty), Get::ok);
  EXPECT_EQ(qty, 1500u);
  char side = 0;
  ASSERT_EQ(ix.get(tag::Side, side), Get::ok);
  EXPECT_EQ(side, '1');
  std::int64_t t = 0;
  ASSERT_EQ(ix.get_timestamp(tag::TransactTime, t), Get::ok);
  EXPECT_EQ(t % 1'000'000'000, 123'456'000);
  EXPECT_EQ(ix.get(tag::Text, s), Get::missing);
  EXPECT_EQ(ix.get(tag::Symbol, qty), Get::bad_format);
  bool b;
  EXPECT_EQ(ix.get(tag::Side, b), Get::bad_format);
}

// Values the word parsers do not take go to the general parse, which
// writes the caller's variable only when the value parses.
TEST(FieldIndexTest, readsByTheGeneralParseSetTheirOutputOnlyWhenTheValueParses) {
  const std::string m = fix_message("FIX.4.4",
                                    "35=D|34=2|49=A|52=20240315-09:30:00|56=B|38=1234567.891|44=12.5X|"
                                    "60=2024031509:30:00|126=21000101-00:00:00|");
  FieldIndex ix;
  ASSERT_TRUE(ix.frame_and_build(m.data(), m.size()).index);
  Decimal d{7, 0};
  ASSERT_EQ(ix.get(tag::OrderQty, d), Get::ok);  // 11 bytes: past the word parse
  EXPECT_EQ(d, (Decimal{1234567891, -3}));
  d = Decimal{7, 0};
  EXPECT_EQ(ix.get(tag::Price, d), Get::bad_format);
  EXPECT_EQ(d, (Decimal{7, 0}));
  std::uint64_t u = 9;
  EXPECT_EQ(ix.get(tag::Price, u), Get::bad_format);
  EXPECT_EQ(u, 9u);
  std::int64_t t = 5;
  EXPECT_EQ(ix.get_timestamp(tag::TransactTime, t), Get::bad_format);
  EXPECT_EQ(t, 5);
  ASSERT_EQ(ix.get_timestamp(126, t), Get::ok);  // ExpireTime in 2100: past the word parse's years
  EXPECT_EQ(t, 4'102'444'800 * std::int64_t{1'000'000'000});
}

TEST(FieldIndexTest, aMovedIndexKeepsItsFieldsAndTheSourceIsEmpty) {
  const std::string m = new_order_single_44(7);
  FieldIndex ix(64);
  ASSERT_TRUE(ix.frame_and_build(m.data(), m.size()).index);
  const std::uint32_t fields = ix.size();
  FieldIndex moved(std::move(ix));
  EXPECT_EQ(moved.size(), fields);
  EXPECT_EQ(moved.capacity(), 64u);
  std::string_view s;
  ASSERT_EQ(moved.get(tag::ClOrdID, s), Get::ok);
  EXPECT_EQ(s, "ORD-000000123456");
  EXPECT_EQ(ix.size(), 0u);      // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(ix.capacity(), 0u);  // NOLINT(bugprone-use-after-move)
  FieldIndex other(8);
  other = std::move(moved);
  EXPECT_EQ(other.capacity(), 64u);
  ASSERT_TRUE(other.frame_and_build(m.data(), m.size()).index);  // and it indexes again
  EXPECT_EQ(other.size(), fields);
  ASSERT_EQ(other.get(tag::ClOrdID, s), Get::ok);
  EXPECT_EQ(s, "ORD-000000123456");
}

TEST(FieldIndexTest, findsTheFirstOfRepeatedTagsAndLaterOnesFromAPosition) {
  const std::string m = fix_message("FIX.4.4", "35=D|453=2|448=A|452=1|448=B|452=3|");
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  const std::int32_t first = ix.find_pos(tag::PartyID);
  ASSERT_GE(first, 0);
  EXPECT_EQ(ix.value_at(static_cast<std::uint32_t>(first)), "A");
  const std::int32_t second = ix.find_pos_from(tag::PartyID, static_cast<std::uint32_t>(first) + 1);
  ASSERT_GT(second, first);
  EXPECT_EQ(ix.value_at(static_cast<std::uint32_t>(second)), "B");
  EXPECT_EQ(ix.find_pos_from(tag::PartyID, static_cast<std::uint32_t>(second) + 1), -1);
}

TEST(FieldIndexTest, findsTagsBeyondTheDirectTable) {
  const std::string m = fix_message("FIX.4.4", "35=D|9999=x|123456789=y|2047=z|2048=w|");
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  std::string_view s;
  ASSERT_EQ(ix.get(9999, s), Get::ok);
  EXPECT_EQ(s, "x");
  ASSERT_EQ(ix.get(123456789, s), Get::ok);
  EXPECT_EQ(s, "y");
  ASSERT_EQ(ix.get(2047, s), Get::ok);
  EXPECT_EQ(s, "z");
  ASSERT_EQ(ix.get(2048, s), Get::ok);
  EXPECT_EQ(s, "w");
  EXPECT_FALSE(ix.has(2049));
}

TEST(FieldIndexTest, aRebuildForgetsThePreviousMessagesTags) {
  FieldIndex ix;
  const std::string a = fix_message("FIX.4.4", "35=D|58=old|");
  const std::string b = fix_message("FIX.4.4", "35=0|");
  for (int i = 0; i < 70000; ++i) {  // past the 16-bit generation's wrap
    ASSERT_TRUE(ix.build(i % 2 ? b : a));
    ASSERT_EQ(ix.has(tag::Text), i % 2 == 0) << "build " << i;
  }
}

TEST(FieldIndexTest, aFreshIndexAndAnIncompleteFrameFindNothing) {
  FieldIndex ix;
  EXPECT_EQ(ix.size(), 0u);
  EXPECT_EQ(ix.find_pos(tag::MsgType), -1);
  std::string_view v;
  EXPECT_EQ(ix.get(tag::BeginString, v), Get::missing);
  // frame_and_build on a message cut short leaves an empty index behind,
  // whatever the one before held.
  const std::string m = new_order_single_44(3);
  ASSERT_TRUE(ix.frame_and_build(m.data(), m.size()).index);
  ASSERT_TRUE(ix.has(tag::MsgType));
  EXPECT_EQ(ix.frame_and_build(m.data(), m.size() - 1).frame.status, FrameStatus::incomplete);
  EXPECT_EQ(ix.size(), 0u);
  EXPECT_FALSE(ix.has(tag::MsgType));
}

TEST(FieldIndexTest, rejectsBadTags) {
  FieldIndex ix;
  for (const char* bad : {"=x|", "0=x|", "01=x|", "1a=x|", "1234567890=x|", "-1=x|", " 1=x|"}) {
    const std::string s = soh(std::string("8=FIX.4.4|") + bad);
    const IndexResult r = ix.build(s);
    EXPECT_EQ(r.error, IndexError::bad_tag) << bad;
    EXPECT_EQ(r.offset, 10u) << bad;
  }
  EXPECT_TRUE(ix.build(soh("123456789=x|")));
}

TEST(FieldIndexTest, rejectsMissingEqualsAndUnterminatedValues) {
  FieldIndex ix;
  EXPECT_EQ(ix.build(soh("8=FIX.4.4|35")).error, IndexError::missing_equals);
  EXPECT_EQ(ix.build(soh("8=FIX.4.4|35|")).error, IndexError::missing_equals) << "no '=' before the end of the frame";
  const IndexResult r = ix.build(soh("8=FIX.4.4|35=D"));
  EXPECT_EQ(r.error, IndexError::missing_soh);
  EXPECT_EQ(r.tag, 35u);
  EXPECT_TRUE(ix.build(std::string_view{}));
}

TEST(FieldIndexTest, stopsAtItsCapacity) {
  FieldIndex ix(3);
  EXPECT_TRUE(ix.build(soh("1=a|2=b|3=c|")));
  const IndexResult r = ix.build(soh("1=a|2=b|3=c|4=d|"));
  EXPECT_EQ(r.error, IndexError::too_many_fields);
  EXPECT_EQ(r.tag, 4u);
}

TEST(FieldIndexTest, dataFieldsMayHoldSohAndEquals) {
  const std::string data = std::string("x") + kSoh + "58=y" + kSoh + "=";
  const std::string m = fix_message("FIX.4.4", "35=B|95=" + std::to_string(data.size()) + "|96=");
  // fix_message turns '|' into SOH, so add the data's bytes by hand.
  std::string body = soh("35=B|95=" + std::to_string(data.size()) + "|96=") + data + soh("|58=z|");
  std::string msg = "8=FIX.4.4" + std::string(1, kSoh) + "9=" + std::to_string(body.size()) + kSoh + body;
  char sum[8];
  std::snprintf(sum, sizeof sum, "10=%03u", ScalarScan::checksum(msg.data(), msg.data() + msg.size()));
  msg += sum;
  msg += kSoh;
  ASSERT_EQ(frame(msg).status, FrameStatus::complete);
  FieldIndex ix;
  ASSERT_TRUE(ix.build(msg));
  std::string_view v;
  ASSERT_EQ(ix.get(tag::RawData, v), Get::ok);
  EXPECT_EQ(v, data);
  ASSERT_EQ(ix.get(tag::Text, v), Get::ok);
  EXPECT_EQ(v, "z") << "the 58=y inside RawData is not a field";
  (void)m;
}

// Every length/data pair of the FIX 4.2, 4.4 and 5.0 SP2 dictionaries (the
// high FIX 5.0 tags included, and those whose data tag comes first), with
// SOH and '=' inside the data: the default walk (the host-tuned one in that
// build) and the scalar twin both take the data whole.
TEST(FieldIndexTest, everyDictionaryLengthFieldGovernsItsDataField) {
  const std::string data = std::string("x") + kSoh + "58=y" + kSoh + "=";
  for (const detail::LengthDataPair& pair : detail::kLengthDataPairs) {
    const std::string msg =
        fix_message("FIXT.1.1", "35=j|1724=5|" + std::to_string(pair.length_tag) + "=" + std::to_string(data.size()) +
                                    "|" + std::to_string(pair.data_tag) + "=" + data + "|58=z|");
    EXPECT_EQ(detail::data_tag_for_length(pair.length_tag), pair.data_tag);
    EXPECT_TRUE(detail::is_length_tag(pair.length_tag));
    FieldIndex fast, plain;
    ASSERT_EQ(fast.frame_and_build(msg.data(), msg.size()).frame.status, FrameStatus::complete) << pair.length_tag;
    ASSERT_TRUE(plain.build<ScalarScan>(msg.data(), msg.size())) << pair.length_tag;
    for (const FieldIndex* ix : {&fast, &plain}) {
      ASSERT_EQ(ix->size(), 8u) << pair.length_tag;  // 8, 9, 35, 1724, the pair, 58, 10
      std::string_view v;
      ASSERT_EQ(ix->get(pair.data_tag, v), Get::ok) << pair.length_tag;
      EXPECT_EQ(v, data) << pair.length_tag;
      ASSERT_EQ(ix->get(tag::Text, v), Get::ok);
      EXPECT_EQ(v, "z") << "the 58=y inside " << pair.data_tag << " is not a field";
    }
  }
  // Tags next to length tags are not length fields.
  for (const std::uint32_t t : {0u, 89u, 91u, 96u, 622u, 1183u, 1185u, 1724u, 43112u, 99999u})
    EXPECT_FALSE(detail::is_length_tag(t)) << t;
  EXPECT_EQ(detail::data_tag_for_length(tag::BodyLength), 0u);
}

TEST(FieldIndexTest, dataFieldsWhoseLengthDoesNotFitAreRejected) {
  FieldIndex ix;
  EXPECT_EQ(ix.build(soh("35=B|95=10|96=abc|")).error, IndexError::bad_data_length) << "runs past the frame";
  EXPECT_EQ(ix.build(soh("35=B|95=2|96=abc|")).error, IndexError::bad_data_length) << "no SOH after 2 bytes";
  const IndexResult r = ix.build(soh("35=B|95=3|96=abc|"));
  EXPECT_TRUE(r) << to_string(r.error);
  // The length governs only the field right after it.
  EXPECT_TRUE(ix.build(soh("35=B|95=2|58=abc|96=x|")));
  EXPECT_TRUE(ix.build(soh("35=B|354=1|355=x|")));
  // A length that is not a number leaves the data field to the SOH scan.
  EXPECT_TRUE(ix.build(soh("35=B|95=zz|96=abc|")));
}

// A data field may not take the trailer into its value: RawDataLength 7 and
// an empty RawData would make the trailer's SOH and "10=ddd" its 7 bytes (a
// frame the fuzzer found). Both builds and frame_and_build refuse it at the
// data field; 7 bytes that end at the body's last SOH index.
TEST(FieldIndexTest, aDataFieldMayNotRunIntoTheTrailer) {
  const std::string swallowing = fix_message("FIX.4.4", "35=B|34=4|95=7|96=|");
  FieldIndex ix(64);
  const IndexResult whole = ix.build(swallowing);
  EXPECT_EQ(whole.error, IndexError::bad_data_length);
  EXPECT_EQ(whole.tag, 96u);
  const FramedIndex fused = ix.frame_and_build(swallowing.data(), swallowing.size());
  ASSERT_EQ(fused.frame.status, FrameStatus::complete);
  EXPECT_EQ(fused.index.error, IndexError::bad_data_length);
  const FrameResult fr = frame(swallowing);
  EXPECT_EQ(ix.build(swallowing.data(), fr).error, IndexError::bad_data_length);
  const std::string fitting = fix_message("FIX.4.4", "35=B|34=4|95=7|96=ab|d=ef|");
  const IndexResult ok = ix.build(fitting);
  ASSERT_TRUE(ok) << to_string(ok.error);
  EXPECT_EQ(ix[ix.size() - 1].tag, tag::CheckSum);
  EXPECT_EQ(ix.value(*ix.find(96)), soh("ab|d=ef"));
}

TEST(HeaderTest, readsEveryHeaderField) {
  const std::string m = fix_message(
      "FIX.4.4",
      "35=8|49=S|56=T|50=SS|57=TS|142=SL|143=TL|115=OB|116=OBS|144=OBL|128=DT|129=DTS|145=DTL|34=42|43=Y|97=N|"
      "52=20240101-00:00:01|122=20240101-00:00:00|");
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  Header h;
  ASSERT_TRUE(read_header(ix, h));
  EXPECT_EQ(h.begin_string, "FIX.4.4");
  EXPECT_EQ(h.msg_type, "8");
  EXPECT_EQ(h.sender_comp_id, "S");
  EXPECT_EQ(h.target_comp_id, "T");
  EXPECT_EQ(h.sender_sub_id, "SS");
  EXPECT_EQ(h.target_sub_id, "TS");
  EXPECT_EQ(h.sender_location_id, "SL");
  EXPECT_EQ(h.target_location_id, "TL");
  EXPECT_EQ(h.on_behalf_of_comp_id, "OB");
  EXPECT_EQ(h.on_behalf_of_sub_id, "OBS");
  EXPECT_EQ(h.on_behalf_of_location_id, "OBL");
  EXPECT_EQ(h.deliver_to_comp_id, "DT");
  EXPECT_EQ(h.deliver_to_sub_id, "DTS");
  EXPECT_EQ(h.deliver_to_location_id, "DTL");
  EXPECT_EQ(h.msg_seq_num, 42u);
  EXPECT_TRUE(h.poss_dup);
  EXPECT_FALSE(h.poss_resend);
  EXPECT_EQ(h.sending_time, "20240101-00:00:01");
  EXPECT_EQ(h.orig_sending_time, "20240101-00:00:00");
}

TEST(HeaderTest, reportsMisplacedAndMalformedHeaderFields) {
  FieldIndex ix;
  Header h;
  const auto check = [&](const std::string& s, HeaderError want) {
    ASSERT_TRUE(ix.build(s));
    EXPECT_EQ(read_header(ix, h).error, want) << testing::pipes(s);
  };
  check(soh("9=5|8=FIX.4.4|35=0|"), HeaderError::begin_string_not_first);
  check(soh("8=FIX.4.4|35=0|9=5|"), HeaderError::body_length_not_second);
  check(soh("8=FIX.4.4|9=5|49=A|35=0|"), HeaderError::msg_type_not_third);
  check(soh("8=FIX.4.4|9=5|35=|"), HeaderError::msg_type_empty);
  check(soh("8=FIX.4.4|9=x|35=0|"), HeaderError::bad_body_length);
  check(soh("8=FIX.4.4|9=5|35=0|34=x|"), HeaderError::bad_msg_seq_num);
  check(soh("8=FIX.4.4|9=5|35=0|34=-1|"), HeaderError::bad_msg_seq_num);
  check(soh("8=FIX.4.4|9=5|35=0|43=X|"), HeaderError::bad_poss_dup);
  check(soh("8=FIX.4.4|9=5|35=0|97=yes|"), HeaderError::bad_poss_resend);
  check(soh("8=FIX.4.4|9=5|35=0|"), HeaderError::none);
  EXPECT_EQ(h.msg_seq_num, 0u) << "absent MsgSeqNum reads as 0";
}

}  // namespace
}  // namespace kite::codec
