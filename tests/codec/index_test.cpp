#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <iterator>
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

// read_header as it was, one lookup per field: the twin the rare-field test is checked against.
HeaderResult read_header_by_lookup(const FieldIndex& ix, Header& h) {
  if (ix.size() < 3 || ix[0].tag != tag::BeginString) return {HeaderError::begin_string_not_first, tag::BeginString};
  if (ix[1].tag != tag::BodyLength) return {HeaderError::body_length_not_second, tag::BodyLength};
  if (ix[2].tag != tag::MsgType) return {HeaderError::msg_type_not_third, tag::MsgType};
  h.begin_string = ix.value_at(0);
  std::uint64_t body = 0;
  if (!parse_uint(ix.value_at(1), body)) return {HeaderError::bad_body_length, tag::BodyLength};
  h.body_length = static_cast<std::uint32_t>(body);
  h.msg_type = ix.value_at(2);
  if (h.msg_type.empty()) return {HeaderError::msg_type_empty, tag::MsgType};
  const auto view = [&ix](std::uint32_t t) {
    const std::int32_t i = ix.find_pos(t);
    return i < 0 ? std::string_view{} : ix.value_at(static_cast<std::uint32_t>(i));
  };
  h.sender_comp_id = view(tag::SenderCompID);
  h.target_comp_id = view(tag::TargetCompID);
  h.sender_sub_id = view(tag::SenderSubID);
  h.target_sub_id = view(tag::TargetSubID);
  h.sender_location_id = view(tag::SenderLocationID);
  h.target_location_id = view(tag::TargetLocationID);
  h.on_behalf_of_comp_id = view(tag::OnBehalfOfCompID);
  h.on_behalf_of_sub_id = view(tag::OnBehalfOfSubID);
  h.on_behalf_of_location_id = view(tag::OnBehalfOfLocationID);
  h.deliver_to_comp_id = view(tag::DeliverToCompID);
  h.deliver_to_sub_id = view(tag::DeliverToSubID);
  h.deliver_to_location_id = view(tag::DeliverToLocationID);
  h.sending_time = view(tag::SendingTime);
  h.orig_sending_time = view(tag::OrigSendingTime);
  h.msg_seq_num = 0;
  if (const std::int32_t i = ix.find_pos(tag::MsgSeqNum); i >= 0) {
    if (!parse_uint(ix.value_at(static_cast<std::uint32_t>(i)), h.msg_seq_num))
      return {HeaderError::bad_msg_seq_num, tag::MsgSeqNum};
  }
  h.poss_dup = false;
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

// The same views (same bytes of the frame, not only equal text) and values,
// the fields an error leaves alone included.
void expect_same_header(const Header& a, const Header& b, const std::string& m) {
  const auto same = [&](std::string_view x, std::string_view y, const char* what) {
    EXPECT_TRUE(x.data() == y.data() && x.size() == y.size()) << what << " in " << testing::pipes(m);
  };
  same(a.begin_string, b.begin_string, "BeginString");
  same(a.msg_type, b.msg_type, "MsgType");
  same(a.sender_comp_id, b.sender_comp_id, "SenderCompID");
  same(a.target_comp_id, b.target_comp_id, "TargetCompID");
  same(a.sender_sub_id, b.sender_sub_id, "SenderSubID");
  same(a.target_sub_id, b.target_sub_id, "TargetSubID");
  same(a.sender_location_id, b.sender_location_id, "SenderLocationID");
  same(a.target_location_id, b.target_location_id, "TargetLocationID");
  same(a.on_behalf_of_comp_id, b.on_behalf_of_comp_id, "OnBehalfOfCompID");
  same(a.on_behalf_of_sub_id, b.on_behalf_of_sub_id, "OnBehalfOfSubID");
  same(a.on_behalf_of_location_id, b.on_behalf_of_location_id, "OnBehalfOfLocationID");
  same(a.deliver_to_comp_id, b.deliver_to_comp_id, "DeliverToCompID");
  same(a.deliver_to_sub_id, b.deliver_to_sub_id, "DeliverToSubID");
  same(a.deliver_to_location_id, b.deliver_to_location_id, "DeliverToLocationID");
  same(a.sending_time, b.sending_time, "SendingTime");
  same(a.orig_sending_time, b.orig_sending_time, "OrigSendingTime");
  EXPECT_EQ(a.body_length, b.body_length) << testing::pipes(m);
  EXPECT_EQ(a.msg_seq_num, b.msg_seq_num) << testing::pipes(m);
  EXPECT_EQ(a.poss_dup, b.poss_dup) << testing::pipes(m);
  EXPECT_EQ(a.poss_resend, b.poss_resend) << testing::pipes(m);
}

// A header left over from an earlier message: an error must leave the same fields as before.
Header stale_header(const std::string& text) {
  Header h;
  const std::string_view v(text);
  h.begin_string = h.msg_type = h.sender_comp_id = h.target_comp_id = v;
  h.sender_sub_id = h.target_sub_id = h.sender_location_id = h.target_location_id = v;
  h.on_behalf_of_comp_id = h.on_behalf_of_sub_id = h.on_behalf_of_location_id = v;
  h.deliver_to_comp_id = h.deliver_to_sub_id = h.deliver_to_location_id = v;
  h.sending_time = h.orig_sending_time = v;
  h.body_length = 77;
  h.msg_seq_num = 99;
  h.poss_dup = h.poss_resend = true;
  return h;
}

TEST(HeaderTest, readsTheRareFieldsAsOneLookupPerFieldDoes) {
  // The rare header fields (read only when the index may hold one), each
  // with a good and a malformed value where it has a format.
  struct Rare {
    std::uint32_t tag;
    const char* good;
    const char* bad;
  };
  const Rare rare[] = {{50, "SS", nullptr},
                       {57, "TS", nullptr},
                       {142, "SL", nullptr},
                       {143, "TL", nullptr},
                       {115, "OB", nullptr},
                       {116, "OBS", nullptr},
                       {144, "OBL", nullptr},
                       {128, "DT", nullptr},
                       {129, "DTS", nullptr},
                       {145, "DTL", nullptr},
                       {122, "20240101-00:00:00", nullptr},
                       {43, "Y", "X"},
                       {97, "N", "yes"}};
  constexpr std::size_t kRare = std::size(rare);
  const std::string stale_text = "stale";
  FieldIndex ix;
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<std::uint32_t>(state >> 33);
  };
  const auto check = [&](const std::string& body) {
    const std::string m = fix_message("FIX.4.4", body);
    ASSERT_TRUE(ix.build(m)) << testing::pipes(m);
    Header want = stale_header(stale_text), got = stale_header(stale_text);
    const HeaderResult wr = read_header_by_lookup(ix, want);
    const HeaderResult gr = read_header(ix, got);
    EXPECT_EQ(gr.error, wr.error) << testing::pipes(m);
    EXPECT_EQ(gr.tag, wr.tag) << testing::pipes(m);
    expect_same_header(got, want, m);
  };
  const std::string head = "35=D|49=S|56=T|";
  const std::string tail = "52=20240101-00:00:01|11=A|55=X|";
  // None, each alone, each twice (the first counts), all of them.
  check(head + "34=1|" + tail);
  std::string all;
  for (const Rare& r : rare) {
    const std::string f = std::to_string(r.tag) + "=" + r.good + "|";
    check(head + "34=2|" + f + tail);
    check(head + "34=3|" + f + tail + std::to_string(r.tag) + "=second|");
    if (r.bad != nullptr) {
      check(head + "34=4|" + std::to_string(r.tag) + "=" + r.bad + "|" + tail);
      check(head + "34=x|" + f + std::to_string(r.tag) + "=" + r.bad + "|" + tail);  // MsgSeqNum's error first
    }
    all += f;
  }
  check(head + "34=5|" + all + tail);
  check(head + "34=6|" + all + tail + all);
  // Random subsets, good, bad or doubled, on one index: its slots keep older
  // generations' positions (which can make the one test answer "maybe"), and
  // the 16-bit generation wraps.
  for (int n = 0; n < 70'000; ++n) {
    std::string body = head;
    const std::uint32_t pick = next();
    const std::uint32_t bad = next() % 64 == 0 ? next() % kRare : kRare;
    body += next() % 128 == 0 ? "34=x|" : "34=" + std::to_string(n) + "|";
    for (std::size_t i = 0; i < kRare; ++i) {
      if ((pick >> i & 7u) != 0 && i != bad) continue;  // each present one time in 8
      const Rare& r = rare[i];
      body += std::to_string(r.tag) + "=" + (i == bad && r.bad != nullptr ? r.bad : r.good) + "|";
      if ((pick >> (i + 16) & 3u) == 0) body += std::to_string(r.tag) + "=dup|";
    }
    check(body + tail);
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace kite::codec
