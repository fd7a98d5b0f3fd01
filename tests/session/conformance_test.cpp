// Session conformance on every FIX version Kite speaks: the FIX Session Layer
// Test Cases' expectations where Kite once answered differently, each run on
// every version it applies to (QuickFIX's acceptor is the reference).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

#include "support/session_testing.hpp"

namespace kite::session::test {
namespace {

using codec::RejectReason;

// One FIX version as a session is configured for it.
struct Version {
  const char* begin_string;
  const char* appl_ver_id;  // DefaultApplVerID on FIXT.1.1, else ""
  const char* name;         // test name suffix
};

const Version kAllVersions[] = {
    {"FIX.4.0", "", "FIX40"},
    {"FIX.4.1", "", "FIX41"},
    {"FIX.4.2", "", "FIX42"},
    {"FIX.4.3", "", "FIX43"},
    {"FIX.4.4", "", "FIX44"},
    {"FIXT.1.1", "7", "FIXT11_FIX50"},
    {"FIXT.1.1", "8", "FIXT11_FIX50SP1"},
    {"FIXT.1.1", "9", "FIXT11_FIX50SP2"},
};

void PrintTo(const Version& v, std::ostream* os) { *os << v.name; }

std::string version_name(const testing::TestParamInfo<Version>& i) { return i.param.name; }

bool before_42(const Version& v) {
  const std::string b = v.begin_string;
  return b == "FIX.4.0" || b == "FIX.4.1";
}

SessionSettings settings_for(const Version& v) {
  SessionSettings s = acceptor_settings(v.begin_string);
  if (*v.appl_ver_id != '\0') s.default_appl_ver_id = v.appl_ver_id;
  return s;
}

// The dictionaries' folder ctest passes; empty outside ctest.
std::string dictionary_dir() {
  const char* dir = std::getenv("KITE_DICTIONARY_DIR");
  return dir == nullptr ? std::string() : std::string(dir);
}

// A NewOrderSingle valid on every version: HandlInst (required up to 4.3),
// TransactTime from 4.2 on (4.0 and 4.1 do not define it for the message).
template <class Extra>
std::string valid_order(Peer& peer, const Version& v, const FakeClock& clock, std::string_view id, Extra extra,
                        PeerOpts o = {}) {
  return peer.make(
      "D",
      [&](codec::MessageWriter& w) {
        w.add_string(tag::ClOrdID, id);
        w.add_char(tag::HandlInst, '1');
        w.add_string(tag::Symbol, "KITE");
        w.add_char(tag::Side, '1');
        if (!before_42(v)) w.add_timestamp(tag::TransactTime, clock.now_ns());
        w.add_uint(tag::OrderQty, 100);
        w.add_char(tag::OrdType, '2');
        w.add_decimal(tag::Price, {10125, -2});
        extra(w);
      },
      o);
}
std::string valid_order(Peer& peer, const Version& v, const FakeClock& clock, std::string_view id) {
  return valid_order(peer, v, clock, id, [](codec::MessageWriter&) {});
}

// UTCTimestamp of the clock's now, shifted by `offset_ms`.
std::string utc(const FakeClock& clock, std::int64_t offset_ms = 0) {
  char buf[32];
  char* e = codec::write_utc_timestamp(buf, clock.now_ns() + offset_ms * 1'000'000, codec::TimePrecision::millis);
  return std::string(buf, e);
}

// A frame from its BeginString and the fields after BodyLength ('|' standing
// for SOH), with BodyLength and CheckSum right: for headers the peer's writer
// will not produce (MsgSeqNum 0, an empty TargetCompID, ...).
std::string raw_frame(std::string_view begin, std::string fields) {
  for (char& c : fields)
    if (c == '|') c = codec::kSoh;
  std::string m = "8=" + std::string(begin) +
                  "\x01"
                  "9=" +
                  std::to_string(fields.size()) + "\x01" + fields;
  unsigned sum = 0;
  for (const unsigned char c : m) sum += c;
  char cs[16];
  std::snprintf(cs, sizeof cs, "10=%03u\x01", sum % 256);
  return m + cs;
}

// The peer's header fields of a raw frame: "35=<type>|49=PEER|56=KITE|34=<seq>|52=<now>|".
std::string head(const FakeClock& clock, std::string_view type, std::uint64_t seq) {
  return "35=" + std::string(type) + "|49=PEER|56=KITE|34=" + std::to_string(seq) + "|52=" + utc(clock) + "|";
}

// A Reject of `ref_seq` for `reason`; the reason is checked where the version has SessionRejectReason.
void expect_reject(const Sent& out, const Version& v, std::uint64_t ref_seq, RejectReason reason,
                   std::uint32_t ref_tag = 0) {
  EXPECT_EQ(out.type(), "3") << out.raw;
  EXPECT_EQ(out.get(tag::RefSeqNum), std::to_string(ref_seq));
  if (before_42(v)) {
    EXPECT_FALSE(out.get(tag::Text).empty());
    return;
  }
  EXPECT_EQ(out.get(tag::SessionRejectReason), std::to_string(static_cast<int>(reason))) << out.raw;
  if (ref_tag != 0) {
    EXPECT_EQ(out.get(tag::RefTagID), std::to_string(ref_tag));
  }
}

class EveryVersion : public testing::TestWithParam<Version> {};
INSTANTIATE_TEST_SUITE_P(Conformance, EveryVersion, testing::ValuesIn(kAllVersions), version_name);

// A session with UseDataDictionary on, validated against its own version's
// dictionary (DataDictionary names the folder).
class DictionaryVersion : public testing::TestWithParam<Version> {
 protected:
  void SetUp() override {
    if (dictionary_dir().empty()) GTEST_SKIP() << "KITE_DICTIONARY_DIR not set (run through ctest)";
  }
  SessionSettings validated() const {
    SessionSettings s = settings_for(GetParam());
    s.validate = true;
    s.data_dictionary = dictionary_dir();
    return s;
  }
};
INSTANTIATE_TEST_SUITE_P(Conformance, DictionaryVersion, testing::ValuesIn(kAllVersions), version_name);

// --- versions ---------------------------------------------------------------------

TEST_P(EveryVersion, sessionLoadsLogsOnAndDeliversAnOrder) {
  SessionRig r(settings_for(GetParam()));
  r.logon();
  r.feed(r.peer.order("V-1"));
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "V-1");
}

TEST_P(DictionaryVersion, ordersAreValidatedAgainstTheVersionsOwnDictionary) {
  const Version& v = GetParam();
  SessionRig r(validated());
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "OK-1"));
  EXPECT_TRUE(r.wire.take().empty());
  ASSERT_EQ(r.app.received.size(), 1u);
  // ExposureDuration (1629) exists from FIX.5.0SP2 on, in NewOrderSingle.
  r.feed(valid_order(r.peer, v, r.clock, "NEW-TAG", [](codec::MessageWriter& w) { w.add_uint(1629, 5); }));
  const bool sp2 = std::string(v.appl_ver_id) == "9";
  if (sp2) {
    EXPECT_TRUE(r.wire.take().empty());
    EXPECT_EQ(r.app.received.size(), 2u);
  } else {
    const Sent out = only(r.wire.take());
    EXPECT_EQ(out.type(), "3");
    EXPECT_EQ(out.get(tag::RefSeqNum), "3");
    if (!before_42(v)) {
      EXPECT_EQ(out.get(tag::RefTagID), "1629");
    }
    EXPECT_EQ(r.app.received.size(), 1u);
  }
}

