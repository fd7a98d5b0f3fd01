// kite-initiator's order source allocates nothing per order: a replaced
// global operator new counts allocations while thousands of orders go out at
// a rate from timer turns (encoded, stored, committed) and their
// ExecutionReports come back (framed, indexed, checked, timed).
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <cstdio>
#include <string>

#include "kite/app/initiator_daemon.hpp"
#include "support/link_testing.hpp"

namespace kite::app::test {
namespace {

using link::test::FakeWire;
using session::test::Peer;
namespace tag = codec::tag;

TEST(InitiatorAllocations, noAllocationPerOrderSentOrAnswered) {
  constexpr int kOrders = 5000;
  OrderSourceConfig orders;
  orders.kind = OrderSourceConfig::Kind::rate;
  orders.rate = 1000;  // one order per simulated millisecond
  orders.count = kOrders;
  OrderFlow flow(orders, 1);
  session::FakeClock clock;
  session::NullLogger log;
  session::SessionRegistry registry(clock, log);
  session::SessionSettings s;
  s.role = session::Role::initiator;
  s.sender_comp_id = "C1";
  s.target_comp_id = "KITE";
  session::Session& session =
      registry.add(s, flow.application(0, s), std::make_unique<session::MemoryStore>(32u << 20, 1u << 16));
  link::SessionConnection conn(session, clock, log);
  FakeWire wire;
  wire.bytes.reserve(16u << 20);
  conn.on_connected(wire, clock.now_ns());
  Peer acceptor(clock, "FIX.4.4", "KITE", "C1");
  const std::string answer = acceptor.logon();
  conn.on_data(answer.data(), answer.size(), clock.now_ns());
  ASSERT_TRUE(session.logged_on());
  // The reports, rendered before counting: order k goes out as MsgSeqNum k + 2.
  std::vector<std::string> reports;
  char id[32];
  for (int k = 0; k < kOrders; ++k) {
    std::snprintf(id, sizeof id, "C1-%d", k + 2);
    reports.push_back(acceptor.make("8", [&](codec::MessageWriter& w) {
      w.add_string(tag::OrderID, "O");
      w.add_string(tag::ExecID, "E");
      w.add_string(tag::ClOrdID, id);
      w.add_char(tag::ExecType, '0');
      w.add_char(tag::OrdStatus, '0');
    }));
  }
  (void)flow.interval_report();  // its snapshot buffer, made before

  const long before = static_cast<long>(kite::test::allocations());
  std::size_t answered = 0;
  for (int turn = 0; turn < 2 * kOrders && answered < reports.size(); ++turn) {
    clock.advance_ms(1);
    flow.on_timer(0, session);
    conn.on_timer(clock.now_ns());
    for (; answered < flow.sent(0); ++answered)
      conn.on_data(reports[answered].data(), reports[answered].size(), clock.now_ns());
  }
  const long allocs = static_cast<long>(kite::test::allocations()) - before;

  EXPECT_EQ(allocs, 0);
  EXPECT_EQ(flow.sent(0), static_cast<std::uint64_t>(kOrders));
  EXPECT_EQ(flow.reports(0), static_cast<std::uint64_t>(kOrders));
  const std::string line = flow.interval_report();
  EXPECT_NE(line.find("sent 5000, reports 5000"), std::string::npos) << line;
  EXPECT_NE(line.find("(5000 answered)"), std::string::npos) << line;
}

}  // namespace
}  // namespace kite::app::test
