// The FIX Session Layer Test Cases (FIX Trading Community, FIX 4.x / FIXT),
// one test per case, driven by a scripted peer and a fake clock.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>

#include "support/session_testing.hpp"

namespace kite::session::test {
namespace {

using codec::RejectReason;

// --- 1: Logon -----------------------------------------------------------------

TEST(SessionLogon, validLogonIsAnsweredWithLogonAndTheSessionIsActive) {
  SessionRig r;
  r.feed(r.peer.logon(30));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "A");
  EXPECT_EQ(out.get(tag::HeartBtInt), "30");
  EXPECT_EQ(out.get(tag::EncryptMethod), "0");
  EXPECT_EQ(out.get(tag::SenderCompID), "KITE");
  EXPECT_EQ(out.get(tag::TargetCompID), "PEER");
  EXPECT_EQ(out.seq(), 1u);
  EXPECT_TRUE(r.session->logged_on());
  EXPECT_EQ(r.app.logons, 1);
  EXPECT_EQ(r.session->next_target_seq(), 2u);
}

TEST(SessionLogon, acceptorTakesTheInitiatorsHeartBtInt) {
  SessionRig r;
  r.feed(r.peer.logon(5));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.get(tag::HeartBtInt), "5");
  EXPECT_EQ(r.session->heart_bt_int(), 5);
}

TEST(SessionLogon, firstMessageNotALogonDisconnectsWithoutAnswer) {
  SessionRig r;
  r.feed(r.peer.order("X1"));
  EXPECT_TRUE(r.wire.closed);
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_TRUE(r.log.contains("first message is not a Logon"));
}

