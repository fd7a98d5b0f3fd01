// The acceptor side of the link: a connection is bound to its session by
// the first Logon (the registry identifies it) or refused, within the
// AcceptorLimits; sessions on different connections stay apart.
#include <gtest/gtest.h>

#include <cstdio>

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

// A BeginString Kite does not speak at all: refused at once, not held as
// garbage until the logon timeout.
TEST(LinkAcceptor, logonWithABeginStringKiteDoesNotSpeakIsRefusedAtOnce) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock, "FIX.3.9");
  feed(p, peer.logon(30, false, "pw"));
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "unknown BeginString");
  EXPECT_TRUE(w.take().empty());
  EXPECT_EQ(a.log.lines().size(), 1u);
  EXPECT_TRUE(a.log.contains("Logon with BeginString FIX.3.9, not one Kite speaks"));
}

TEST(LinkAcceptor, aBeginStringKiteDoesNotSpeakAfterLogonIsALogout) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  ASSERT_TRUE(a.session->logged_on());
  (void)w.take();
  Peer odd(a.clock, "FIX.3.9");
  odd.next_seq = 2;
  feed(p, odd.make("0"));
  EXPECT_FALSE(w.closed);
  EXPECT_EQ(only(w.take()).type(), "5");
  feed(p, peer.make("5", [](codec::MessageWriter&) {}, {.seq = 2}));
  EXPECT_TRUE(w.closed);
}

// A field with tag 0 reaches the session through the link: Reject 0, not garbage.
TEST(LinkAcceptor, aTagThatIsNoNumberIsRejectedNotDiscarded) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  (void)w.take();
  std::string m = peer.make("0", [](codec::MessageWriter& mw) { mw.add_string(999, "X"); });
  m.replace(m.find("\x01"
                   "999="),
            5,
            "\x01"
            "000=");
  m.resize(m.size() - 7);
  unsigned sum = 0;
  for (const unsigned char c : m) sum += c;
  char cs[16];
  std::snprintf(cs, sizeof cs, "10=%03u\x01", sum % 256);
  feed(p, m + cs);
  const Sent out = only(w.take());
  EXPECT_EQ(out.type(), "3");
  EXPECT_EQ(out.get(tag::SessionRejectReason), "0");
  EXPECT_EQ(out.get(tag::RefTagID), "000");
  EXPECT_EQ(a.session->next_target_seq(), 3u);
  EXPECT_FALSE(w.closed);
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
  feed(p1, std::string("8=FIX.4.4\x01"
                       "9=5\x01"
                       "garbage\x01"
                       "10=000\x01"));
  feed(p1, peer1.order("Z", {.seq = 1}));  // too low: session 1 is logged out
  EXPECT_TRUE(w1.closed);
  EXPECT_FALSE(w2.closed);
  feed(p2, peer2.order("Y"));
  EXPECT_EQ(app2.received.size(), 1u);
  EXPECT_THROW(reg.add(s1, app1), std::invalid_argument);
}

// --- hostile peers ------------------------------------------------------------------

// Feeds `bytes` in `chunk`-sized reads, as the engine would (keeping what was
// not consumed), until the connection closes; returns the bytes fed.
std::size_t feed_in_reads(engine::Protocol* p, FakeWire& w, const std::string& bytes, std::size_t chunk) {
  std::string pending;
  std::size_t fed = 0;
  while (fed < bytes.size() && !w.closed) {
    const std::size_t n = std::min(chunk, bytes.size() - fed);
    pending.append(bytes, fed, n);
    fed += n;
    pending.erase(0, feed(p, pending));
  }
  return fed;
}

std::size_t lines_with(const MemoryLogger& log, std::string_view needle) {
  std::size_t n = 0;
  for (const std::string& l : log.lines()) n += l.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

TEST(LinkAcceptor, streamWithNoSohIsCutAtTheMessageSizeLimitWithOneLogLine) {
  Acceptor a(AcceptorLimits{.max_connections = 2, .max_message_size = 4096});
  FakeWire w;
  auto* p = a.connect(w);
  const std::size_t fed = feed_in_reads(p, w, std::string(1 << 20, 'A'), 1024);
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "garbled stream");
  EXPECT_EQ(fed, 4096u);  // the fourth 1 KiB read reaches the limit
  EXPECT_EQ(a.log.lines().size(), 1u);
  EXPECT_TRUE(a.log.contains("no valid message in MaxMessageSize (4096) bytes (first: garbage before BeginString"))
      << a.log.lines()[0];
}

