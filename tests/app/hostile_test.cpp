// kite-acceptor against hostile peers, on real sockets: connections that
// never log on cannot keep a configured session out, a stream that never
// frames is cut at the message size limit, and every connection refused or
// closed for the budget is logged.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <memory>
#include <string>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "support/counterparty.hpp"

namespace kite::app::test {
namespace {

using kite::test::Counterparty;

std::size_t lines_with(const session::MemoryLogger& log, std::string_view needle) {
  std::size_t n = 0;
  for (const std::string& l : log.lines()) n += l.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

class HostileTest : public ::testing::Test {
 protected:
  // One session, PEER1; the logon timeout far beyond any wait of the test.
  void start(const std::string& engine_extra = "") {
    const std::string toml = "[engine]\nmodel = \"mono\"\nport = 0\nidle = \"block\"\nlogon_timeout = 3600\n" +
                             engine_extra +
                             "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nHeartBtInt = 30\n"
                             "StoreKind = \"memory\"\n[[session]]\nTargetCompID = \"PEER1\"\n";
    acceptor = std::make_unique<Acceptor>(parse_acceptor_config(toml, "hostile-test.toml"), log);
    std::string error;
    ASSERT_TRUE(acceptor->start(error)) << error;
  }
  void TearDown() override {
    if (acceptor) acceptor->stop();
  }
  // Waits (bounded) until the acceptor holds at most `n` connections.
  bool settles_to(int n) {
    for (int i = 0; i < 300 && acceptor->open_connections() > n; ++i) ::usleep(10000);
    return acceptor->open_connections() <= n;
  }

  session::SystemClock clock;
  session::MemoryLogger log;
  std::unique_ptr<Acceptor> acceptor;
};

TEST_F(HostileTest, aConfiguredSessionLogsOnAtOnceBehind136IdleConnections) {
  start("logon_grace_ms = 200\n");  // max_connections 64: 16 unauthenticated, 4 per address
  std::vector<std::unique_ptr<Counterparty>> idle;
  // 68 from one address, 68 from 68 others.
  for (int i = 0; i < 136; ++i) {
    const std::string from = i < 68 ? "127.0.0.2" : "127.0.1." + std::to_string(i - 67);
    idle.push_back(std::make_unique<Counterparty>(clock, "IDLE", acceptor->port(), from.c_str()));
    ASSERT_TRUE(idle.back()->bound && idle.back()->connected) << from;
  }
  ::usleep(300000);  // every idle connection past the grace
  Counterparty real(clock, "PEER1", acceptor->port());
  ASSERT_TRUE(real.connected);
  real.send(real.peer.logon());
  const auto got = real.read(1);  // 3 s at most; the logon timeout is an hour
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  real.send(real.peer.order("AFTER"));
  ASSERT_EQ(real.read(1).size(), 1u);
  // Every idle connection the acceptor closed or refused is one log line.
  ::usleep(100000);
  int closed = 0;
  for (auto& c : idle) {
    char b;
    closed += ::recv(c->fd(), &b, 1, MSG_DONTWAIT) == 0 ? 1 : 0;
  }
  EXPECT_GE(closed, 1);
  EXPECT_EQ(static_cast<std::size_t>(closed),
            lines_with(log, "closed: not logged on") + lines_with(log, "refused: MaxConnections"));
  EXPECT_FALSE(real.closed);
}

TEST_F(HostileTest, aStreamWithNoSohIsCutAtMaxMessageSizeWithOneLine) {
  start("max_message_size = 8192\n");
  Counterparty c(clock, "NOISE", acceptor->port());
  ASSERT_TRUE(c.connected);
  const std::string noise(4096, 'A');
  std::size_t sent = 0;
  for (int i = 0; i < 4096; ++i) {  // 16 MiB at most; the acceptor closes long before
    const ssize_t k = ::send(c.fd(), noise.data(), noise.size(), MSG_NOSIGNAL);
    if (k <= 0) break;
    sent += static_cast<std::size_t>(k);
  }
  EXPECT_TRUE(c.wait_closed());
  EXPECT_LT(sent, std::size_t{4} << 20);  // socket buffers hold some; not the 16 MiB
  EXPECT_EQ(lines_with(log, "no valid message in MaxMessageSize"), 1u);
  EXPECT_TRUE(log.contains("no valid message in MaxMessageSize (8192) bytes (first: garbage before BeginString"))
      << log.lines().back();
  EXPECT_EQ(lines_with(log, "garbled"), 0u);
}

TEST_F(HostileTest, aFullTableRefusesWithinTheGraceAndClosesAnIdleConnectionAfterIt) {
  start("max_connections = 2\nmax_unauthenticated = 1\nlogon_grace_ms = 100\n");
  Counterparty real(clock, "PEER1", acceptor->port());
  real.send(real.peer.logon());
  ASSERT_EQ(real.read(1).size(), 1u);
  Counterparty idle1(clock, "IDLE", acceptor->port(), "127.0.0.3");
  Counterparty idle2(clock, "IDLE", acceptor->port(), "127.0.0.4");
  EXPECT_TRUE(idle2.wait_closed());  // refused: the table is full and idle1 within its grace
  EXPECT_TRUE(log.contains("from 127.0.0.4 refused: MaxConnections (2) reached"));
  ::usleep(150000);
  Counterparty idle3(clock, "IDLE", acceptor->port(), "127.0.0.5");
  EXPECT_TRUE(idle1.wait_closed());  // past its grace: closed for idle3
  EXPECT_TRUE(log.contains("from 127.0.0.3 closed: not logged on"));
  EXPECT_FALSE(real.closed);
}

}  // namespace
}  // namespace kite::app::test
