// A session on a file store resumes after a crash of its process: numbers
// from the journal, and resends of messages sent before the crash.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <filesystem>

#include "support/session_testing.hpp"

namespace kite::session::test {
namespace {

std::string cl_ord_id(int i) {
  std::string s = "C";
  s += std::to_string(i);
  return s;
}

// Acceptor settings on a file store in a fresh folder under the system's temp folder.
SessionSettings file_settings(const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  auto s = acceptor_settings();
  s.store.kind = StoreKind::file;
  s.store.path = dir.string();
  s.store.capacity_bytes = 1 << 20;
  return s;
}

// Runs `child` in a forked process that must die by a signal (its SIGKILL).
template <class Child>
void run_until_killed(Child child) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    child();
    std::_Exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
}

TEST(SessionRestart, resumesNumbersAndServesResendsAfterKillMinusNine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kite-restart-" + std::to_string(::getpid()));
  const SessionSettings s = file_settings(dir);
  run_until_killed([&] {
    SessionRig r(s);
    r.feed(r.peer.logon());
    for (int i = 0; i < 20; ++i) {
      r.feed(r.peer.order(cl_ord_id(i)));
      r.session->send("8", [&](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, cl_ord_id(i)); });
    }
    ::raise(SIGKILL);
  });

  SessionRig r(s);
  EXPECT_EQ(r.session->next_sender_seq(), 22u);
  EXPECT_EQ(r.session->next_target_seq(), 22u);
  r.peer.next_seq = 22;
  r.feed(r.peer.logon());
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq(), 22u);
  // The peer lost our 10..21 and asks for them.
  r.feed(r.peer.resend_request(10, 0));
  out = r.wire.take();
  ASSERT_EQ(out.size(), 13u);  // 10..21 resent, 22 (Logon) as a gap fill
  EXPECT_EQ(out[0].seq(), 10u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "C8");
  EXPECT_EQ(out[0].get(tag::PossDupFlag), "Y");
  EXPECT_EQ(out[11].get(tag::ClOrdID), "C19");
  EXPECT_EQ(out[12].type(), "4");
  EXPECT_EQ(out[12].get(tag::NewSeqNo), "23");
  fs::remove_all(dir);
}

// Answers each order with two reports (New, then Fill), and in a child
// process can die by SIGKILL in the middle of handling one order: after its
// first report (`after_reports` 1) or after both (2), before the session has
// finished with the message.
class TwoReportApp final : public Application {
 public:
  void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    std::string_view id;
    ix.get(tag::ClOrdID, id);
    for (int k = 1; k <= 2; ++k) {
      s.send("8", [&](codec::MessageWriter& w) {
        w.add_string(tag::ClOrdID, id);
        w.add_char(tag::ExecType, k == 1 ? '0' : 'F');
      });
      if (id == kill_at && k == after_reports) ::raise(SIGKILL);
    }
    (void)h;
  }
  std::string kill_at;
  int after_reports = 0;
};

using FileRig = BasicSessionRig<TwoReportApp>;

class SessionCrashWindow : public ::testing::TestWithParam<int> {};

// The kill lands while an order is being handled (its number taken, some or
// all of its reports stored, none handed to the socket yet): after the
// restart the order is neither lost nor answered twice. Its number was not
// committed, so Kite asks for it again and answers it once.
TEST_P(SessionCrashWindow, orderKilledMidHandlingIsAskedForAgainAndAnsweredOnce) {
  namespace fs = std::filesystem;
  const int after_reports = GetParam();
  const fs::path dir =
      fs::temp_directory_path() / ("kite-window-" + std::to_string(::getpid()) + "-" + std::to_string(after_reports));
  const SessionSettings s = file_settings(dir);
  run_until_killed([&] {
    FileRig r(s);
    r.app.kill_at = "C10";
    r.app.after_reports = after_reports;
    r.feed(r.peer.logon());
    for (int i = 0; i <= 10; ++i) r.feed(r.peer.order(cl_ord_id(i)));  // C0..C9: seq 2..11, reports 2..21
  });

  FileRig r(s);
  EXPECT_EQ(r.session->next_target_seq(), 12u);  // C10 (12) not consumed
  EXPECT_EQ(r.session->next_sender_seq(), 22u);  // its report(s) dropped with the unfinished batch
  EXPECT_TRUE(r.log.contains(std::to_string(after_reports) +
                             " message(s) of an inbound message unfinished at the last stop were dropped (never "
                             "sent); expecting 12 again"));
  // The peer sent C10 as 12 and never heard back; it logs on as 13.
  r.peer.next_seq = 13;
  r.feed(r.peer.logon());
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "A");
  EXPECT_EQ(out[0].seq(), 22u);
  EXPECT_EQ(out[1].type(), "2");
  EXPECT_EQ(out[1].get(tag::BeginSeqNo), "12");
  // It resends C10 as a possible duplicate, then gap-fills over its Logon.
  Peer::Opts dup;
  dup.seq = 12;
  dup.poss_dup = true;
  r.feed(r.peer.order("C10", dup));
  Peer::Opts fill_at;
  fill_at.seq = 13;
  fill_at.poss_dup = true;
  r.feed(r.peer.make(
      "4",
      [](codec::MessageWriter& w) {
        w.add_bool(tag::GapFillFlag, true);
        w.add_uint(tag::NewSeqNo, 14);
      },
      fill_at));
  out = r.wire.take();
  ASSERT_EQ(out.size(), 2u);  // C10 answered once: New and Fill
  EXPECT_EQ(out[0].get(tag::ClOrdID), "C10");
  EXPECT_EQ(out[0].get(tag::ExecType), "0");
  EXPECT_EQ(out[0].seq(), 24u);
  EXPECT_EQ(out[1].get(tag::ClOrdID), "C10");
  EXPECT_EQ(out[1].get(tag::ExecType), "F");
  EXPECT_EQ(r.session->next_target_seq(), 14u);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AfterReports, SessionCrashWindow, ::testing::Values(1, 2));

}  // namespace
}  // namespace kite::session::test