TEST_P(EveryVersion, rejectCarriesOnlyTheFieldsItsVersionDefines) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.make("1"));  // TestRequest without TestReqID
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::RefSeqNum), "2");
  EXPECT_FALSE(out.get(tag::Text).empty());
  EXPECT_EQ(out.has(tag::SessionRejectReason), !before_42(v));
  EXPECT_EQ(out.has(tag::RefTagID), !before_42(v));
  EXPECT_EQ(out.has(tag::RefMsgType), !before_42(v));
}

TEST_P(EveryVersion, businessRejectIsASessionRejectWithTextBeforeFix42) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.order("B-1"));
  ASSERT_EQ(r.session->send_business_reject(2, "D", 3, "Unsupported message type"), SendResult::ok);
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), before_42(v) ? "3" : "j");
  EXPECT_EQ(out.get(tag::RefSeqNum), "2");
  EXPECT_EQ(out.get(tag::Text), "Unsupported message type");
  EXPECT_EQ(out.has(tag::BusinessRejectReason), !before_42(v));
}

TEST_P(EveryVersion, endSeqNo999999MeansInfinityBeforeFix43) {
  const Version& v = GetParam();
  const std::string b = v.begin_string;
  if (b != "FIX.4.0" && b != "FIX.4.1" && b != "FIX.4.2") GTEST_SKIP() << "0 means infinity from FIX.4.3 on";
  SessionRig r(settings_for(v));
  r.logon();
  for (int i = 0; i < 2; ++i) ASSERT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::ok);
  r.wire.take();
  r.feed(r.peer.resend_request(2, 999999));
  const auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq(), 2u);
  EXPECT_EQ(out[1].seq(), 3u);
}