TEST(SessionLogon, logonWithEncryptMethodOtherThanZeroIsLoggedOut) {
  SessionRig r;
  r.feed(r.peer.make("A", [](codec::MessageWriter& w) {
    w.add_uint(tag::EncryptMethod, 1);
    w.add_uint(tag::HeartBtInt, 30);
  }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
  EXPECT_FALSE(r.session->logged_on());
}

TEST(SessionLogon, logonWithoutHeartBtIntIsLoggedOut) {
  SessionRig r;
  r.feed(r.peer.make("A", [](codec::MessageWriter& w) { w.add_uint(tag::EncryptMethod, 0); }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_NE(out.get(tag::Text).find("HeartBtInt"), std::string::npos);
  EXPECT_TRUE(r.wire.closed);
}

TEST(SessionLogon, logonWithSeqTooLowIsLoggedOutNamingBothNumbers) {
  SessionRig r;
  r.session->set_next_target_seq(5);
  r.feed(r.peer.logon(30, false, {}, {.seq = 3}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_EQ(out.get(tag::Text), "MsgSeqNum too low, expecting 5 but received 3");
  EXPECT_TRUE(r.wire.closed);
}

TEST(SessionLogon, logonWithSeqTooHighIsAcceptedThenResendRequested) {
  SessionRig r;
  r.feed(r.peer.logon(30, false, {}, {.seq = 4}));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "A");
  EXPECT_EQ(out[1].type(), "2");
  EXPECT_EQ(out[1].get(tag::BeginSeqNo), "1");
  EXPECT_EQ(out[1].get(tag::EndSeqNo), "0");
  EXPECT_TRUE(r.session->logged_on());
  EXPECT_EQ(r.session->next_target_seq(), 1u);
}

TEST(SessionLogon, logonWithResetSeqNumFlagResetsBothNumbersAndIsAnsweredWithTheFlag) {
  SessionRig r;
  r.session->set_next_sender_seq(50);
  r.session->set_next_target_seq(40);
  r.feed(r.peer.logon(30, true, {}, {.seq = 1}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "A");
  EXPECT_EQ(out.get(tag::ResetSeqNumFlag), "Y");
  EXPECT_EQ(out.seq(), 1u);
  EXPECT_EQ(r.session->next_target_seq(), 2u);
  EXPECT_EQ(r.session->next_sender_seq(), 2u);
}

TEST(SessionLogon, resetOnLogonSettingResetsNumbersWithoutTheFlag) {
  auto s = acceptor_settings();
  s.reset_on_logon = true;
  SessionRig r(s);
  r.session->set_next_sender_seq(9);
  r.session->set_next_target_seq(9);
  r.feed(r.peer.logon());
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.seq(), 1u);
}

TEST(SessionLogon, fixtLogonCarriesDefaultApplVerId) {
  SessionRig r(acceptor_settings("FIXT.1.1"));
  r.feed(r.peer.logon());
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.get(tag::BeginString), "FIXT.1.1");
  EXPECT_EQ(out.get(tag::DefaultApplVerID), "9");
}

TEST(SessionLogon, fixtLogonWithoutDefaultApplVerIdIsLoggedOut) {
  SessionRig r(acceptor_settings("FIXT.1.1"));
  r.feed(r.peer.make("A", [](codec::MessageWriter& w) {
    w.add_uint(tag::EncryptMethod, 0);
    w.add_uint(tag::HeartBtInt, 30);
  }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
}

TEST(SessionLogon, logonNotAnsweredInTimeDisconnectsTheInitiator) {
  FakeClock clock;
  MemoryLogger log;
  RecordingApp app;
  auto s = acceptor_settings();
  s.role = Role::initiator;
  s.logon_timeout_ms = 5000;
  MemoryStore store;
  Session session(s, store, app, clock, log);
  FakeOutput wire;
  session.on_connected(wire);
  auto out = wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "A");
  clock.advance_ms(4999);
  session.on_timer();
  EXPECT_FALSE(wire.closed);
  clock.advance_ms(1);
  session.on_timer();
  EXPECT_TRUE(wire.closed);
  EXPECT_TRUE(log.contains("no Logon answer"));
}

// --- 2: MsgSeqNum ---------------------------------------------------------------

TEST(SessionSequence, messageWithExpectedSeqIsDeliveredAndAdvancesTheExpectedNumber) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A1"));
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "A1");
  EXPECT_EQ(r.session->next_target_seq(), 3u);
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionSequence, seqTooHighSendsResendRequestQueuesAndProcessesInOrderOnceFilled) {
  SessionRig r;
  r.logon();
  // 2 and 3 are lost; 4 and 5 arrive.
  r.peer.next_seq = 4;
  r.feed(r.peer.order("O4"));
  r.feed(r.peer.order("O5"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "2");
  EXPECT_EQ(out.get(tag::BeginSeqNo), "2");
  EXPECT_EQ(out.get(tag::EndSeqNo), "0");
  EXPECT_TRUE(r.app.received.empty());
  EXPECT_EQ(r.session->queued(), 2u);
  // The peer resends 2..5.
  r.feed(r.peer.order("O2", {.seq = 2, .poss_dup = true}));
  ASSERT_EQ(r.app.received.size(), 1u);
  r.feed(r.peer.order("O3", {.seq = 3, .poss_dup = true}));
  ASSERT_EQ(r.app.received.size(), 4u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "O2");
  EXPECT_EQ(r.app.received[1].cl_ord_id, "O3");
  EXPECT_EQ(r.app.received[2].cl_ord_id, "O4");
  EXPECT_EQ(r.app.received[3].cl_ord_id, "O5");
  EXPECT_EQ(r.session->queued(), 0u);
  // The duplicates of 4 and 5 are ignored.
  r.feed(r.peer.order("O4", {.seq = 4, .poss_dup = true}));
  r.feed(r.peer.order("O5", {.seq = 5, .poss_dup = true}));
  EXPECT_EQ(r.app.received.size(), 4u);
  EXPECT_EQ(r.session->next_target_seq(), 6u);
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionSequence, onlyOneResendRequestWhileTheGapIsOpen) {
  SessionRig r;
  r.logon();
  r.peer.next_seq = 10;
  for (int i = 0; i < 5; ++i) r.feed(r.peer.order("X"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "2");
}

TEST(SessionSequence, queueCapDropsFurtherMessagesAndLogsIt) {
  SessionRig r(acceptor_settings(), 2);
  r.logon();
  r.peer.next_seq = 3;  // 2 is missing
  r.feed(r.peer.order("O3"));
  r.feed(r.peer.order("O4"));
  r.feed(r.peer.order("O5"));  // over the cap
  EXPECT_EQ(r.session->queued(), 2u);
  EXPECT_TRUE(r.log.contains("gap queue full"));
  r.feed(r.peer.order("O2", {.seq = 2, .poss_dup = true}));
  ASSERT_EQ(r.app.received.size(), 3u);
  EXPECT_EQ(r.session->next_target_seq(), 5u);
  // 5 comes again through the resend and is processed.
  r.feed(r.peer.order("O5", {.seq = 5, .poss_dup = true}));
  ASSERT_EQ(r.app.received.size(), 4u);
  EXPECT_EQ(r.app.received[3].cl_ord_id, "O5");
}

// Logged on (HeartBtInt hb), then 2 and 3 lost: O4 arrives, is queued, and
// our ResendRequest for 2 onwards goes out (and is taken).
void lose_two_and_three(SessionRig& r, int hb = 30) {
  r.logon(hb);
  r.peer.next_seq = 4;
  r.feed(r.peer.order("O4"));
  EXPECT_EQ(only(r.wire.take()).type(), "2");
}

// Nothing for the 10 s of ResendRequestTimeout less 1 ms, then the
// ResendRequest again (returned).
Sent asked_again_after_timeout(SessionRig& r) {
  r.clock.advance_ms(9'999);
  r.tick();
  EXPECT_TRUE(r.wire.take().empty());
  r.clock.advance_ms(1);
  r.tick();
  Sent again = only(r.wire.take());
  EXPECT_EQ(again.type(), "2");
  return again;
}

TEST(SessionSequence, gapThatDoesNotMoveIsAskedForAgainAfterResendRequestTimeout) {
  SessionRig r;  // ResendRequestTimeout 10 s, ResendRequestRetries 2
  lose_two_and_three(r);
  const Sent again = asked_again_after_timeout(r);
  EXPECT_EQ(again.get(tag::BeginSeqNo), "2");
  EXPECT_EQ(again.get(tag::EndSeqNo), "0");
  EXPECT_TRUE(r.log.contains("asking again from 2 (1 of 2)"));
  // Answered this time: the queue drains and the gap closes.
  r.feed(r.peer.order("O2", {.seq = 2, .poss_dup = true}));
  r.feed(r.peer.order("O3", {.seq = 3, .poss_dup = true}));
  ASSERT_EQ(r.app.received.size(), 3u);
  EXPECT_EQ(r.session->next_target_seq(), 5u);
  r.clock.advance_ms(20'000);
  r.tick();
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionSequence, gapThatMovesIsNotAskedForAgain) {
  SessionRig r;
  lose_two_and_three(r);
  r.clock.advance_ms(8'000);
  r.feed(r.peer.order("O2", {.seq = 2, .poss_dup = true}));  // 3 still missing
  r.tick();
  // 18 s after the request, but 10 s after the gap moved:
  EXPECT_EQ(asked_again_after_timeout(r).get(tag::BeginSeqNo), "3");
}

TEST(SessionSequence, resendRequestUnansweredAfterItsRetriesLogsOutAndDisconnects) {
  SessionRig r;
  lose_two_and_three(r);
  for (int retry = 1; retry <= 2; ++retry) {
    r.clock.advance_ms(10'000);
    r.tick();
    EXPECT_EQ(only(r.wire.take()).type(), "2") << retry;
  }
  EXPECT_FALSE(r.wire.closed);
  r.clock.advance_ms(10'000);
  r.tick();
  const Sent logout = only(r.wire.take());
  EXPECT_EQ(logout.type(), "5");
  EXPECT_NE(logout.get(tag::Text).find("ResendRequest unanswered: still expecting 2"), std::string::npos);
  EXPECT_TRUE(r.wire.closed);
  EXPECT_TRUE(r.app.received.empty());
}

TEST(SessionSequence, resendRequestTimeoutZeroNeverAsksAgain) {
  SessionSettings s = acceptor_settings();
  s.resend_timeout_ms = 0;
  SessionRig r(s);
  lose_two_and_three(r, 3600);
  for (int i = 0; i < 10; ++i) {
    r.clock.advance_ms(60'000);
    r.tick();
  }
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_FALSE(r.wire.closed);
}

TEST(SessionSequence, seqTooLowWithoutPossDupLogsOutNamingBothNumbersAndDisconnects) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A"));
  r.feed(r.peer.order("B", {.seq = 2}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_EQ(out.get(tag::Text), "MsgSeqNum too low, expecting 3 but received 2");
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST(SessionSequence, possDupAlreadySeenIsIgnored) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A"));
  r.feed(r.peer.order("A", {.seq = 2, .poss_dup = true}));
  EXPECT_EQ(r.app.received.size(), 1u);
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_FALSE(r.wire.closed);
}

TEST(SessionSequence, possDupWithoutOrigSendingTimeIsRejectedWithRequiredTagMissing) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A", {.poss_dup = true, .orig_sending_time = false}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "1");
  EXPECT_EQ(out.get(tag::RefTagID), "122");
  EXPECT_EQ(out.get(tag::RefSeqNum), "2");
  EXPECT_EQ(out.get(tag::RefMsgType), "D");
  EXPECT_EQ(r.session->next_target_seq(), 3u);
  EXPECT_TRUE(r.app.received.empty());
}

TEST(SessionSequence, origSendingTimeAfterSendingTimeIsRejectedAndLoggedOut) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A", {.poss_dup = true, .orig_sending_offset_ms = 5000}));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "3");
  EXPECT_EQ(out[0].get(tag::SessionRejectReason), "10");
  EXPECT_EQ(out[1].type(), "5");
  EXPECT_EQ(r.session->state(), SessionState::logout_sent);
  EXPECT_EQ(r.session->next_target_seq(), 3u);
}

TEST(SessionSequence, garbledMessageIsIgnoredWithoutAdvancingTheExpectedNumber) {
  SessionRig r;
  r.logon();
  std::string bad = r.peer.order("A");
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';  // break the checksum
  r.feed(bad);
  EXPECT_EQ(r.session->next_target_seq(), 2u);
  EXPECT_EQ(r.session->garbled_count(), 1u);
  EXPECT_TRUE(r.app.received.empty());
  EXPECT_FALSE(r.wire.closed);
  // The same number, sent again correctly, is accepted.
  r.feed(r.peer.order("A", {.seq = 2}));
  EXPECT_EQ(r.app.received.size(), 1u);
}

TEST(SessionSequence, garbledBodyLengthIsIgnoredAndTheNextMessageStillFrames) {
  SessionRig r;
  r.logon();
  std::string bad = r.peer.order("A");
  const auto nine = bad.find(
      "\x01"
      "9=");
  bad[nine + 3] = bad[nine + 3] == '9' ? '8' : static_cast<char>(bad[nine + 3] + 1);
  r.feed(bad + r.peer.order("B", {.seq = 2}));
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "B");
}

TEST(SessionSequence, missingMsgSeqNumLogsOut) {
  SessionRig r;
  r.logon();
  // Build a frame without 34 by hand.
  std::string body =
      "35=0\x01"
      "49=PEER\x01"
      "56=KITE\x01"
      "52=20231114-22:13:20.000\x01";
  std::string m =
      "8=FIX.4.4\x01"
      "9=" +
      std::to_string(body.size()) + "\x01" + body;
  unsigned sum = 0;
  for (unsigned char c : m) sum += c;
  char ck[8];
  std::snprintf(ck, sizeof ck, "10=%03u\x01", sum % 256);
  r.clock.set(1'700'000'000'000'000'000);
  r.feed(m + ck);
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
}

// --- BeginString, CompID, SendingTime -----------------------------------------

TEST(SessionIdentity, beginStringMismatchLogsOutAndDisconnectsOnTheAnswer) {
  SessionRig r;
  r.logon();
  Peer other(r.clock, "FIX.4.2");
  other.next_seq = 2;
  r.feed(other.order("A"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_EQ(out.get(tag::Text), "Incorrect BeginString");
  EXPECT_EQ(r.session->state(), SessionState::logout_sent);  // closed on the answer
  r.feed(r.peer.make("5", [](codec::MessageWriter&) {}, {.seq = 3}));
  EXPECT_TRUE(r.wire.closed);
}

TEST(SessionIdentity, compIdMismatchIsRejectedWithReason9AndLoggedOut) {
  SessionRig r;
  r.logon();
  Peer other(r.clock, "FIX.4.4", "INTRUDER", "KITE");
  other.next_seq = 2;
  r.feed(other.order("A"));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "3");
  EXPECT_EQ(out[0].get(tag::SessionRejectReason), "9");
  EXPECT_EQ(out[0].get(tag::RefTagID), "49");
  EXPECT_EQ(out[1].type(), "5");
  EXPECT_EQ(r.session->state(), SessionState::logout_sent);
  EXPECT_TRUE(r.app.received.empty());
  // The peer's Logout answer completes it.
  r.feed(r.peer.make("5", [](codec::MessageWriter&) {}, {.seq = 3}));
  EXPECT_TRUE(r.wire.closed);
}

// The CompIDs are compared a word at a time: a difference in the last byte,
// or a longer or shorter ID with the same start, is still a CompID problem.
TEST(SessionIdentity, compIdsThatDifferOnlyAtTheirEndAreRejected) {
  struct Case {
    const char* sender;
    const char* target;
    const char* ref;
  };
  for (const Case c : {Case{"PEEQ", "KITE", "49"}, Case{"PEERS", "KITE", "49"}, Case{"PEE", "KITE", "49"},
                       Case{"PEER", "KITF", "56"}, Case{"PEER", "KIT", "56"}, Case{"PEER", "KITEX", "56"}}) {
    SessionRig r;
    r.logon();
    Peer other(r.clock, "FIX.4.4", c.sender, c.target);
    other.next_seq = 2;
    r.feed(other.order("A"));
    auto out = r.wire.take();
    ASSERT_EQ(out.size(), 2u) << c.sender << "->" << c.target;
    EXPECT_EQ(out[0].get(tag::SessionRejectReason), "9");
    EXPECT_EQ(out[0].get(tag::RefTagID), c.ref) << c.sender << "->" << c.target;
    EXPECT_TRUE(r.app.received.empty());
  }
}

// BeginString and CompIDs are read where the session's writer keeps its
// header text when they fit it (48 bytes), else from the settings: both ways
// take the right IDs and refuse one that differs in its last byte.
TEST(SessionIdentity, compIdsOfEveryLengthAreCheckedInFullEitherWay) {
  struct Case {
    std::size_t ours, theirs;  // CompID lengths; FIX.4.4 + 13 framing bytes
  };
  for (const Case c : {Case{1, 1}, Case{14, 14}, Case{15, 14}, Case{14, 15}, Case{8, 8}, Case{9, 7}, Case{30, 30}}) {
    SessionSettings st = acceptor_settings();
    st.sender_comp_id = std::string(c.ours - 1, 'K') + "E";
    st.target_comp_id = std::string(c.theirs - 1, 'P') + "R";
    const std::string label = std::to_string(c.ours) + "/" + std::to_string(c.theirs);
    SessionRig r(st);
    Peer peer(r.clock, "FIX.4.4", st.target_comp_id, st.sender_comp_id);
    r.feed(peer.logon(30));
    ASSERT_TRUE(r.session->logged_on()) << label;
    r.wire.take();
    r.feed(peer.order("A"));
    EXPECT_EQ(r.app.received.size(), 1u) << label;
    for (const bool sender_wrong : {false, true}) {
      std::string sender = st.target_comp_id, target = st.sender_comp_id;
      (sender_wrong ? sender : target).back() = 'X';
      SessionRig bad(st);
      Peer good(bad.clock, "FIX.4.4", st.target_comp_id, st.sender_comp_id);
      bad.feed(good.logon(30));
      ASSERT_TRUE(bad.session->logged_on()) << label;
      bad.wire.take();
      Peer other(bad.clock, "FIX.4.4", sender, target);
      other.next_seq = 2;
      bad.feed(other.order("A"));
      const auto out = bad.wire.take();
      ASSERT_EQ(out.size(), 2u) << label;
      EXPECT_EQ(out[0].get(tag::SessionRejectReason), "9") << label;
      EXPECT_EQ(out[0].get(tag::RefTagID), sender_wrong ? "49" : "56") << label;
      EXPECT_TRUE(bad.app.received.empty()) << label;
    }
  }
}

TEST(SessionIdentity, sendingTimeOutsideLatencyIsRejectedWithReason10AndLoggedOut) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A", {.sending_offset_ms = -121'000}));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "3");
  EXPECT_EQ(out[0].get(tag::SessionRejectReason), "10");
  EXPECT_EQ(out[0].get(tag::RefTagID), "52");
  EXPECT_EQ(out[1].type(), "5");
  EXPECT_TRUE(r.app.received.empty());
}

TEST(SessionIdentity, sendingTimeCheckCanBeTurnedOff) {
  auto s = acceptor_settings();
  s.check_latency = false;
  SessionRig r(s);
  r.logon();
  r.feed(r.peer.order("A", {.sending_offset_ms = -3'600'000}));
  EXPECT_EQ(r.app.received.size(), 1u);
  EXPECT_TRUE(r.wire.take().empty());
}

// --- 4/5/6: Heartbeat and TestRequest -------------------------------------------

TEST(SessionHeartbeat, heartbeatIsSentAfterHeartBtIntOfOurSilence) {
  SessionRig r;
  r.logon(10);
  r.clock.advance_ms(9999);
  r.tick();
  EXPECT_TRUE(r.wire.take().empty());
  r.clock.advance_ms(1);
  r.feed(r.peer.make("0"));  // their traffic does not count as ours
  r.tick();
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "0");
  EXPECT_FALSE(out.has(tag::TestReqID));
}

TEST(SessionHeartbeat, testRequestIsAnsweredWithHeartbeatCarryingItsId) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("1", [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "PING-7"); }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "0");
  EXPECT_EQ(out.get(tag::TestReqID), "PING-7");
}

TEST(SessionHeartbeat, testRequestWithoutIdIsRejected) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("1"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::RefTagID), "112");
}

TEST(SessionHeartbeat, testRequestIsSentAfterSilenceAndUnansweredDisconnects) {
  SessionRig r;
  r.logon(10);  // TestRequest after 10 s * 1.5
  r.clock.advance_ms(10'000);
  r.tick();  // our heartbeat
  r.wire.take();
  r.clock.advance_ms(4'999);
  r.tick();
  EXPECT_TRUE(r.wire.take().empty());
  r.clock.advance_ms(1);
  r.tick();
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "1");
  EXPECT_FALSE(out.get(tag::TestReqID).empty());
  r.clock.advance_ms(14'999);
  r.tick();
  EXPECT_FALSE(r.wire.closed);
  r.clock.advance_ms(1);
  r.tick();
  EXPECT_TRUE(r.wire.closed);
  EXPECT_TRUE(r.log.contains("unanswered"));
}

TEST(SessionHeartbeat, answeredTestRequestKeepsTheSessionUp) {
  SessionRig r;
  r.logon(10);
  r.clock.advance_ms(15'000);
  r.tick();
  auto out = r.wire.take();
  ASSERT_FALSE(out.empty());
  const std::string id = out.back().get(tag::TestReqID);
  ASSERT_FALSE(id.empty());
  r.feed(r.peer.make("0", [&](codec::MessageWriter& w) { w.add_string(tag::TestReqID, id); }));
  r.clock.advance_ms(14'000);
  r.tick();
  EXPECT_FALSE(r.wire.closed);
}

// The engine gives a connection no timer turn while timer_quiet_ns() says
// nothing is due: the span must end where the next turn has work.
TEST(SessionHeartbeat, quietSpanEndsWhenOurNextHeartbeatIsDue) {
  SessionRig r;
  r.logon(10);  // Heartbeat after 10 s of our silence, TestRequest after 15 s of theirs
  EXPECT_EQ(r.session->timer_quiet_ns(), 10 * kNsPerSec);
  r.clock.advance_ms(4'000);
  EXPECT_EQ(r.tick(), 0);
  EXPECT_EQ(r.session->timer_quiet_ns(), 6 * kNsPerSec);
  r.clock.advance_ms(6'000);
  r.tick();
  EXPECT_EQ(only(r.wire.take()).type(), "0");
  EXPECT_EQ(r.session->timer_quiet_ns(), 5 * kNsPerSec);  // now their silence (15 s) comes first
}

TEST(SessionHeartbeat, noQuietSpanWhileAGapIsOpenOrATestRequestIsOutstanding) {
  SessionRig r;
  r.logon(10);
  r.feed(r.peer.order("G1", {.seq = 5}));  // 2 expected: a gap, its ResendRequest timed by turns
  EXPECT_TRUE(r.session->in_gap());
  EXPECT_EQ(r.session->timer_quiet_ns(), 0);

  SessionRig t;
  t.logon(10);
  t.clock.advance_ms(15'000);
  t.tick();  // Heartbeat, then TestRequest
  ASSERT_EQ(t.wire.take().back().type(), "1");
  EXPECT_EQ(t.session->timer_quiet_ns(), 0);
}

// --- 8: ResendRequest ---------------------------------------------------------------

// The session sends application messages 2..4 after its Logon (1), then a
// heartbeat (5), then application message 6.
void send_some(SessionRig& r) {
  for (const char* id : {"E2", "E3", "E4"}) {
    ASSERT_EQ(r.session->send("8", [&](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, id); }), SendResult::ok);
  }
  r.clock.advance_ms(30'000);
  r.feed(r.peer.make("0"));
  r.tick();  // heartbeat 5
  ASSERT_EQ(r.session->send("8", [](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, "E6"); }), SendResult::ok);
  r.wire.take();
}

TEST(SessionResend, applicationMessagesAreResentWithPossDupAndOrigSendingTime) {
  SessionRig r;
  r.logon();
  send_some(r);
  r.feed(r.peer.resend_request(2, 4));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].type(), "8");
    EXPECT_EQ(out[i].seq(), 2 + i);
    EXPECT_EQ(out[i].get(tag::PossDupFlag), "Y");
    EXPECT_FALSE(out[i].get(tag::OrigSendingTime).empty());
    EXPECT_NE(out[i].get(tag::OrigSendingTime), out[i].get(tag::SendingTime));
  }
  EXPECT_EQ(out[0].get(tag::ClOrdID), "E2");
  EXPECT_EQ(r.session->next_sender_seq(), 7u);
}

TEST(SessionResend, sendOrStoreKeepsWhatCannotGoOutAndTheResendDeliversIt) {
  SessionRig r;
  r.logon();        // our Logon was 1
  r.wire.room = 0;  // the send buffer is full
  const auto fill = [](std::string_view id) {
    return [id](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, id); };
  };
  EXPECT_EQ(r.session->send("8", fill("LOST")), SendResult::back_pressured);  // plain send: nothing kept
  EXPECT_EQ(r.session->send_or_store("8", fill("F2")), SendResult::stored);
  EXPECT_TRUE(r.wire.take().empty());
  EXPECT_EQ(r.session->next_sender_seq(), 3u);
  EXPECT_EQ(r.session->stored_unsent_count(), 1u);
  EXPECT_TRUE(r.log.contains("MsgSeqNum 2 not sent now (send buffer full or resend running)"));
  r.wire.room = static_cast<std::size_t>(-1);
  ASSERT_EQ(r.session->send_or_store("8", fill("F3")), SendResult::ok);  // room again: sent as usual
  EXPECT_EQ(only(r.wire.take()).seq(), 3u);                              // the peer sees 2 missing and asks
  r.feed(r.peer.resend_request(2, 2));
  const Sent resent = only(r.wire.take());
  EXPECT_EQ(resent.type(), "8");
  EXPECT_EQ(resent.seq(), 2u);
  EXPECT_EQ(resent.get(tag::ClOrdID), "F2");
  EXPECT_EQ(resent.get(tag::PossDupFlag), "Y");
}

TEST(SessionResend, sendOrStoreWhileDisconnectedReachesThePeerAfterItsNextLogon) {
  SessionRig r;
  r.logon();
  r.disconnect("peer closed");
  EXPECT_EQ(r.session->send_or_store("8", [](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, "F2"); }),
            SendResult::stored);
  EXPECT_TRUE(r.log.contains("not sent now (not logged on)"));
  // A new connection: our Logon answer carries 3, so the peer asks for 2.
  FakeOutput wire2;
  r.use_output(wire2);
  r.feed(r.peer.logon(30));
  const Sent logon = only(wire2.take());
  EXPECT_EQ(logon.type(), "A");
  EXPECT_EQ(logon.seq(), 3u);
  r.feed(r.peer.resend_request(2, 0));
  const auto out = wire2.take();
  ASSERT_GE(out.size(), 1u);
  EXPECT_EQ(out[0].seq(), 2u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "F2");
  EXPECT_EQ(out[0].get(tag::PossDupFlag), "Y");
}

TEST(SessionResend, sessionMessagesAreReplacedByMergedGapFills) {
  SessionRig r;
  r.logon();
  send_some(r);
  r.feed(r.peer.resend_request(1, 0));
  auto out = r.wire.take();
  // 1 (Logon) -> gap fill to 2; 2,3,4 resent; 5 (heartbeat) -> gap fill to 6; 6 resent.
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].type(), "4");
  EXPECT_EQ(out[0].seq(), 1u);
  EXPECT_EQ(out[0].get(tag::GapFillFlag), "Y");
  EXPECT_EQ(out[0].get(tag::NewSeqNo), "2");
  EXPECT_EQ(out[0].get(tag::PossDupFlag), "Y");
  EXPECT_EQ(out[4].type(), "4");
  EXPECT_EQ(out[4].seq(), 5u);
  EXPECT_EQ(out[4].get(tag::NewSeqNo), "6");
  EXPECT_EQ(out[5].type(), "8");
  EXPECT_EQ(out[5].seq(), 6u);
}

TEST(SessionResend, consecutiveSessionMessagesBecomeOneGapFill) {
  SessionRig r;
  r.logon(1);
  for (int i = 0; i < 4; ++i) {
    r.clock.advance_ms(1000);
    r.feed(r.peer.make("0"));
    r.tick();  // heartbeats 2..5
  }
  r.wire.take();
  r.feed(r.peer.resend_request(1, 0));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "4");
  EXPECT_EQ(out.seq(), 1u);
  EXPECT_EQ(out.get(tag::NewSeqNo), "6");
}

TEST(SessionResend, endSeqNo999999MeansInfinityOnFix42) {
  SessionRig r(acceptor_settings("FIX.4.2"));
  r.logon();
  send_some(r);
  r.feed(r.peer.resend_request(6, 999999));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.seq(), 6u);
  EXPECT_EQ(out.get(tag::PossDupFlag), "Y");
}

TEST(SessionResend, resendRequestWithSeqTooHighIsServedAndOursFollows) {
  SessionRig r;
  r.logon();
  send_some(r);
  r.feed(r.peer.resend_request(6, 0, {.seq = 8}));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq(), 6u);  // theirs served
  EXPECT_EQ(out[1].type(), "2");
  EXPECT_EQ(out[1].get(tag::BeginSeqNo), "3");
}

