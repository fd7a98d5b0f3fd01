// link::CommandPort: bounded (a full port refuses, nothing queued is lost),
// in order, drained only by the thread that holds the session, and its
// callers hear whether their command ran or was dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kite/link/command_port.hpp"
#include "kite/link/metrics.hpp"
#include "support/link_testing.hpp"

namespace kite::link::test {
namespace {

using Kind = Command::Kind;

Command send_of(const std::string& body) {
  Command c;
  c.kind = Kind::send;
  c.msg_type = "D";
  c.text = body;
  return c;
}

// Records what it ran, and on which thread; refuses (not now) while `hold`.
struct Recorder final : CommandPort::Runner {
  bool run(const Command& c, Answer& a) noexcept override {
    if (hold) return false;
    ran.push_back(std::string(c.msg_type) + ":" + std::string(c.text));
    thread = std::this_thread::get_id();
    a.ok = true;
    std::snprintf(a.text, sizeof a.text, "ran %s", std::string(c.text).c_str());
    return true;
  }
  std::vector<std::string> ran;
  std::thread::id thread;
  bool hold = false;
};

TEST(CommandPort, fullPortRefusesASendAndKeepsEveryOneItTook) {
  CommandPort port(512);
  int taken = 0;
  PortStatus st = PortStatus::ok;
  while ((st = port.post(send_of("55=S" + std::to_string(taken)))) == PortStatus::ok) ++taken;
  EXPECT_EQ(st, PortStatus::full);
  ASSERT_GT(taken, 3);
  // The commands' own room is still free: a full queue of sends keeps no Logout out.
  Command logout;
  logout.kind = Kind::shutdown;
  logout.text = "bye";
  EXPECT_EQ(port.post(logout), PortStatus::ok);

  Recorder r;
  EXPECT_EQ(port.drain(r), taken + 1);
  ASSERT_EQ(r.ran.size(), static_cast<std::size_t>(taken) + 1);
  for (int i = 0; i < taken; ++i) EXPECT_EQ(r.ran[static_cast<std::size_t>(i)], "D:55=S" + std::to_string(i));
  EXPECT_EQ(r.ran.back(), ":bye");
  EXPECT_FALSE(port.pending());
  EXPECT_EQ(port.post(send_of("55=again")), PortStatus::ok);  // drained: room again
}

TEST(CommandPort, sendLargerThanItsRoomIsTooLargeAndNotQueued) {
  CommandPort port(256);
  EXPECT_EQ(port.post(send_of(std::string(300, 'x'))), PortStatus::too_large);
  CommandPort no_sends;
  EXPECT_EQ(no_sends.post(send_of("55=S")), PortStatus::too_large);
  EXPECT_FALSE(port.pending());
  EXPECT_FALSE(no_sends.pending());
}

TEST(CommandPort, commandThatCannotRunYetStaysFirstAndKeepsTheOrder) {
  CommandPort port(1024);
  ASSERT_EQ(port.post(send_of("1")), PortStatus::ok);
  ASSERT_EQ(port.post(send_of("2")), PortStatus::ok);
  Recorder r;
  r.hold = true;
  EXPECT_EQ(port.drain(r), 0);
  EXPECT_TRUE(port.pending());
  r.hold = false;
  EXPECT_EQ(port.drain(r), 2);
  EXPECT_EQ(r.ran, (std::vector<std::string>{"D:1", "D:2"}));
}

// Records of every size, many laps round the ring: each comes out whole and in order.
TEST(CommandPort, recordsComeOutWholeAndInOrderAcrossManyLapsOfTheRing) {
  CommandPort port(300);
  Recorder r;
  int posted = 0;
  std::vector<std::string> want;
  for (int lap = 0; lap < 200; ++lap) {
    for (int k = 0; k < 3; ++k) {
      const std::string body(static_cast<std::size_t>((posted * 7) % 90), static_cast<char>('a' + posted % 26));
      if (port.post(send_of(body)) != PortStatus::ok) break;
      want.push_back("D:" + body);
      ++posted;
    }
    port.drain(r);
  }
  EXPECT_GT(posted, 400);
  EXPECT_EQ(r.ran, want);
}

// Producers on two threads, the holder on a third: everything is run by the
// holder's thread, each producer's commands in the order it posted them.
TEST(CommandPort, drainedOnTheHoldersThreadInEachProducersOrder) {
  CommandPort port(4096);
  constexpr int kEach = 2000;
  std::atomic<bool> done_posting{false};
  std::atomic<int> posting{2};
  auto producer = [&](char who) {
    for (int i = 0; i < kEach;) {
      if (port.post(send_of(std::string(1, who) + std::to_string(i))) == PortStatus::ok)
        ++i;
      else
        std::this_thread::yield();  // full: the caller hears it and tries again
    }
    if (--posting == 0) done_posting = true;
  };
  Recorder r;
  std::thread holder([&] {
    while (!done_posting.load() || port.pending()) port.drain(r);
  });
  std::thread a(producer, 'a'), b(producer, 'b');
  a.join();
  b.join();
  const std::thread::id holder_id = holder.get_id();
  holder.join();
  ASSERT_EQ(r.ran.size(), 2u * kEach);
  EXPECT_EQ(r.thread, holder_id);
  int next_a = 0, next_b = 0;
  for (const std::string& s : r.ran) {
    const int n = std::stoi(s.substr(3));
    if (s[2] == 'a')
      EXPECT_EQ(n, next_a++);
    else
      EXPECT_EQ(n, next_b++);
  }
}

struct HeldSession {
  HeldSession() : registry(clock, log) {
    session::SessionSettings s = session::test::acceptor_settings();
    session = &registry.add(s, app);
  }
  session::FakeClock clock;
  session::MemoryLogger log;
  RecordingApp app;
  session::SessionRegistry registry;
  session::Session* session = nullptr;
};

TEST(CommandPort, callerGetsTheAnswerTheHoldersThreadWrote) {
  HeldSession h;
  ASSERT_TRUE(h.session->try_bind());
  CommandPort port;
  Recorder r;
  std::atomic<bool> stop{false};
  std::thread holder([&] {
    while (!stop.load()) port.drain(r);
  });
  Command c;
  c.kind = Kind::set_seq;
  c.text = "x";
  Answer a;
  EXPECT_EQ(port.call(c, *h.session, 10000, a), CommandPort::CallOutcome::done);
  EXPECT_TRUE(a.ok);
  EXPECT_STREQ(a.text, "ran x");
  const std::thread::id holder_id = holder.get_id();
  stop = true;
  holder.join();
  EXPECT_EQ(r.thread, holder_id);
}

// A logout called on another thread for a held session; constructed once
// it is queued.
struct PendingCall {
  explicit PendingCall(CommandPort& port) : port_(port) {
    EXPECT_TRUE(h.session->try_bind());
    caller = std::thread([this] {
      Command c;
      c.kind = Kind::logout;
      Answer a;
      outcome = port_.call(c, *h.session, 10000, a);
    });
    while (!port_.pending()) std::this_thread::yield();
  }
  CommandPort::CallOutcome join() {
    caller.join();
    return outcome.load();
  }
  HeldSession h;
  CommandPort& port_;
  std::atomic<CommandPort::CallOutcome> outcome{CommandPort::CallOutcome::timed_out};
  std::thread caller;
};

TEST(CommandPort, newHolderDropsWhatWasQueuedAndItsCallerHearsIt) {
  CommandPort port;
  PendingCall call(port);
  port.discard();  // as a connection taking the session does
  EXPECT_EQ(call.join(), CommandPort::CallOutcome::dropped);
  EXPECT_FALSE(port.pending());
}

TEST(CommandPort, callForASessionNobodyHoldsReturnsUnheld) {
  CommandPort port;
  PendingCall call(port);
  call.h.session->unbind();  // its connection ended without a turn
  EXPECT_EQ(call.join(), CommandPort::CallOutcome::unheld);
}

// Through a connection: a command posted before the session was bound is not
// its connection's (dropped at the Logon); one posted after runs at the
// connection's next timer turn, not before.
TEST(LinkCommandPort, connectionRunsItsSessionsCommandsAtItsTurnAndDropsOlderOnes) {
  AcceptorRig rig;
  CommandPort port;
  CommandPort* ports[] = {&port};
  rig.conn->serve(ports, 1);
  Command stale;
  stale.kind = Kind::logout;
  stale.text = "stale";
  ASSERT_EQ(port.post(stale), PortStatus::ok);
  rig.logon();
  EXPECT_FALSE(port.pending());
  Command c;
  c.kind = Kind::logout;
  c.text = "maintenance";
  ASSERT_EQ(port.post(c), PortStatus::ok);
  rig.feed(rig.peer.order("C1"));
  EXPECT_TRUE(rig.wire.take().empty());  // on_data does not look at the port
  rig.tick();
  const auto out = rig.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "5");
  EXPECT_EQ(out[0].get(tag::Text), "maintenance");
  EXPECT_FALSE(port.pending());
}

// The link counts what the session reports sending: a Reject under its
// reason, a ResendRequest, and every byte that reached the wire.
TEST(LinkCommandPort, countersFollowWhatTheSessionReportsSending) {
  AcceptorRig rig;
  Metrics metrics(1);
  rig.conn->observe(&metrics, nullptr);
  rig.logon();
  const SessionMetrics& m = metrics.session(0);
  const std::uint64_t logon_bytes = m.bytes_out.get();
  Peer::Opts no_orig;
  no_orig.poss_dup = true;
  no_orig.orig_sending_time = false;
  rig.feed(rig.peer.order("C1", no_orig));  // PossDupFlag without OrigSendingTime: Reject 1
  Peer::Opts ahead;
  ahead.seq = rig.peer.next_seq + 3;
  rig.feed(rig.peer.order("C2", ahead));  // a gap: ResendRequest
  EXPECT_EQ(m.bytes_out.get() - logon_bytes, rig.wire.bytes.size());
  const auto out = rig.wire.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), "3");
  EXPECT_EQ(out[1].type(), "2");
  EXPECT_EQ(m.messages_out.get(), 3u);  // the Logon answer too
  EXPECT_EQ(m.rejects_out[reject_slot(true, 1)].get(), 1u);
  EXPECT_EQ(m.resend_requests_out.get(), 1u);
}

}  // namespace
}  // namespace kite::link::test