TEST_P(EveryVersion, resendRequestForEverythingFromNOnCarriesTheVersionsInfinity) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.order("G-1", {.seq = 5}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "2");
  EXPECT_EQ(out.get(tag::BeginSeqNo), "2");
  EXPECT_EQ(out.get(tag::EndSeqNo), before_42(v) ? "999999" : "0");
  // Asked again when the gap does not move: the same infinity.
  r.clock.advance_ms(settings_for(v).resend_timeout_ms);
  r.tick();
  for (const Sent& m : r.wire.take()) {
    if (m.type() == "2") {
      EXPECT_EQ(m.get(tag::EndSeqNo), before_42(v) ? "999999" : "0");
    }
  }
}

// --- 1: SequenceReset in reset mode ------------------------------------------------

TEST_P(EveryVersion, sequenceResetInResetModeWithMsgSeqNumZeroIsApplied) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, head(r.clock, "4", 0) + "36=10|"));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 10u);
  EXPECT_EQ(r.session->garbled_count(), 0u);
}

TEST_P(EveryVersion, sequenceResetInResetModeIsAppliedWhateverItsMsgSeqNum) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.make("4", [](codec::MessageWriter& w) { w.add_uint(tag::NewSeqNo, 20); }, {.seq = 7}));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.session->next_target_seq(), 20u);
  r.feed(r.peer.make("4", [](codec::MessageWriter& w) { w.add_uint(tag::NewSeqNo, 30); }, {.seq = 1}));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 30u);
}

TEST_P(EveryVersion, sequenceResetLoweringTheNumberIsRejectedWithValueIncorrect) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.session->set_next_target_seq(10);
  r.feed(raw_frame(v.begin_string, head(r.clock, "4", 0) + "36=5|"));
  expect_reject(only(r.wire.take()), v, 0, RejectReason::value_incorrect, tag::NewSeqNo);
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 10u);
}

// --- 3: PossDupFlag=Y with a MsgSeqNum already seen ----------------------------------

TEST_P(EveryVersion, possDupAlreadySeenWithoutOrigSendingTimeIsRejected) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.order("P-1"));
  r.feed(r.peer.order("P-1", {.seq = 2, .poss_dup = true, .orig_sending_time = false}));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::required_tag_missing, tag::OrigSendingTime);
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.session->next_target_seq(), 3u);
  EXPECT_TRUE(r.log.contains("OrigSendingTime"));
}

TEST_P(EveryVersion, possDupAlreadySeenWithOrigSendingTimeAfterSendingTimeIsRejectedAndLoggedOut) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.order("P-1"));
  r.feed(r.peer.order("P-1", {.seq = 2, .poss_dup = true, .orig_sending_offset_ms = 5000}));
  const auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  expect_reject(out[0], v, 2, RejectReason::sending_time_accuracy_problem, tag::OrigSendingTime);
  EXPECT_EQ(out[1].type(), "5");
  EXPECT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.session->next_target_seq(), 3u);
}

TEST_P(EveryVersion, possDupAlreadySeenWithValidOrigSendingTimeIsIgnoredAndLogged) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(r.peer.order("P-1"));
  r.feed(r.peer.order("P-1", {.seq = 2, .poss_dup = true, .orig_sending_offset_ms = -5000}));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.app.received.size(), 1u);
  EXPECT_TRUE(r.log.contains("PossDupFlag=Y message 2 already seen: ignored"));
}

// --- 2: a garbled frame is discarded by itself ----------------------------------------

// `good` with its CheckSum cut to "10=0".
std::string short_checksum(std::string good) {
  good.resize(good.size() - 7);
  return good + "10=0\x01";
}

TEST_P(EveryVersion, frameWithShortCheckSumIsDiscardedAtOnce) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  const std::string bad = short_checksum(raw_frame(v.begin_string, head(r.clock, "D", 2) + "11=BAD|"));
  EXPECT_EQ(r.feed(bad), bad.size());
  EXPECT_EQ(r.session->garbled_count(), 1u);
  r.feed(r.peer.order("GOOD"));
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "GOOD");
}

TEST_P(EveryVersion, frameWithShortCheckSumDoesNotTakeTheNextMessageWithIt) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  const std::string bad = short_checksum(raw_frame(v.begin_string, head(r.clock, "D", 2) + "11=BAD|"));
  const std::string good = r.peer.order("GOOD");
  EXPECT_EQ(r.feed(bad + good), bad.size() + good.size());
  EXPECT_EQ(r.session->garbled_count(), 1u);
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "GOOD");
  EXPECT_EQ(r.session->next_target_seq(), 3u);
}