TEST(SessionResend, resendUnderBackPressureResumesWhenRoomReturns) {
  auto s = acceptor_settings();
  s.overflow_bytes = s.send_claim_bytes;  // room for a single message's worth in overflow
  SessionRig r(s);
  r.logon();
  send_some(r);
  r.wire.blocked = true;
  r.feed(r.peer.resend_request(2, 0));
  EXPECT_FALSE(r.wire.closed);
  r.wire.blocked = false;
  for (int i = 0; i < 10; ++i) r.tick();
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 5u);  // 2,3,4 resent, gap fill 5, 6 resent
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].seq(), 2 + i);
}

// --- 10/11: SequenceReset -----------------------------------------------------------

TEST(SessionSequenceReset, gapFillMovesTheExpectedNumberForward) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("4",
                     [](codec::MessageWriter& w) {
                       w.add_bool(tag::GapFillFlag, true);
                       w.add_uint(tag::NewSeqNo, 10);
                     },
                     {.seq = 2, .poss_dup = true}));
  EXPECT_EQ(r.session->next_target_seq(), 10u);
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionSequenceReset, gapFillTooHighTriggersResendRequest) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("4",
                     [](codec::MessageWriter& w) {
                       w.add_bool(tag::GapFillFlag, true);
                       w.add_uint(tag::NewSeqNo, 10);
                     },
                     {.seq = 5}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "2");
  EXPECT_EQ(r.session->next_target_seq(), 2u);
}

