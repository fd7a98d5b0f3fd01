// The ack mode's per-order path allocates nothing: a replaced global operator
// new counts allocations while thousands of NewOrderSingles go through the
// session (framed, indexed, checked) and the application (ExecutionReport
// encoded, stored, committed) after logon.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "kite/link/message_log.hpp"
#include "kite/link/metrics.hpp"

#include "app_rig.hpp"

namespace kite::app::test {
namespace {

// One acceptor session PEER1 -> KITE with the ack application and a memory store.
struct AckSession {
  AckSession() : registry(clock, log), ids(1), app(Mode::ack, ids) {
    session::SessionSettings s;
    s.role = session::Role::acceptor;
    s.sender_comp_id = "KITE";
    s.target_comp_id = "PEER1";
    registry.add(s, app, std::make_unique<session::MemoryStore>(32u << 20, 1u << 16));
  }
  session::FakeClock clock;
  session::NullLogger log;
  session::SessionRegistry registry;
  IdSource ids;
  OrderApplication app;
};

TEST(AckAllocations, noAllocationPerOrderThroughSessionAndApplication) {
  constexpr int kOrders = 5000;
  AckSession a;
  session::FakeClock& clock = a.clock;
  session::SessionRegistry& registry = a.registry;
  OrderApplication& app = a.app;
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

// The operators' counters (kite-admin, metrics) and the FIX message log on:
// still nothing allocated per order, and no lock taken (the counters are
// relaxed atomics; the log copies into a buffer made before).
TEST(AckAllocations, noAllocationPerOrderWithCountersAndMessageLog) {
  constexpr int kOrders = 5000;
  AckSession a;
  session::FakeClock& clock = a.clock;
  session::SessionRegistry& registry = a.registry;
  OrderApplication& app = a.app;
  link::Metrics metrics(1);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("kite-alloc-" + std::to_string(::getpid()) + ".messages")).string();
  link::MessageLog mlog(path, 1u << 30, 0);
  mlog.prepare();
  link::MessageLog* logs[] = {&mlog};
  metrics.session(0).message_log.store(true);
  link::SessionConnection conn(registry, {});
  conn.observe(&metrics, logs);
  FakeWire wire;
  wire.bytes.reserve(16u << 20);
  conn.on_connected(wire, clock.now_ns());
  Peer peer(clock, "FIX.4.4", "PEER1", "KITE");
  const std::string logon = peer.logon();
  conn.on_data(logon.data(), logon.size(), clock.now_ns());
  conn.on_timer(clock.now_ns());  // the log's file is opened on its first flush
  std::string orders;
  char id[16];
  for (int i = 0; i < kOrders; ++i) {
    std::snprintf(id, sizeof id, "C%d", i);
    orders += peer.order(id);
  }
  metrics.this_thread();  // the thread's histogram slot is claimed once, before

  const long before = static_cast<long>(kite::test::allocations());
  std::size_t fed = 0;
  while (fed < orders.size()) {
    const std::size_t chunk = std::min<std::size_t>(4096, orders.size() - fed);
    fed += conn.on_data(orders.data() + fed, chunk, clock.now_ns());
    conn.on_timer(clock.now_ns());
  }
  const long allocs = static_cast<long>(kite::test::allocations()) - before;
  mlog.close();

  EXPECT_EQ(allocs, 0);
  EXPECT_EQ(app.stats().orders, static_cast<std::uint64_t>(kOrders));
  EXPECT_EQ(metrics.session(0).messages_in.get(), static_cast<std::uint64_t>(kOrders) + 1);
  EXPECT_EQ(metrics.session(0).messages_out.get(), static_cast<std::uint64_t>(kOrders) + 1);
  EXPECT_EQ(metrics.session(0).bytes_out.get(), wire.bytes.size());
  EXPECT_EQ(metrics.session(0).next_in.load(), static_cast<std::uint64_t>(kOrders) + 2);
  EXPECT_EQ(std::filesystem::file_size(path) > orders.size() + wire.bytes.size(), true);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kite::app::test