TEST_P(EveryVersion, frameWhoseBodyLengthOverrunsItsCheckSumIsDiscardedAtOnce) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  std::string bad = raw_frame(v.begin_string, head(r.clock, "D", 2) + "11=BAD|");
  const std::size_t at = bad.find(
                             "\x01"
                             "9=") +
                         3;
  const std::size_t end = bad.find('\x01', at);
  bad.replace(at, end - at, std::to_string(std::stoul(bad.substr(at, end - at)) + 40));
  EXPECT_EQ(r.feed(bad), bad.size());
  EXPECT_EQ(r.session->garbled_count(), 1u);
  r.feed(r.peer.order("GOOD"));
  ASSERT_EQ(r.app.received.size(), 1u);
}

// --- 5: a refused Logon -------------------------------------------------------------------

TEST_P(EveryVersion, logonWithSendingTimeOutsideLatencyIsLoggedOutWithoutRejectAndKeepsTheNumbers) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.session->set_next_target_seq(5);
  r.session->set_next_sender_seq(7);
  r.feed(r.peer.logon(30, false, {}, {.seq = 5, .sending_offset_ms = -600'000}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_NE(out.get(tag::Text).find("SendingTime"), std::string::npos);
  EXPECT_TRUE(r.wire.closed);
  EXPECT_NE(r.wire.close_reason, "logon timeout");
  EXPECT_FALSE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 5u);
}

TEST_P(EveryVersion, logonWithResetFlagRefusedForItsSendingTimeDoesNotReset) {
  const Version& v = GetParam();
  if (std::string(v.begin_string) == "FIX.4.0") GTEST_SKIP() << "FIX.4.0 has no ResetSeqNumFlag";
  SessionRig r(settings_for(v));
  r.session->set_next_target_seq(5);
  r.session->set_next_sender_seq(7);
  r.feed(r.peer.logon(30, true, {}, {.seq = 1, .sending_offset_ms = 600'000}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 5u);
  EXPECT_EQ(out.seq(), 7u);
}

TEST_P(EveryVersion, logonWithBadSendingTimeEndsTheConnectionAtOnce) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  std::string fields = "35=A|49=PEER|56=KITE|34=1|52=yesterday|98=0|108=30|";
  if (settings_for(v).fixt()) fields += "1137=" + std::string(v.appl_ver_id) + "|";
  r.feed(raw_frame(v.begin_string, fields));
  for (const Sent& m : r.wire.take()) EXPECT_NE(m.type(), "3") << m.raw;
  EXPECT_TRUE(r.wire.closed);
  EXPECT_FALSE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 1u);
}

TEST_P(EveryVersion, fixtLogonWithoutDefaultApplVerIdEndsTheConnectionAndKeepsTheNumbers) {
  const Version& v = GetParam();
  if (!settings_for(v).fixt()) GTEST_SKIP() << "FIXT.1.1 only";
  SessionRig r(settings_for(v));
  r.session->set_next_target_seq(5);
  r.feed(r.peer.make("A",
                     [](codec::MessageWriter& w) {
                       w.add_uint(tag::EncryptMethod, 0);
                       w.add_uint(tag::HeartBtInt, 30);
                       w.add_bool(tag::ResetSeqNumFlag, true);
                     },
                     {.seq = 1}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_NE(out.get(tag::Text).find("DefaultApplVerID"), std::string::npos);
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 5u);
}

// --- BeginString ---------------------------------------------------------------------

// A BeginString Kite speaks that is not this session's.
std::string other_begin_string(const Version& v) {
  return std::string(v.begin_string) == "FIX.4.2" ? "FIX.4.4" : "FIX.4.2";
}

TEST_P(EveryVersion, logonWithAnotherBeginStringEndsTheConnectionAtOnce) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.feed(raw_frame(other_begin_string(v), head(r.clock, "A", 1) + "98=0|108=30|"));
  EXPECT_TRUE(r.wire.closed);
  EXPECT_FALSE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 1u);
}

// Logout, then the close once the peer has answered: closing at once would
// meet the answer with a reset.
TEST_P(EveryVersion, anotherBeginStringAfterLogonIsLoggedOutAndClosedOnTheAnswer) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(other_begin_string(v), head(r.clock, "0", 2)));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_EQ(out.get(tag::Text), "Incorrect BeginString");
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.session->state(), SessionState::logout_sent);
  EXPECT_TRUE(r.log.contains("unexpected BeginString " + other_begin_string(v)));
  r.feed(raw_frame(other_begin_string(v), head(r.clock, "5", 3)));
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.wire.close_reason, "logout completed");
  EXPECT_TRUE(r.wire.take().empty());
}

TEST_P(EveryVersion, anotherBeginStringAfterLogonUnansweredClosesAfterLogoutTimeout) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(other_begin_string(v), head(r.clock, "0", 2)));
  EXPECT_EQ(only(r.wire.take()).type(), "5");
  r.clock.advance_ms(settings_for(v).logout_timeout_ms);
  r.tick();
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.wire.close_reason, "logout timeout");
}