TEST(SessionSequenceReset, gapFillThatWouldLowerTheNumberIsRejected) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("4",
                     [](codec::MessageWriter& w) {
                       w.add_bool(tag::GapFillFlag, true);
                       w.add_uint(tag::NewSeqNo, 1);
                     },
                     {.seq = 2}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "5");
  EXPECT_EQ(out.get(tag::RefTagID), "36");
}

TEST(SessionSequenceReset, resetModeIgnoresMsgSeqNumAndSetsTheExpectedNumber) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("4", [](codec::MessageWriter& w) { w.add_uint(tag::NewSeqNo, 50); }, {.seq = 999}));
  EXPECT_EQ(r.session->next_target_seq(), 50u);
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionSequenceReset, resetModeLoweringTheNumberIsRejectedWithValueIncorrect) {
  SessionRig r;
  r.logon();
  r.session->set_next_target_seq(20);
  r.feed(r.peer.make("4", [](codec::MessageWriter& w) { w.add_uint(tag::NewSeqNo, 5); }, {.seq = 20}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "5");
  EXPECT_EQ(r.session->next_target_seq(), 20u);
}

TEST(SessionLogon, logonWithResetSeqNumFlagDuringTheSessionResetsBothSides) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.order("A"));
  ASSERT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::ok);
  r.wire.take();
  r.feed(r.peer.logon(30, true, {}, {.seq = 1}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "A");
  EXPECT_EQ(out.seq(), 1u);
  EXPECT_EQ(out.get(tag::ResetSeqNumFlag), "Y");
  EXPECT_EQ(r.session->next_target_seq(), 2u);
  EXPECT_TRUE(r.session->logged_on());
  r.peer.next_seq = 2;
  r.feed(r.peer.order("B"));
  EXPECT_EQ(r.app.received.size(), 2u);
}

