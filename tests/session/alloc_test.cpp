// The session's per-message path after logon allocates nothing: a replaced
// global operator new counts allocations while a few thousand application
// messages go in (checked, delivered) and their replies go out (encoded,
// stored, committed). The link's path is counted by the app's ack test.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include "support/session_testing.hpp"

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
  BasicSessionRig<EchoApp> r(acceptor_settings(), 10000, std::make_unique<MemoryStore>(16u << 20, 1u << 16));
  r.wire.bytes.reserve(8u << 20);
  r.logon();
  constexpr int kMessages = 5000;
  std::vector<std::string> orders;
  orders.reserve(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    std::string id = "ORDER-";
    id += std::to_string(i);
    orders.push_back(r.peer.order(id));
  }
  const long before = static_cast<long>(kite::test::allocations());
  for (const std::string& o : orders) {
    r.feed(o);
    r.tick();
  }
  const long after = static_cast<long>(kite::test::allocations());
  EXPECT_EQ(r.app.count, kMessages);
  EXPECT_EQ(after - before, 0) << "allocations across " << kMessages << " messages";
  EXPECT_EQ(r.session->next_sender_seq(), static_cast<std::uint64_t>(kMessages + 2));
}

}  // namespace
}  // namespace kite::session::test