TEST_P(DictionaryVersion, fixtLogonWithoutDefaultApplVerIdIsRefusedAndClosedWhenValidating) {
  const Version& v = GetParam();
  if (!settings_for(v).fixt()) GTEST_SKIP() << "FIXT.1.1 only";
  SessionRig r(validated());
  r.feed(r.peer.make("A", [](codec::MessageWriter& w) {
    w.add_uint(tag::EncryptMethod, 0);
    w.add_uint(tag::HeartBtInt, 30);
  }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_NE(out.get(tag::Text).find("DefaultApplVerID"), std::string::npos) << out.raw;
  EXPECT_TRUE(r.wire.closed);
  EXPECT_FALSE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 1u);
}

// A Logon the dictionary refuses (a tag no version defines) ends the
// connection like any refused Logon.
TEST_P(DictionaryVersion, logonTheDictionaryRefusesIsLoggedOutNotRejected) {
  SessionRig r(validated());
  r.logon();
  SessionRig bad(validated());
  std::string logon = bad.peer.make("A", [&](codec::MessageWriter& w) {
    w.add_uint(tag::EncryptMethod, 0);
    w.add_uint(tag::HeartBtInt, 30);
    if (bad.session->settings().fixt()) w.add_string(tag::DefaultApplVerID, GetParam().appl_ver_id);
    w.add_uint(4999, 1);  // no version defines it
  });
  bad.feed(logon);
  const Sent out = only(bad.wire.take());
  EXPECT_EQ(out.type(), "5") << out.raw;
  EXPECT_TRUE(bad.wire.closed);
  EXPECT_EQ(bad.session->next_target_seq(), 1u);
}

// --- 6: a ResendRequest is served before its MsgSeqNum is judged ------------------------

TEST_P(EveryVersion, resendRequestWithStaleMsgSeqNumIsServedWithoutLogout) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  for (int i = 0; i < 2; ++i) ASSERT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::ok);
  r.feed(r.peer.order("R-1"));  // 2
  r.feed(r.peer.order("R-2"));  // 3
  r.wire.take();
  r.feed(r.peer.resend_request(2, 0, {.seq = 2}));  // asked again with a stale number
  const auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "8");
  EXPECT_EQ(out[0].seq(), 2u);
  EXPECT_EQ(out[0].get(tag::PossDupFlag), "Y");
  EXPECT_EQ(out[1].seq(), 3u);
  EXPECT_FALSE(r.wire.closed);
  EXPECT_TRUE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 4u);
}

// --- 4: SessionRejectReason codes ----------------------------------------------------------

TEST_P(DictionaryVersion, tagNotInTheDictionaryIsRejectedWithInvalidTagNumber) {
  const Version& v = GetParam();
  SessionRig r(validated());
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "U-1", [](codec::MessageWriter& w) { w.add_uint(4999, 1); }));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::invalid_tag_number, 4999);
  EXPECT_TRUE(r.app.received.empty());
}

TEST_P(DictionaryVersion, tagNotDefinedForTheMessageTypeIsRejectedWithReason2) {
  const Version& v = GetParam();
  SessionRig r(validated());
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "U-1", [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "X"); }));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::tag_not_defined_for_message_type, tag::TestReqID);
}

TEST_P(DictionaryVersion, fixtSessionMessagesAreJudgedByTheTransportDictionary) {
  const Version& v = GetParam();
  SessionRig r(validated());
  r.logon();
  r.feed(r.peer.make("0", [](codec::MessageWriter& w) { w.add_string(tag::Symbol, "KITE"); }));
  // FIXT11.xml does not define Symbol (55) at all; FIX.4.x defines it, not for Heartbeat.
  expect_reject(
      only(r.wire.take()), v, 2,
      settings_for(v).fixt() ? RejectReason::invalid_tag_number : RejectReason::tag_not_defined_for_message_type,
      tag::Symbol);
}