TEST(SessionSequence, rejectFromThePeerIsConsumedAndLogged) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("3", [](codec::MessageWriter& w) {
    w.add_uint(tag::RefSeqNum, 1);
    w.add_string(tag::Text, "bad");
  }));
  EXPECT_EQ(r.session->next_target_seq(), 3u);
  EXPECT_TRUE(r.log.contains("Reject received"));
  EXPECT_TRUE(r.wire.take().empty());
}

TEST(SessionLogout, logoutWithSeqTooHighIsStillAnswered) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("5", [](codec::MessageWriter&) {}, {.seq = 9}));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
}

// --- 12/13: Logout ----------------------------------------------------------------------

TEST(SessionLogout, logoutFromThePeerIsAnsweredThenDisconnected) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("5", [](codec::MessageWriter& w) { w.add_string(tag::Text, "bye"); }));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_TRUE(r.wire.closed);
  EXPECT_EQ(r.app.logouts, 1);
}

TEST(SessionLogout, ourLogoutWaitsForTheAnswer) {
  SessionRig r;
  r.logon();
  r.session->logout("end of day");
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
  EXPECT_EQ(out.get(tag::Text), "end of day");
  EXPECT_FALSE(r.wire.closed);
  r.feed(r.peer.make("5"));
  EXPECT_TRUE(r.wire.closed);
  EXPECT_TRUE(r.wire.take().empty());  // no second Logout
}

