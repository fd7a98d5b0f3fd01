// The per-message path after logon allocates nothing: a replaced global
// operator new counts allocations while a few thousand application messages
// go in (framed, indexed, checked, delivered) and their replies go out
// (encoded, stored, committed).
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include "support.hpp"

namespace kite::session::test {
namespace {

class EchoApp final : public Application {
 public:
  void on_message(Session& s, const codec::Header&, const codec::FieldIndex& ix) noexcept override {
    std::string_view id;
    ix.get(tag::ClOrdID, id);
    s.send("8", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, id);
      w.add_char(tag::ExecType, '0');
      w.add_char(tag::OrdStatus, '0');
    });
    ++count;
  }
  int count = 0;
};

TEST(SessionAllocations, noAllocationPerApplicationMessageAfterLogon) {
  FakeClock clock;
  NullLogger log;
  EchoApp app;
  SessionRegistry reg(clock, log);
  auto s = acceptor_settings();
  Session& session = reg.add(s, app, std::make_unique<MemoryStore>(16u << 20, 1u << 16));
  SessionConnection conn(reg, {});
  FakeWire wire;
  wire.bytes.reserve(8u << 20);
  conn.on_connected(wire, 0);
  Peer peer(clock);
  const std::string logon = peer.logon();
  conn.on_data(logon.data(), logon.size(), 0);
  ASSERT_TRUE(session.logged_on());
  constexpr int kMessages = 5000;
  std::vector<std::string> orders;
  orders.reserve(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    std::string id = "ORDER-";
    id += std::to_string(i);
    orders.push_back(peer.order(id));
  }
  const long before = static_cast<long>(kite::test::allocations());
  for (const std::string& o : orders) {
    conn.on_data(o.data(), o.size(), 0);
    conn.on_timer(0);
  }
  const long after = static_cast<long>(kite::test::allocations());
  EXPECT_EQ(app.count, kMessages);
  EXPECT_EQ(after - before, 0) << "allocations across " << kMessages << " messages";
  EXPECT_EQ(session.next_sender_seq(), static_cast<std::uint64_t>(kMessages + 2));
}

}  // namespace
}  // namespace kite::session::test