// Ten digits of BodyLength and then silence: refused as too large on the
// first read, not held as garbage until the size limit or the logon timeout.
TEST(LinkAcceptor, bodyLengthOfTwoToThe31BeforeLogonIsRefusedAtOnceWithOneLogLine) {
  Acceptor a(AcceptorLimits{.max_connections = 2, .max_message_size = 4096});
  FakeWire w;
  auto* p = a.connect(w);
  feed(p,
       "8=FIX.4.4\x01"
       "9=2147483648\x01");
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "message too large");
  ASSERT_EQ(a.log.lines().size(), 1u);
  EXPECT_TRUE(a.log.contains("larger than MaxMessageSize (4096 bytes)")) << a.log.lines()[0];
}

TEST(LinkAcceptor, bodyLengthOfTwoToThe31AfterLogonIsRefusedAtOnceWithALogout) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  ASSERT_TRUE(a.session->logged_on());
  (void)w.take();
  a.log.clear();
  feed(p,
       "8=FIX.4.4\x01"
       "9=2147483648");
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "message too large");
  EXPECT_EQ(lines_with(a.log, "larger than MaxMessageSize (65536 bytes)"), 1u);
  EXPECT_EQ(a.session->garbled_count(), 0u);
  const auto sent = w.take();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.back().type(), "5");
}

TEST(LinkAcceptor, garbageBeforeALogonIsOneLineAndTheLogonStillBinds) {
  Acceptor a;
  FakeWire w;
  auto* p = a.connect(w);
  for (int i = 0; i < 10; ++i) feed(p, std::string(300, 'z'));
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  EXPECT_TRUE(a.session->logged_on());
  EXPECT_EQ(lines_with(a.log, "garbled bytes before Logon ignored"), 1u);
  EXPECT_TRUE(a.log.contains("3000 garbled bytes before Logon ignored"));
}

TEST(LinkAcceptor, noiseOnALoggedOnSessionIsLoggedOnceThenCutWithALogout) {
  Acceptor a(AcceptorLimits{.max_connections = 2, .max_message_size = 4096});
  FakeWire w;
  auto* p = a.connect(w);
  Peer peer(a.clock);
  feed(p, peer.logon(30, false, "pw"));
  ASSERT_TRUE(a.session->logged_on());
  (void)w.take();
  a.log.clear();
  const std::size_t limit = a.session->settings().max_message_size;
  feed_in_reads(p, w, std::string(4 * limit, '\x01'), 4096);
  EXPECT_TRUE(w.closed);
  EXPECT_EQ(w.close_reason, "garbled stream");
  EXPECT_EQ(lines_with(a.log, "garbled message ignored"), 1u);  // not one per read
  EXPECT_EQ(lines_with(a.log, "no valid message in MaxMessageSize"), 1u);
  EXPECT_EQ(a.session->garbled_count(), 1u);
  const auto sent = w.take();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent.back().type(), "5");
}

// Connections from the factory as the engine opens them: id, remote address.
struct Opened {
  engine::Protocol* p;
  std::unique_ptr<FakeWire> w;
};
Opened open_from(Acceptor& a, int id, std::string_view peer) {
  Opened o{a.factory->open_from(id, peer), std::make_unique<FakeWire>()};
  if (o.p != nullptr) o.p->on_connected(*o.w, 0);
  return o;
}

TEST(LinkAcceptor, anAddressOverItsUnauthenticatedBudgetLosesItsOldestConnection) {
  Acceptor a(AcceptorLimits{.max_connections = 16, .max_unauthenticated = 8, .max_unauthenticated_per_address = 2});
  auto x1 = open_from(a, 1, "192.0.2.1");
  auto x2 = open_from(a, 2, "192.0.2.1");
  auto y1 = open_from(a, 3, "192.0.2.2");
  EXPECT_EQ(a.factory->unauthenticated(), 3u);
  a.clock.advance_ms(1000);  // past the grace
  auto x3 = open_from(a, 4, "192.0.2.1");
  ASSERT_NE(x3.p, nullptr);
  EXPECT_EQ(a.factory->unauthenticated(), 3u);
  for (auto* o : {&x1, &x2, &y1, &x3}) o->p->on_timer(0);
  EXPECT_TRUE(x1.w->closed);
  EXPECT_EQ(x1.w->close_reason, "unauthenticated connection evicted");
  EXPECT_FALSE(x2.w->closed);
  EXPECT_FALSE(y1.w->closed);
  EXPECT_FALSE(x3.w->closed);
  EXPECT_TRUE(
      a.log.contains("conn 1 from 192.0.2.1 closed: not logged on, and 2 unauthenticated connections per "
                     "address are the most allowed: conn 4 from 192.0.2.1 takes its place"))
      << a.log.lines().back();
}