// A tag that is no tag number (0, negative) on a session message and on an
// application message: Reject 0 naming it, the number used, the session kept.
TEST_P(EveryVersion, tagZeroOrNegativeIsRejectedWithInvalidTagNumberAndTheSessionGoesOn) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, head(r.clock, "0", 2) + "0=X|"));
  Sent out = only(r.wire.take());
  expect_reject(out, v, 2, RejectReason::invalid_tag_number);
  if (!before_42(v)) {
    EXPECT_EQ(out.get(tag::RefTagID), "0") << out.raw;
  }
  r.feed(raw_frame(v.begin_string, head(r.clock, "D", 3) + "11=NEG|-5=X|55=KITE|54=1|38=100|40=1|"));
  out = only(r.wire.take());
  expect_reject(out, v, 3, RejectReason::invalid_tag_number);
  if (!before_42(v)) {
    EXPECT_EQ(out.get(tag::RefTagID), "-5") << out.raw;
  }
  EXPECT_TRUE(r.app.received.empty());
  EXPECT_FALSE(r.wire.closed);
  EXPECT_EQ(r.session->next_target_seq(), 4u);
  EXPECT_EQ(r.session->garbled_count(), 0u);
  r.feed(r.peer.order("AFTER", {.seq = 4}));
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(DictionaryVersion, tagNotInTheDictionaryOnAHeartbeatIsRejectedWithInvalidTagNumber) {
  const Version& v = GetParam();
  SessionRig r(validated());
  r.logon();
  r.feed(r.peer.make("0", [](codec::MessageWriter& w) { w.add_string(999, "X"); }));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::invalid_tag_number, 999);
  EXPECT_FALSE(r.wire.closed);
  r.feed(r.peer.order("AFTER"));
  EXPECT_EQ(r.session->next_target_seq(), 4u);
}

// ValidateUserDefinedFields, QuickFIX's setting (default Y): a tag from 5000
// up that the dictionary does not place is rejected, or passed with N.
TEST_P(DictionaryVersion, userDefinedTagOnASessionMessageFollowsValidateUserDefinedFields) {
  const Version& v = GetParam();
  SessionSettings s = validated();
  EXPECT_TRUE(s.validate_user_defined_fields);
  SessionRig strict(s);
  strict.logon();
  strict.feed(strict.peer.make("0", [](codec::MessageWriter& w) { w.add_string(5001, "X"); }));
  const Sent out = only(strict.wire.take());
  EXPECT_EQ(out.type(), "3") << out.raw;
  if (!before_42(v)) {
    EXPECT_EQ(out.get(tag::RefTagID), "5001");
  }
  s.validate_user_defined_fields = false;
  SessionRig r(s);
  r.logon();
  r.feed(r.peer.make("0", [](codec::MessageWriter& w) { w.add_string(5001, "X"); }));
  EXPECT_TRUE(r.wire.take().empty());
  r.feed(valid_order(r.peer, v, r.clock, "UD", [](codec::MessageWriter& w) { w.add_uint(5001, 1); }));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(DictionaryVersion, groupCountMismatchIsReportedBeforeAValueInsideTheGroup) {
  const Version& v = GetParam();
  if (std::string(v.begin_string) < "FIX.4.4") GTEST_SKIP() << "Parties (453) in NewOrderSingle from FIX.4.4 on";
  SessionRig r(validated());
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "G-1", [](codec::MessageWriter& w) {
    w.add_uint(tag::NoPartyIDs, 2);  // one entry follows
    w.add_string(tag::PartyID, "P");
    w.add_char(tag::PartyIDSource, 'D');
    w.add_uint(tag::PartyRole, 9999);  // not one of PartyRole's values
  }));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::incorrect_num_in_group_count, tag::NoPartyIDs);
}

TEST_P(EveryVersion, emptyTargetCompIdIsRejectedWithReason4AndTheSessionKept) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, "35=0|49=PEER|56=|34=2|52=" + utc(r.clock) + "|"));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::tag_specified_without_value, tag::TargetCompID);
  EXPECT_FALSE(r.wire.closed);
  EXPECT_TRUE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 3u);
}

TEST_P(EveryVersion, missingTargetCompIdIsRejectedWithReason1AndTheSessionKept) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, "35=0|49=PEER|34=2|52=" + utc(r.clock) + "|"));
  expect_reject(only(r.wire.take()), v, 2, RejectReason::required_tag_missing, tag::TargetCompID);
  EXPECT_FALSE(r.wire.closed);
  EXPECT_TRUE(r.session->logged_on());
  r.feed(r.peer.order("AFTER", {.seq = 3}));
  EXPECT_EQ(r.app.received.size(), 1u);
}

// --- settings as QuickFIX users know them ------------------------------------------------

