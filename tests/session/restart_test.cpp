// A session on a file store resumes after a crash of its process: numbers
// from the journal, and resends of messages sent before the crash.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

#include "support.hpp"

namespace kite::session::test {
namespace {

std::string cl_ord_id(int i) {
  std::string s = "C";
  s += std::to_string(i);
  return s;
}

TEST(SessionRestart, resumesNumbersAndServesResendsAfterKillMinusNine) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kite-restart-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto s = acceptor_settings();
  s.store.kind = StoreKind::file;
  s.store.path = dir.string();
  s.store.capacity_bytes = 1 << 20;

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    AcceptorRig r(s);
    r.feed(r.peer.logon());
    for (int i = 0; i < 20; ++i) {
      r.feed(r.peer.order(cl_ord_id(i)));
      r.session->send("8", [&](codec::MessageWriter& w) { w.add_string(tag::ClOrdID, cl_ord_id(i)); });
    }
    ::raise(SIGKILL);
    std::_Exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  AcceptorRig r(s);
  EXPECT_EQ(r.session->next_sender_seq(), 22u);
  EXPECT_EQ(r.session->next_target_seq(), 22u);
  r.peer.next_seq = 22;
  r.feed(r.peer.logon());
  auto out = r.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].seq(), 22u);
  // The peer lost our 10..21 and asks for them.
  r.feed(r.peer.make("2", [](codec::MessageWriter& w) {
    w.add_uint(tag::BeginSeqNo, 10);
    w.add_uint(tag::EndSeqNo, 0);
  }));
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

}  // namespace
}  // namespace kite::session::test
