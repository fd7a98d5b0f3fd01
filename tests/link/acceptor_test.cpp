// The acceptor side of the link: a connection is bound to its session by
// the first Logon (the registry identifies it) or refused, within the
// AcceptorLimits; sessions on different connections stay apart.
#include <gtest/gtest.h>

#include "support/link_testing.hpp"

namespace kite::link::test {
namespace {

using session::FakeClock;
using session::MemoryLogger;
using session::Session;
using session::SessionRegistry;

struct Acceptor {
  explicit Acceptor(AcceptorLimits limits = {}) : registry(clock, log) {
    auto s = acceptor_settings();
    s.password = "pw";
    session = &registry.add(s, app);
    factory = std::make_unique<AcceptorFactory>(registry, limits);
  }
  FakeClock clock;
  MemoryLogger log;
  RecordingApp app;
  SessionRegistry registry;
  Session* session;
  std::unique_ptr<AcceptorFactory> factory;

  // A connection from the factory (connection id `id`), writing into `w`.
  engine::Protocol* connect(FakeWire& w, int id = 1) {
    engine::Protocol* p = factory->open(id);
    p->on_connected(w, 0);
    return p;
  }
};

std::size_t feed(engine::Protocol* p, const std::string& s) { return p->on_data(s.data(), s.size(), 0); }

TEST(LinkAcceptor, unknownSessionIsRefusedAndLoggedWithItsReason) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer stranger(a.clock, "FIX.4.4", "STRANGER", "KITE");
  feed(p, stranger.logon(30, false, "pw"));
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "unknown session");
  EXPECT_TRUE(w.take().empty());
  EXPECT_TRUE(a.log.contains("Logon refused (unknown session): FIX.4.4:STRANGER->KITE"));
}

// The session never sees it: the connection is refused before any is bound.
TEST(LinkAcceptor, firstMessageNotALogonIsRefusedBeforeASessionIsBound) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.order("X1"));
  EXPECT_EQ(w.close_reason, "first message not a Logon");
  EXPECT_TRUE(w.take().empty());
  EXPECT_FALSE(a.session->connected());
  EXPECT_TRUE(a.log.contains("first message is not a Logon (35=D)"));
}

TEST(LinkAcceptor, wrongBeginStringIsAnUnknownSession) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock, "FIX.4.2");
  feed(p, peer.logon(30, false, "pw"));
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "unknown session");
}

TEST(LinkAcceptor, wrongPasswordIsRefusedAndLogged) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "nope"));
  EXPECT_TRUE(w.closed);
  EXPECT_TRUE(a.log.contains("wrong password"));
  EXPECT_FALSE(a.session->logged_on());
}

TEST(LinkAcceptor, secondLogonForALiveSessionIsRefusedWithoutDisturbingIt) {
  Acceptor a;
  FakeWire w1, w2;
  auto* p1 = a.factory->open(1);
  auto* p2 = a.factory->open(2);
  p1->on_connected(w1, 0);
  p2->on_connected(w2, 0);
  Peer peer1(a.clock), peer2(a.clock);
  feed(p1, peer1.logon(30, false, "pw"));
  ASSERT_TRUE(a.session->logged_on());
  w1.take();
  feed(p2, peer2.logon(30, false, "pw"));
  EXPECT_TRUE(w2.closed);
  EXPECT_TRUE(w2.take().empty());
  EXPECT_TRUE(a.log.contains("session already logged on"));
  // The live one carries on.
  EXPECT_TRUE(a.session->logged_on());
  EXPECT_FALSE(w1.closed);
  p2->on_disconnected("refused", 0);
  a.factory->release(p2);
  feed(p1, peer1.order("X"));
  EXPECT_EQ(a.app.received.size(), 1u);
  EXPECT_EQ(a.session->next_target_seq(), 3u);
}

TEST(LinkAcceptor, connectionWithoutLogonTimesOut) {
  Acceptor a(AcceptorLimits{.max_connections = 4, .logon_timeout_ms = 3000});
  FakeWire w;
  auto* p = a.connect(w);
  a.clock.advance_ms(2999);
  p->on_timer(0);
  EXPECT_FALSE(w.closed);
  a.clock.advance_ms(1);
  p->on_timer(0);
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "logon timeout");
  EXPECT_TRUE(a.log.contains("no Logon within 3000 ms"));
}

TEST(LinkAcceptor, maximumConnectionsIsEnforcedAndLogged) {
  Acceptor a(AcceptorLimits{.max_connections = 2});
  auto* p1 = a.factory->open(1);
  auto* p2 = a.factory->open(2);
  EXPECT_NE(p1, nullptr);
  EXPECT_NE(p2, nullptr);
  EXPECT_EQ(a.factory->open(3), nullptr);
  EXPECT_TRUE(a.log.contains("MaxConnections (2)"));
  a.factory->release(p1);
  EXPECT_NE(a.factory->open(4), nullptr);
}

TEST(LinkAcceptor, oversizedMessageBeforeLogonIsRefused) {
  Acceptor a(AcceptorLimits{.max_connections = 2, .logon_timeout_ms = 1000, .max_message_size = 128});
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  const std::string big = peer.make("A", [](codec::MessageWriter& m) {
    m.add_uint(tag::EncryptMethod, 0);
    m.add_uint(tag::HeartBtInt, 30);
    m.add_string(tag::Text, std::string(300, 'x'));
  });
  feed(p, big);
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "message too large");
  EXPECT_TRUE(a.log.contains("MaxMessageSize"));
}

TEST(LinkAcceptor, aSessionIsBoundToOneConnectionAtATime) {
  Acceptor a;
  EXPECT_TRUE(a.session->try_bind());
  EXPECT_FALSE(a.session->try_bind());
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "session already logged on");
  a.session->unbind();
  FakeWire w2;
  auto* p2 = a.connect(w2, 2);
  Peer peer2(a.clock);
  feed(p2, peer2.logon(30, false, "pw"));
  EXPECT_TRUE(a.session->logged_on());
  p2->on_disconnected("gone", 0);
  EXPECT_FALSE(a.session->bound());
}

TEST(LinkAcceptor, sessionsAreIndependent) {
  FakeClock clock;
  MemoryLogger log;
  RecordingApp app1, app2;
  SessionRegistry reg(clock, log);
  auto s1 = acceptor_settings();
  auto s2 = acceptor_settings();
  s2.target_comp_id = "OTHER";
  Session& a = reg.add(s1, app1);
  Session& b = reg.add(s2, app2);
  AcceptorFactory f(reg, {});
  FakeWire w1, w2;
  auto* p1 = f.open(1);
  auto* p2 = f.open(2);
  p1->on_connected(w1, 0);
  p2->on_connected(w2, 0);
  Peer peer1(clock), peer2(clock, "FIX.4.4", "OTHER", "KITE");
  feed(p1, peer1.logon());
  feed(p2, peer2.logon());
  EXPECT_TRUE(a.logged_on());
  EXPECT_TRUE(b.logged_on());
  // Garbage on one connection does not touch the other.
  feed(p1, std::string("8=FIX.4.4\x01" "9=5\x01" "garbage\x01" "10=000\x01"));
  feed(p1, peer1.order("Z", {.seq = 1}));  // too low: session 1 is logged out
  EXPECT_TRUE(w1.closed);
  EXPECT_FALSE(w2.closed);
  feed(p2, peer2.order("Y"));
  EXPECT_EQ(app2.received.size(), 1u);
  EXPECT_THROW(reg.add(s1, app1), std::invalid_argument);
}

}  // namespace
}  // namespace kite::link::test