TEST_P(DictionaryVersion, validateUserDefinedFieldsOffLetsUserDefinedTagsPass) {
  const Version& v = GetParam();
  SessionSettings s = validated();
  SessionRig strict(s);
  strict.logon();
  strict.feed(valid_order(strict.peer, v, strict.clock, "UD", [](codec::MessageWriter& w) { w.add_uint(5999, 1); }));
  EXPECT_EQ(only(strict.wire.take()).type(), "3");
  s.validate_user_defined_fields = false;
  SessionRig r(s);
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "UD", [](codec::MessageWriter& w) { w.add_uint(5999, 1); }));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(DictionaryVersion, allowUnknownMsgFieldsLetsUnknownAndMisplacedTagsPass) {
  const Version& v = GetParam();
  SessionSettings s = validated();
  s.allow_unknown_msg_fields = true;
  SessionRig r(s);
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "UK", [](codec::MessageWriter& w) {
    w.add_uint(4999, 1);
    w.add_string(tag::TestReqID, "X");
  }));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(DictionaryVersion, validateFieldsHaveValuesOffLetsEmptyValuesPass) {
  const Version& v = GetParam();
  SessionSettings s = validated();
  SessionRig strict(s);
  strict.logon();
  strict.feed(
      valid_order(strict.peer, v, strict.clock, "EV", [](codec::MessageWriter& w) { w.add_string(tag::Text, ""); }));
  expect_reject(only(strict.wire.take()), v, 2, RejectReason::tag_specified_without_value, tag::Text);
  s.validate_fields_have_values = false;
  SessionRig r(s);
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "EV", [](codec::MessageWriter& w) { w.add_string(tag::Text, ""); }));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(DictionaryVersion, validateFieldsOutOfOrderOffLetsAHeaderFieldAfterTheBodyPass) {
  const Version& v = GetParam();
  SessionSettings s = validated();
  const auto late_header = [](codec::MessageWriter& w) { w.add_string(tag::DeliverToCompID, "VENUE"); };
  SessionRig strict(s);
  strict.logon();
  strict.feed(valid_order(strict.peer, v, strict.clock, "OO", late_header));
  expect_reject(only(strict.wire.take()), v, 2, RejectReason::tag_out_of_order, tag::DeliverToCompID);
  s.validate_fields_out_of_order = false;
  SessionRig r(s);
  r.logon();
  r.feed(valid_order(r.peer, v, r.clock, "OO", late_header));
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST_P(EveryVersion, checkCompIdOffAcceptsAnotherTargetCompId) {
  const Version& v = GetParam();
  SessionSettings s = settings_for(v);
  s.check_comp_id = false;
  SessionRig r(s);
  r.logon();
  r.feed(raw_frame(v.begin_string, "35=1|49=PEER|56=ELSEWHERE|34=2|52=" + utc(r.clock) + "|112=T1|"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "0");
  EXPECT_EQ(out.get(tag::TestReqID), "T1");
  EXPECT_TRUE(r.session->logged_on());
}

// --- 7: answers carry the reversed routing fields; unique TestReqIDs ------------------

// Routing fields of a message from PEER: on behalf of CLIENT (desk DESK, in
// LDN), for VENUE (floor FLOOR, in NYC), from the trader TRADER.
std::string routing(const Version& v) {
  std::string f = "50=TRADER|115=CLIENT|116=DESK|128=VENUE|129=FLOOR|";
  if (std::string(v.begin_string) != "FIX.4.0") f += "142=LONDON|144=LDN|145=NYC|";
  return f;
}

void expect_reversed_routing(const Sent& out, const Version& v) {
  EXPECT_EQ(out.get(tag::DeliverToCompID), "CLIENT") << out.raw;
  EXPECT_EQ(out.get(tag::DeliverToSubID), "DESK");
  EXPECT_EQ(out.get(tag::OnBehalfOfCompID), "VENUE");
  EXPECT_EQ(out.get(tag::OnBehalfOfSubID), "FLOOR");
  EXPECT_EQ(out.get(tag::TargetSubID), "TRADER");
  if (std::string(v.begin_string) != "FIX.4.0") {
    EXPECT_EQ(out.get(tag::DeliverToLocationID), "LDN");
    EXPECT_EQ(out.get(tag::OnBehalfOfLocationID), "NYC");
    EXPECT_EQ(out.get(tag::TargetLocationID), "LONDON");
  }
}

TEST_P(EveryVersion, rejectCarriesTheReversedRoutingFields) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, head(r.clock, "1", 2) + routing(v)));  // TestRequest without TestReqID
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  expect_reversed_routing(out, v);
}

TEST_P(EveryVersion, logoutAnswerCarriesTheReversedRoutingFields) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, head(r.clock, "5", 2) + routing(v)));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  expect_reversed_routing(out, v);
}

// Answers every order with a BusinessMessageReject.
struct BusinessRejectingApp : RecordingApp {
  void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    RecordingApp::on_message(s, h, ix);
    s.send_business_reject(h.msg_seq_num, h.msg_type, 3, "Unsupported message type");
  }
};

TEST_P(EveryVersion, businessRejectCarriesTheReversedRoutingFieldsAndApplVerIdOnFixt) {
  const Version& v = GetParam();
  BasicSessionRig<BusinessRejectingApp> r(settings_for(v));
  r.logon();
  r.feed(raw_frame(v.begin_string, head(r.clock, "D", 2) + routing(v) + "11=ORDER|"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), before_42(v) ? "3" : "j");
  expect_reversed_routing(out, v);
  if (settings_for(v).fixt()) {
    EXPECT_EQ(out.get(tag::ApplVerID), v.appl_ver_id);
  } else {
    EXPECT_FALSE(out.has(tag::ApplVerID));
  }
}

