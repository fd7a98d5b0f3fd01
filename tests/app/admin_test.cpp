// kite-acceptor's operators' channel, end to end: an app::Acceptor running on
// real sockets with [admin] configured, counterparties that are plain TCP
// clients speaking FIX (Kite's codec writes their messages), and the commands
// sent through the admin socket by the kite-admin program itself. Each
// command's effect is checked on the counterparty's wire, and the counters
// against the traffic sent.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "support/command_testing.hpp"
#include "support/counterparty.hpp"
#include "support/session_testing.hpp"

namespace kite::app::test {
namespace {

namespace fs = std::filesystem;
using session::test::decode_all;
using session::test::Peer;
using session::test::Sent;
namespace tag = codec::tag;

fs::path temp_dir() {
  std::string t = (fs::temp_directory_path() / "kite-admin-XXXXXX").string();
  return ::mkdtemp(t.data()) != nullptr ? fs::path(t) : fs::path();
}

using kite::test::Counterparty;

using Answer = kite::test::CommandOutput;

// Runs the kite-admin program; its stdout and stderr together.
Answer admin(const fs::path& socket, const std::string& args) {
  return kite::test::kite_admin(KITE_ADMIN_BIN, socket.string(), args);
}

std::uint64_t json_number(const std::string& json, const std::string& session, const std::string& key) {
  const std::size_t at = json.find("\"session\": \"" + session + "\"");
  if (at == std::string::npos) return ~0ull;
  const std::size_t k = json.find("\"" + key + "\": ", at);
  if (k == std::string::npos) return ~0ull;
  return std::stoull(json.substr(k + key.size() + 4));
}

class AdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir();
    ASSERT_FALSE(dir.empty());
    socket = dir / "admin.sock";
    (void)fs::create_directory(dir / "messages");
  }
  void start(const std::string& extra = "") {
    const std::string toml = "[engine]\nmodel = \"mono\"\nport = 0\nidle = \"block\"\n[admin]\nsocket = \"" +
                             socket.string() + "\"\n[message_log]\ndir = \"" + (dir / "messages").string() +
                             "\"\nsessions = [\"FIX.4.4:KITE->PEER1\"]\n" + extra +
                             "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nHeartBtInt = 30\n"
                             "StoreKind = \"memory\"\n[[session]]\nTargetCompID = \"PEER1\"\n[[session]]\n"
                             "TargetCompID = \"PEER2\"\n";
    acceptor = std::make_unique<Acceptor>(parse_acceptor_config(toml, "admin-test.toml"), log);
    std::string error;
    ASSERT_TRUE(acceptor->start(error)) << error;
  }
  void TearDown() override {
    if (acceptor) acceptor->stop();
    acceptor.reset();
    fs::remove_all(dir);
  }
  // Logs `c` on and checks the answer.
  void log_on(Counterparty& c) {
    ASSERT_TRUE(c.connected);
    c.send(c.peer.logon());
    const auto got = c.read(1);
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].type(), "A");
  }

  fs::path dir, socket;
  session::SystemClock clock;
  session::MemoryLogger log;
  std::unique_ptr<Acceptor> acceptor;
};