TEST(LinkAcceptor, idleConnectionsCannotKeepAConfiguredSessionFromLoggingOn) {
  Acceptor a(AcceptorLimits{.max_connections = 6, .max_unauthenticated = 4, .max_unauthenticated_per_address = 4});
  std::vector<Opened> idle;
  for (int i = 0; i < 40; ++i) {
    const std::string from = "198.51.100." + std::to_string(i);
    idle.push_back(open_from(a, i + 1, from));
    ASSERT_NE(idle.back().p, nullptr) << i;
    a.clock.advance_ms(1000);
    for (auto& o : idle)
      if (!o.w->closed) o.p->on_timer(0);
    for (auto& o : idle)
      if (o.w->closed && o.p != nullptr) {
        o.p->on_disconnected("closed", 0);
        a.factory->release(o.p);
        o.p = nullptr;
      }
  }
  EXPECT_EQ(a.factory->unauthenticated(), 4u);
  auto real = open_from(a, 100, "203.0.113.9");
  ASSERT_NE(real.p, nullptr);
  Peer peer(a.clock);
  feed(real.p, peer.logon(30, false, "pw"));
  EXPECT_TRUE(a.session->logged_on());
  EXPECT_EQ(a.factory->unauthenticated(), 3u);  // one idle made room; a logged-on one is no longer counted
  // A logged-on connection is never evicted.
  for (int i = 0; i < 10; ++i) idle.push_back(open_from(a, 200 + i, "198.51.100.200"));
  real.p->on_timer(0);
  EXPECT_FALSE(real.w->closed);
}

TEST(LinkAcceptor, connectionsWithinTheGraceAreNotClosedForTheBudgetButAFullTableRefuses) {
  Acceptor a(AcceptorLimits{
      .max_connections = 6, .max_unauthenticated = 2, .max_unauthenticated_per_address = 1, .logon_grace_ms = 500});
  std::vector<Opened> burst;
  for (int i = 0; i < 6; ++i) burst.push_back(open_from(a, i + 1, "192.0.2.1"));  // sessions connecting at once
  for (auto& o : burst) {
    ASSERT_NE(o.p, nullptr);
    o.p->on_timer(0);
    EXPECT_FALSE(o.w->closed);
  }
  EXPECT_EQ(a.factory->open_from(7, "192.0.2.9"), nullptr);
  EXPECT_TRUE(
      a.log.contains("conn 7 from 192.0.2.9 refused: MaxConnections (6) reached, and no unauthenticated "
                     "connection older than 500 ms to close"));
  a.clock.advance_ms(500);
  auto late = open_from(a, 8, "192.0.2.9");
  ASSERT_NE(late.p, nullptr);
  burst[0].p->on_timer(0);
  EXPECT_TRUE(burst[0].w->closed);
  EXPECT_TRUE(
      a.log.contains("conn 1 from 192.0.2.1 closed: not logged on, and 2 unauthenticated connections in "
                     "total are the most allowed: conn 8 from 192.0.2.9 takes its place"));
}

TEST(LinkAcceptor, anEvictedConnectionsLogonIsRefused) {
  Acceptor a(AcceptorLimits{.max_connections = 4, .max_unauthenticated = 1, .max_unauthenticated_per_address = 1});
  auto old = open_from(a, 1, "192.0.2.1");
  a.clock.advance_ms(1000);
  auto young = open_from(a, 2, "192.0.2.1");
  Peer peer(a.clock);
  feed(old.p, peer.logon(30, false, "pw"));
  EXPECT_FALSE(a.session->logged_on());
  EXPECT_TRUE(old.w->closed);
  EXPECT_EQ(old.w->close_reason, "unauthenticated connection evicted");
}

TEST(LinkAcceptor, aConnectionTheEngineRefusesIsLogged) {
  Acceptor a;
  a.factory->refused(7, "192.0.2.1", "every connection slot of its thread in use");
  EXPECT_TRUE(a.log.contains("conn 7 from 192.0.2.1 refused: every connection slot of its thread in use"));
}

}  // namespace
}  // namespace kite::link::test