// A counterparty that rejects every order: each Reject counted, the log
// holding at most one Reject line per second that says how many it held back.
TEST_P(EveryVersion, rejectsOfEveryOrderAreAllCountedAndLoggedAtMostOncePerSecond) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon();
  r.log.clear();
  constexpr int kOrders = 100;  // 10 a second for 10 s
  for (int i = 0; i < kOrders; ++i) {
    ASSERT_EQ(r.session->send("D", [](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, "X"); }), SendResult::ok);
    const std::uint64_t ref = r.session->next_sender_seq() - 1;
    const bool business = !before_42(v) && i % 2 == 1;
    r.feed(r.peer.make(business ? "j" : "3", [&](codec::MessageWriter& w) {
      w.add_uint(tag::RefSeqNum, ref);
      if (!before_42(v)) {
        w.add_uint(tag::RefTagID, 55);
        w.add_string(tag::RefMsgType, "D");
        w.add_uint(business ? tag::BusinessRejectReason : tag::SessionRejectReason, business ? 3 : 5);
      }
      w.add_string(tag::Text, "no such symbol");
    }));
    r.clock.advance_ms(100);
    r.tick();
  }
  r.clock.advance_ms(1000);
  r.tick();  // the last second's held-back count
  EXPECT_EQ(r.session->rejects_received_count(), static_cast<std::uint64_t>(kOrders));
  EXPECT_FALSE(r.wire.closed);
  std::uint64_t logged = 0, held_back = 0;
  std::size_t lines = 0;
  for (const std::string& l : r.log.lines()) {
    const bool full = l.find("Reject received: RefSeqNum ") != std::string::npos;
    const std::size_t more = l.find(" more");
    if (!full && more == std::string::npos) continue;
    ++lines;
    logged += full ? 1 : 0;
    if (more != std::string::npos) {
      const std::size_t from = l.rfind(full ? '(' : ' ', more - 1) + 1;
      held_back += std::stoull(l.substr(from, more - from));
    }
  }
  EXPECT_LE(lines, 11u);  // 10 s of Rejects and the last count
  EXPECT_GE(lines, 10u);
  EXPECT_EQ(logged + held_back, static_cast<std::uint64_t>(kOrders));
  if (!before_42(v)) {
    EXPECT_TRUE(r.log.contains("Reject received: RefSeqNum 2 RefMsgType D RefTagID 55 reason 5: no such symbol"));
  } else {
    EXPECT_TRUE(r.log.contains("Reject received: RefSeqNum 2 RefMsgType - RefTagID - reason -: no such symbol"));
  }
}

// The log says the wait the session keeps: HeartBtInt x (1 + TestRequestDelayMultiplier).
TEST_P(EveryVersion, testRequestLogLinesSayTheRealWait) {
  const Version& v = GetParam();
  SessionRig r(settings_for(v));
  r.logon(10);
  EXPECT_TRUE(r.log.contains("logged on (HeartBtInt 10, TestRequest after 15 s, next seq out 2, in 2)"));
  r.clock.advance_ms(14'999);
  r.tick();
  EXPECT_FALSE(r.log.contains("TestRequest TEST-"));
  r.clock.advance_ms(1);
  r.tick();
  EXPECT_TRUE(r.log.contains("no message for 15 s (HeartBtInt 10 x 1.5): TestRequest TEST-"));
}

// The TestReqID of a TestRequest sent after `silence_s` of the peer's silence.
std::string test_req_id_after(SessionRig& r, std::int64_t silence_s) {
  r.clock.advance_s(silence_s);
  r.tick();
  for (const Sent& m : r.wire.take())
    if (m.type() == "1") return m.get(tag::TestReqID);
  ADD_FAILURE() << "no TestRequest";
  return {};
}

TEST_P(EveryVersion, testReqIdIsUniquePerRequestAcrossRestarts) {
  const Version& v = GetParam();
  SessionRig first(settings_for(v));
  first.logon();
  const std::string a = test_req_id_after(first, 50);
  SessionRig restarted(settings_for(v));  // a new process: a new Session object
  restarted.logon();
  const std::string b = test_req_id_after(restarted, 60);
  EXPECT_FALSE(a.empty());
  EXPECT_NE(a, b);
  restarted.feed(restarted.peer.make("0", [&](codec::MessageWriter& w) { w.add_string(tag::TestReqID, b); }));
  const std::string c = test_req_id_after(restarted, 50);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace kite::session::test