TEST_F(AdminTest, sessionsAndMetricsCountTheTrafficSent) {
  start();
  Counterparty c(clock, "PEER1", acceptor->port());
  log_on(c);
  for (int i = 0; i < 10; ++i) {
    c.send(c.peer.order("C" + std::to_string(i)));
    ASSERT_EQ(c.read(1).size(), 1u);
  }
  const Answer j = admin(socket, "sessions --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_EQ(json_number(j.out, "FIX.4.4:KITE->PEER1", "messages_in"), 11u) << j.out;
  EXPECT_EQ(json_number(j.out, "FIX.4.4:KITE->PEER1", "messages_out"), 11u);
  EXPECT_EQ(json_number(j.out, "FIX.4.4:KITE->PEER1", "next_in"), 12u);
  EXPECT_EQ(json_number(j.out, "FIX.4.4:KITE->PEER1", "next_out"), 12u);
  EXPECT_NE(j.out.find("\"state\": \"logged-on\""), std::string::npos);
  EXPECT_EQ(json_number(j.out, "FIX.4.4:KITE->PEER2", "messages_in"), 0u);
  const Answer t = admin(socket, "sessions");
  EXPECT_EQ(t.status, 0);
  EXPECT_NE(t.out.find("FIX.4.4:KITE->PEER2"), std::string::npos);
  EXPECT_NE(t.out.find("disconnected"), std::string::npos);

  const Answer m = admin(socket, "metrics");
  ASSERT_EQ(m.status, 0);
  EXPECT_NE(m.out.find("kite_messages_received_total{session=\"FIX.4.4:KITE->PEER1\"} 11\n"), std::string::npos)
      << m.out;
  EXPECT_NE(m.out.find("kite_sessions_logged_on 1\n"), std::string::npos);
  // One reply timed per inbound read: the Logon and the ten orders.
  EXPECT_NE(m.out.find("kite_reply_latency_seconds_count{thread=\"kite-mono\"} 11\n"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("kite_reply_latency_seconds_bucket{thread=\"kite-mono\",le=\"+Inf\"} 11\n"), std::string::npos);

  const Answer s = admin(socket, "status --json");
  EXPECT_EQ(s.status, 0);
  EXPECT_NE(s.out.find("\"model\": \"mono\""), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("\"name\": \"kite-mono\""), std::string::npos);
  EXPECT_TRUE(log.contains("admin uid "));
}

TEST_F(AdminTest, setSeqIsRefusedWhileLoggedOnAndForcedOneIsSeenOnTheWire) {
  start();
  Counterparty c(clock, "PEER1", acceptor->port());
  log_on(c);
  const Answer no = admin(socket, "set-seq PEER1 --out 50");
  EXPECT_EQ(no.status, 1) << no.out;
  EXPECT_NE(no.out.find("logged on"), std::string::npos);
  c.send(c.peer.order("A1"));
  auto r = c.read(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq(), 2u);  // unchanged

  const Answer yes = admin(socket, "set-seq 'FIX.4.4:KITE->PEER1' --out 50 --force");
  ASSERT_EQ(yes.status, 0) << yes.out;
  EXPECT_NE(yes.out.find("next_out 50"), std::string::npos) << yes.out;
  c.send(c.peer.order("A2"));
  r = c.read(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq(), 50u);
  EXPECT_EQ(r[0].get(tag::ClOrdID), "A2");
}

TEST_F(AdminTest, logoutCarriesTheOperatorsTextAndDisconnectIsCounted) {
  start();
  Counterparty c(clock, "PEER1", acceptor->port());
  log_on(c);
  const Answer a = admin(socket, "logout PEER1 --text \"maintenance at 18:00\"");
  ASSERT_EQ(a.status, 0) << a.out;
  const auto r = c.read(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), "5");
  EXPECT_EQ(r[0].get(tag::Text), "maintenance at 18:00");

  Counterparty d(clock, "PEER2", acceptor->port());
  log_on(d);
  const Answer b = admin(socket, "disconnect PEER2");
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_TRUE(d.wait_closed());
  // Published by the connection's thread as it goes.
  std::string m;
  for (int i = 0; i < 100 && m.find("cause=\"disconnected by the operator\"} 1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    m = admin(socket, "metrics").out;
  }
  EXPECT_NE(m.find("kite_disconnects_total{session=\"FIX.4.4:KITE->PEER2\",cause=\"disconnected by the operator\"} 1"),
            std::string::npos)
      << m;
  EXPECT_EQ(admin(socket, "disconnect PEER2").status, 1);  // no longer connected
}

TEST_F(AdminTest, pausedLogonsAreRefusedAndResumedOnesAccepted) {
  start();
  ASSERT_EQ(admin(socket, "pause-logons").status, 0);
  {
    Counterparty c(clock, "PEER1", acceptor->port());
    c.send(c.peer.logon());
    EXPECT_TRUE(c.wait_closed());
  }
  const Answer s = admin(socket, "sessions");
  EXPECT_NE(s.out.find("logons paused by the operator"), std::string::npos) << s.out;
  EXPECT_NE(admin(socket, "status").out.find("logons PAUSED"), std::string::npos);
  ASSERT_EQ(admin(socket, "resume-logons").status, 0);
  Counterparty c(clock, "PEER1", acceptor->port());
  log_on(c);
}

TEST_F(AdminTest, resetOfAnIdleSessionStartsItsNumbersAgain) {
  start();
  {
    Counterparty c(clock, "PEER1", acceptor->port());
    log_on(c);
    c.send(c.peer.order("B1"));
    ASSERT_EQ(c.read(1).size(), 1u);
    c.send(c.peer.make("5"));
    c.read(1);
    EXPECT_TRUE(c.wait_closed());
  }
  std::string j;
  for (int i = 0; i < 100; ++i) {
    j = admin(socket, "sessions --json").out;
    if (j.find("\"state\": \"disconnected\", \"next_in\": 4") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(json_number(j, "FIX.4.4:KITE->PEER1", "next_in"), 4u) << j;
  const Answer r = admin(socket, "reset PEER1");
  ASSERT_EQ(r.status, 0) << r.out;
  j = admin(socket, "sessions --json").out;
  EXPECT_EQ(json_number(j, "FIX.4.4:KITE->PEER1", "next_in"), 1u);
  EXPECT_EQ(json_number(j, "FIX.4.4:KITE->PEER1", "next_out"), 1u);
  Counterparty c(clock, "PEER1", acceptor->port());  // a fresh peer starts at 1 again
  c.send(c.peer.logon());
  const auto got = c.read(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  EXPECT_EQ(got[0].seq(), 1u);
}

TEST_F(AdminTest, badRequestsGetAClearErrorAndChangeNothing) {
  start();
  const std::string before = admin(socket, "sessions --json").out;
  struct Case {
    const char* args;
    const char* says;
  } cases[] = {
      {"frobnicate", "unknown command \"frobnicate\""},
      {"set-seq NOBODY --in 3", "no session \"NOBODY\""},
      {"set-seq PEER1 --in abc", "expected a sequence number from 1, got \"abc\""},
      {"set-seq PEER1 --in 0", "expected a sequence number from 1"},
      {"set-seq PEER1", "give --in N, --out M or both"},
      {"logout PEER1", "not logged on"},
      {"reset PEER1 --hard", "unknown or incomplete argument \"--hard\""},
      {"message-log PEER1 maybe", "expected SESSION on|off"},
      {"sessions --xml", "unknown argument \"--xml\""},
  };
  for (const Case& c : cases) {
    const Answer a = admin(socket, c.args);
    EXPECT_EQ(a.status, 1) << c.args << ": " << a.out;
    EXPECT_NE(a.out.find(c.says), std::string::npos) << c.args << ": " << a.out;
  }
  EXPECT_EQ(admin(socket, "sessions --json").out, before);
  const Answer gone = admin(dir / "nothing.sock", "sessions");
  EXPECT_EQ(gone.status, 2);
  EXPECT_NE(gone.out.find("is kite-acceptor running"), std::string::npos) << gone.out;
}

TEST_F(AdminTest, messageLogHoldsEveryMessageBothWaysAndSwitchesPerSession) {
  start();
  Counterparty c(clock, "PEER1", acceptor->port());
  log_on(c);
  for (int i = 0; i < 5; ++i) {
    c.send(c.peer.order("L" + std::to_string(i)));
    ASSERT_EQ(c.read(1).size(), 1u);
  }
  ASSERT_EQ(admin(socket, "message-log PEER1 off").status, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the session's thread closes the file on its timer turn
  c.send(c.peer.order("NOTLOGGED"));
  ASSERT_EQ(c.read(1).size(), 1u);
  acceptor->stop();
  std::ifstream in(dir / "messages" / "FIX.4.4_KITE-PEER1.messages");
  std::string line;
  int ins = 0, outs = 0;
  const std::regex shape(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (IN |OUT) 8=FIX\.4\.4\x01.*10=\d{3}\x01$)");
  while (std::getline(in, line)) {
    EXPECT_TRUE(std::regex_match(line, shape)) << line;
    EXPECT_EQ(line.find("NOTLOGGED"), std::string::npos);
    (line.find("Z IN  ") != std::string::npos ? ins : outs)++;
  }
  EXPECT_EQ(ins, 6);
  EXPECT_EQ(outs, 6);
  // kite-fixprint reads the log as it is: each message titled with its time and direction.
  const std::string cmd =
      std::string(KITE_FIXPRINT_BIN) + " " + (dir / "messages" / "FIX.4.4_KITE-PEER1.messages").string() + " 2>&1";
  const kite::test::CommandOutput fixprint = kite::test::run_command(cmd);
  const std::string& printed = fixprint.out;
  EXPECT_EQ(fixprint.status, 0) << printed;
  EXPECT_TRUE(std::regex_search(printed, std::regex(R"(== #1  \[\S+Z IN\]  Logon \(35=A\)  seq 1  PEER1 -> KITE)")))
      << printed;
  EXPECT_TRUE(std::regex_search(printed, std::regex(R"(== #12  \[\S+Z OUT\]  ExecutionReport \(35=8\))"))) << printed;
  EXPECT_FALSE(fs::exists(dir / "messages" / "FIX.4.4_KITE-PEER2.messages"));  // not switched on
}

TEST(JsonLinesLogger, writesOneValidObjectPerLineWithEscapes) {
  const fs::path dir = temp_dir();
  const fs::path file = dir / "err.log";
  const int saved = ::dup(2);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  session::JsonLinesLogger log;
  log.log(session::LogLevel::warn, "FIX.4.4:KITE->PEER1", "said \"hi\"\tand left\n");
  log.logf(session::LogLevel::info, "admin", "uid %d", 0);
  ::dup2(saved, 2);
  ::close(fd);
  ::close(saved);
  std::ifstream in(file);
  std::string l1, l2, l3;
  std::getline(in, l1);
  std::getline(in, l2);
  EXPECT_FALSE(std::getline(in, l3));
  EXPECT_TRUE(
      std::regex_match(l1, std::regex(R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","level":"warn",)"
                                      R"("who":"FIX\.4\.4:KITE->PEER1","text":"said \\"hi\\"\\tand left\\n"\})")))
      << l1;
  EXPECT_NE(l2.find(R"("level":"info","who":"admin","text":"uid 0"})"), std::string::npos) << l2;
  fs::remove_all(dir);
}

TEST_F(AdminTest, metricsAreServedOverHttpOnLocalhost) {
  // Port 0 would mean "off": take a free one.
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ::close(probe);
  start("[log]\nformat = \"text\"\n");
  acceptor.reset();
  (void)fs::remove(socket);
  const std::string toml = "[engine]\nport = 0\n[admin]\nmetrics_port = " + std::to_string(port) +
                           "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nStoreKind = \"memory\"\n"
                           "[[session]]\nTargetCompID = \"PEER1\"\n";
  acceptor = std::make_unique<Acceptor>(parse_acceptor_config(toml, "http.toml"), log);
  std::string error;
  ASSERT_TRUE(acceptor->start(error)) << error;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
  ASSERT_EQ(::write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
  std::string resp;
  char b[4096];
  ssize_t n;
  while ((n = ::read(fd, b, sizeof b)) > 0) resp.append(b, static_cast<std::size_t>(n));
  ::close(fd);
  EXPECT_EQ(resp.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << resp;
  EXPECT_NE(resp.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(resp.find("kite_next_seq_out{session=\"FIX.4.4:KITE->PEER1\"} 1\n"), std::string::npos) << resp;
}

}  // namespace
}  // namespace kite::app::test