TEST(SessionLogout, ourLogoutTimesOutWithoutAnswer) {
  SessionRig r;
  r.logon();
  r.session->logout("bye");
  r.clock.advance_ms(1999);
  r.tick();
  EXPECT_FALSE(r.wire.closed);
  r.clock.advance_ms(1);
  r.tick();
  EXPECT_TRUE(r.wire.closed);
  EXPECT_TRUE(r.log.contains("no Logout answer"));
}

TEST(SessionLogout, resetOnLogoutResetsTheNumbers) {
  auto s = acceptor_settings();
  s.reset_on_logout = true;
  SessionRig r(s);
  r.logon();
  r.feed(r.peer.make("5"));
  EXPECT_EQ(r.session->next_sender_seq(), 1u);
  EXPECT_EQ(r.session->next_target_seq(), 1u);
}

TEST(SessionLogout, resetOnDisconnectResetsTheNumbers) {
  auto s = acceptor_settings();
  s.reset_on_disconnect = true;
  SessionRig r(s);
  r.logon();
  r.disconnect("peer closed");
  EXPECT_EQ(r.session->next_sender_seq(), 1u);
  EXPECT_EQ(r.app.logouts, 1);
}

// --- 14: Reject / BusinessMessageReject / validation ------------------------------------

TEST(SessionReject, businessRejectHelperSendsMessageJ) {
  SessionRig r;
  r.logon();
  r.feed(r.peer.make("ZZ"));
  ASSERT_EQ(r.app.received.size(), 1u);
  ASSERT_EQ(r.session->send_business_reject(2, "ZZ", 3, "Unsupported Message Type"), SendResult::ok);
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "j");
  EXPECT_EQ(out.get(tag::RefSeqNum), "2");
  EXPECT_EQ(out.get(tag::RefMsgType), "ZZ");
  EXPECT_EQ(out.get(tag::BusinessRejectReason), "3");
}

