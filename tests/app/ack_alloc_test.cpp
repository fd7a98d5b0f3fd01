// The ack mode's per-order path allocates nothing: a replaced global operator
// new counts allocations while thousands of NewOrderSingles go through the
// session (framed, indexed, checked) and the application (ExecutionReport
// encoded, stored, committed) after logon.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "app_rig.hpp"

namespace kite::app::test {
namespace {

TEST(AckAllocations, noAllocationPerOrderThroughSessionAndApplication) {
  constexpr int kOrders = 5000;
  session::FakeClock clock;
  session::NullLogger log;
  session::SessionRegistry registry(clock, log);
  IdSource ids(1);
  OrderApplication app(Mode::ack, ids);
  session::SessionSettings s;
  s.role = session::Role::acceptor;
  s.sender_comp_id = "KITE";
  s.target_comp_id = "PEER1";
  registry.add(s, app, std::make_unique<session::MemoryStore>(32u << 20, 1u << 16));
  link::SessionConnection conn(registry, {});
  FakeWire wire;
  wire.bytes.reserve(16u << 20);
  conn.on_connected(wire, clock.now_ns());
  Peer peer(clock, "FIX.4.4", "PEER1", "KITE");
  const std::string logon = peer.logon();
  conn.on_data(logon.data(), logon.size(), clock.now_ns());
  // Every order rendered before counting.
  std::string orders;
  char id[16];
  for (int i = 0; i < kOrders; ++i) {
    std::snprintf(id, sizeof id, "C%d", i);
    orders += peer.order(id);
  }
  orders.reserve(orders.size());

  const long before = static_cast<long>(kite::test::allocations());
  std::size_t fed = 0;
  while (fed < orders.size()) {
    const std::size_t chunk = std::min<std::size_t>(4096, orders.size() - fed);
    fed += conn.on_data(orders.data() + fed, chunk, clock.now_ns());
  }
  const long allocs = static_cast<long>(kite::test::allocations()) - before;

  EXPECT_EQ(allocs, 0);
  EXPECT_EQ(app.stats().orders, static_cast<std::uint64_t>(kOrders));
  EXPECT_EQ(app.stats().send_failures, 0u);
  const auto out = session::test::decode_all(wire.bytes);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(kOrders) + 1);  // Logon answer + one report per order
  std::snprintf(id, sizeof id, "C%d", kOrders - 1);
  EXPECT_EQ(out.back().get(tag::ClOrdID), id);
  EXPECT_EQ(out.back().get(tag::ExecType), "0");
}

}  // namespace
}  // namespace kite::app::test
