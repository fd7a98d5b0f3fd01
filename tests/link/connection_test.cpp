// The initiator side of the link: InitiatorFactory's one connection, bound
// to its session, which sends its Logon when connected.
#include <gtest/gtest.h>

#include "support/link_testing.hpp"

namespace kite::link::test {
namespace {

using session::FakeClock;
using session::MemoryLogger;
using session::MemoryStore;
using session::Role;
using session::Session;

TEST(LinkInitiator, sendsLogonWithCredentialsAndGoesActiveOnTheAnswer) {
  FakeClock clock;
  MemoryLogger log;
  RecordingApp app;
  auto s = acceptor_settings("FIXT.1.1");
  s.role = Role::initiator;
  s.username = "user";
  s.password = "secret";
  s.send_reset_seq_num_flag = true;
  MemoryStore store;
  Session session(s, store, app, clock, log);
  InitiatorFactory factory(session, clock, log);
  engine::Protocol* p = factory.open(1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(factory.open(2), nullptr);  // one connection at a time
  FakeWire wire;
  p->on_connected(wire, 0);
  auto out = wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "A");
  EXPECT_EQ(out[0].get(tag::Username), "user");
  EXPECT_EQ(out[0].get(tag::Password), "secret");
  EXPECT_EQ(out[0].get(tag::ResetSeqNumFlag), "Y");
  EXPECT_EQ(out[0].get(tag::DefaultApplVerID), "9");
  EXPECT_EQ(out[0].get(tag::HeartBtInt), "30");
  Peer peer(clock, "FIXT.1.1");
  const std::string answer = peer.logon(30, true);
  p->on_data(answer.data(), answer.size(), 0);
  EXPECT_TRUE(session.logged_on());
  EXPECT_EQ(app.logons, 1);
  EXPECT_TRUE(wire.take().empty());
}

}  // namespace
}  // namespace kite::link::test