struct RejectAllValidator final : MessageValidator {
  Validation validate(const codec::Header& h, const codec::FieldIndex&) const noexcept override {
    if (h.msg_type == "D") return {false, RejectReason::required_tag_missing, 54, "Required tag missing"};
    return {};
  }
};

TEST(SessionReject, validationFailureIsAnsweredWithRejectCarryingReasonAndTag) {
  SessionRig r;
  RejectAllValidator v;
  r.session->set_validator(&v);
  r.logon();
  r.feed(r.peer.order("A"));
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "1");
  EXPECT_EQ(out.get(tag::RefTagID), "54");
  EXPECT_EQ(out.get(tag::RefSeqNum), "2");
  EXPECT_TRUE(r.app.received.empty());
  EXPECT_EQ(r.session->next_target_seq(), 3u);
}

TEST(SessionReject, dictionaryValidationRejectsAnOrderMissingARequiredField) {
  const char* dir = std::getenv("KITE_DICTIONARY_DIR");
  if (dir == nullptr) GTEST_SKIP() << "KITE_DICTIONARY_DIR not set (run through ctest)";
  auto s = acceptor_settings();
  s.validate = true;
  s.data_dictionary = dir;
  SessionRig r(s);
  r.logon();
  r.feed(r.peer.order("NO-TIME"));  // FIX.4.4 NewOrderSingle requires TransactTime (60)
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "1");
  EXPECT_EQ(out.get(tag::RefTagID), "60");
  EXPECT_TRUE(r.app.received.empty());
  r.feed(r.peer.make("D", [&](codec::MessageWriter& w) {
    w.add_string(tag::ClOrdID, "OK-1");
    w.add_char(tag::HandlInst, '1');
    w.add_string(tag::Symbol, "KITE");
    w.add_char(tag::Side, '1');
    w.add_timestamp(tag::TransactTime, r.clock.now_ns());
    w.add_uint(tag::OrderQty, 100);
    w.add_char(tag::OrdType, '2');
    w.add_decimal(tag::Price, {10125, -2});
  }));
  EXPECT_TRUE(r.wire.take().empty());
  ASSERT_EQ(r.app.received.size(), 1u);
  EXPECT_EQ(r.app.received[0].cl_ord_id, "OK-1");
  EXPECT_EQ(r.session->next_target_seq(), 4u);
}

TEST(SessionReject, missingDictionaryFailsAtSetUp) {
  FakeClock clock;
  NullLogger log;
  RecordingApp app;
  SessionRegistry reg(clock, log);
  auto s = acceptor_settings();
  s.validate = true;
  s.data_dictionary = "/nonexistent/FIX44.xml";
  EXPECT_THROW(reg.add(s, app), std::runtime_error);
}

// --- sending and back-pressure -----------------------------------------------------------

TEST(SessionSend, applicationSendBeforeLogonIsRefused) {
  SessionRig r;
  EXPECT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::not_logged_on);
}

TEST(SessionSend, backPressureIsReturnedAndNothingIsConsumed) {
  SessionRig r;
  r.logon();
  r.wire.blocked = true;
  EXPECT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::back_pressured);
  EXPECT_EQ(r.session->next_sender_seq(), 2u);
  r.wire.blocked = false;
  EXPECT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::ok);
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.seq(), 2u);
}

TEST(SessionSend, sessionMessagesUnderBackPressureWaitInOverflowAndKeepOrder) {
  SessionRig r;
  r.logon();
  r.wire.blocked = true;
  r.feed(r.peer.make("1", [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "T1"); }));
  r.feed(r.peer.make("1", [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "T2"); }));
  EXPECT_GT(r.session->overflow_pending(), 0u);
  EXPECT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::back_pressured);
  r.wire.blocked = false;
  r.tick();
  EXPECT_EQ(r.session->send("8", [](codec::MessageWriter&) {}), SendResult::ok);
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].get(tag::TestReqID), "T1");
  EXPECT_EQ(out[1].get(tag::TestReqID), "T2");
  EXPECT_EQ(out[2].type(), "8");
  EXPECT_EQ(out[2].seq(), 4u);
}

