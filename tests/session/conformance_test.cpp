// Session conformance on every FIX version Kite speaks: the FIX Session Layer
// Test Cases' expectations where Kite once answered differently, each run on
// every version it applies to (QuickFIX's acceptor is the reference).
#include <gtest/gtest.h>

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
    {"FIX.4.0", "", "FIX40"},       {"FIX.4.1", "", "FIX41"},      {"FIX.4.2", "", "FIX42"},
    {"FIX.4.3", "", "FIX43"},       {"FIX.4.4", "", "FIX44"},      {"FIXT.1.1", "7", "FIXT11_FIX50"},
    {"FIXT.1.1", "8", "FIXT11_FIX50SP1"}, {"FIXT.1.1", "9", "FIXT11_FIX50SP2"},
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

}  // namespace
}  // namespace kite::session::test