TEST(SessionSend, fullStoreIsLoggedOnceAndResendsBecomeGapFills) {
  const std::string dir = "/tmp/kite-session-full-" + std::to_string(::getpid());
  auto s = acceptor_settings();
  s.store.kind = StoreKind::file;
  s.store.path = dir;
  s.store.capacity_bytes = 8192;  // one page of records
  SessionRig r(s);
  r.logon();
  for (int i = 0; i < 60; ++i)
    ASSERT_EQ(r.session->send("8", [](codec::MessageWriter& w) { w.add_string(tag::Text, "0123456789"); }),
              SendResult::ok);
  EXPECT_TRUE(r.log.contains("store full"));
  r.wire.take();
  r.feed(r.peer.resend_request(60, 0));
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "4");
  EXPECT_EQ(out[0].get(tag::NewSeqNo), "62");
  std::filesystem::remove_all(dir);
}

// --- initiator ---------------------------------------------------------------------------

TEST(SessionInitiator, reconnectBackOffDoublesUpToTheMaximum) {
  FakeClock clock;
  MemoryLogger log;
  RecordingApp app;
  auto s = acceptor_settings();
  s.role = Role::initiator;
  s.reconnect_interval_ms = 1000;
  s.reconnect_max_ms = 5000;
  MemoryStore store;
  Session session(s, store, app, clock, log);
  EXPECT_EQ(session.next_connect_time(), clock.now_ns());
  const std::int64_t t0 = clock.now_ns();
  session.on_connect_failed();
  EXPECT_EQ(session.next_connect_time(), t0 + 1000 * kNsPerMs);
  session.on_connect_failed();
  EXPECT_EQ(session.next_connect_time(), t0 + 2000 * kNsPerMs);
  session.on_connect_failed();
  EXPECT_EQ(session.next_connect_time(), t0 + 4000 * kNsPerMs);
  session.on_connect_failed();
  EXPECT_EQ(session.next_connect_time(), t0 + 5000 * kNsPerMs);
}

// --- schedules ------------------------------------------------------------------------------

TEST(SessionSchedule, periodsHonourStartEndDaysAndOffset) {
  Schedule s;
  s.always = false;
  s.start_sec = parse_time_of_day("08:00:00");
  s.end_sec = parse_time_of_day("17:00:00");
  s.utc_offset_sec = parse_utc_offset("UTC+02:00");
  s.days = static_cast<std::uint8_t>(0x3e);  // Monday..Friday
  // 2023-11-14 is a Tuesday. 06:00 UTC = 08:00 local.
  const std::int64_t day = codec::days_from_civil(2023, 11, 14) * 86400 * kNsPerSec;
  EXPECT_FALSE(s.in_session(day + 5 * 3600 * kNsPerSec + 59 * 60 * kNsPerSec));
  EXPECT_TRUE(s.in_session(day + 6 * 3600 * kNsPerSec));
  EXPECT_EQ(s.period_start(day + 10 * 3600 * kNsPerSec), day + 6 * 3600 * kNsPerSec);
  EXPECT_FALSE(s.in_session(day + 15 * 3600 * kNsPerSec));  // 17:00 local
  // Saturday 2023-11-18 is not a trading day.
  const std::int64_t sat = codec::days_from_civil(2023, 11, 18) * 86400 * kNsPerSec;
  EXPECT_FALSE(s.in_session(sat + 8 * 3600 * kNsPerSec));
  EXPECT_EQ(s.next_start(sat), codec::days_from_civil(2023, 11, 20) * 86400 * kNsPerSec + 6 * 3600 * kNsPerSec);
}

TEST(SessionSchedule, periodAcrossMidnight) {
  Schedule s;
  s.always = false;
  s.start_sec = parse_time_of_day("22:00");
  s.end_sec = parse_time_of_day("06:00");
  const std::int64_t day = codec::days_from_civil(2023, 11, 14) * 86400 * kNsPerSec;
  EXPECT_TRUE(s.in_session(day + 23 * 3600 * kNsPerSec));
  EXPECT_TRUE(s.in_session(day + 86400 * kNsPerSec + 5 * 3600 * kNsPerSec));
  EXPECT_FALSE(s.in_session(day + 86400 * kNsPerSec + 7 * 3600 * kNsPerSec));
}

TEST(SessionSchedule, newPeriodResetsSequenceNumbersAtConnect) {
  auto s = acceptor_settings();
  s.schedule.always = false;
  s.schedule.start_sec = 0;
  s.schedule.end_sec = 0;  // daily, full day, from midnight UTC
  SessionRig r(s);
  r.session->set_next_sender_seq(40);
  r.session->set_next_target_seq(40);
  r.session->store().reset(r.clock.now_ns() - 2 * 86400 * kNsPerSec);  // created two days ago
  r.session->set_next_target_seq(40);
  r.feed(r.peer.logon());
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.seq(), 1u);
  EXPECT_TRUE(r.log.contains("new session period"));
}

TEST(SessionSchedule, endOfPeriodLogsOut) {
  auto s = acceptor_settings();
  s.schedule.always = false;
  const std::int64_t now_s = FakeClock().now_ns() / kNsPerSec;
  const std::int32_t sod = static_cast<std::int32_t>(now_s % 86400);
  s.schedule.start_sec = (sod + 86400 - 3600) % 86400;
  s.schedule.end_sec = (sod + 60) % 86400;
  SessionRig r(s);
  r.logon(100);
  r.clock.advance_s(59);
  r.feed(r.peer.make("0"));
  r.tick();
  EXPECT_TRUE(r.wire.take().empty());
  r.clock.advance_s(1);
  r.tick();
  const Sent out = only(r.wire.take());
  EXPECT_EQ(out.type(), "5");
}

}  // namespace
}  // namespace kite::session::test
