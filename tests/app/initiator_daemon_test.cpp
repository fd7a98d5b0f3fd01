// kite-initiator against kite-acceptor, both as processes: it logs on, sends
// orders, reconnects with back-off while the acceptor is down, logs out on
// SIGTERM, and across a kill -9 of either side nothing is lost and nothing
// answered twice (the file stores serve the resends).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "interop/session_process.hpp"
#include "support/tls_testing.hpp"

namespace kite::app::test {
namespace {

using interop::Child;
using interop::read_file;
using interop::wait_for_text;
using interop::write_file;
namespace fs = std::filesystem;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// "orders sent N, execution reports M" for `who` in the initiator's last words.
bool orders_and_reports(const std::string& log, const std::string& who, long& sent, long& reports) {
  const std::regex re(who + " orders sent ([0-9]+), execution reports ([0-9]+)");
  std::smatch m;
  if (!std::regex_search(log, m, re)) return false;
  sent = std::stol(m[1]);
  reports = std::stol(m[2]);
  return true;
}

class InitiatorDaemon : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = interop::make_temp_dir("kite-initiator-");
    ASSERT_FALSE(dir.empty());
    port = interop::free_port();
    ASSERT_GT(port, 0);
    write_file(dir / "acceptor.toml",
               "[engine]\nport = " + std::to_string(port) +
                   "\n[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nHeartBtInt = 30\n"
                   "StoreKind = \"file\"\nFileStorePath = \"" +
                   (dir / "acceptor-store").string() +
                   "\"\n[[session]]\nTargetCompID = \"C1\"\n[[session]]\nTargetCompID = \"C2\"\n");
    write_file(dir / "initiator.toml",
               "[orders]\nsource = \"rate\"\nrate = 200\n[app]\nshutdown_wait_ms = 3000\n"
               "[defaults]\nBeginString = \"FIX.4.4\"\nConnectionType = \"initiator\"\nTargetCompID = \"KITE\"\n"
               "HeartBtInt = 30\nStoreKind = \"file\"\nFileStorePath = \"" +
                   (dir / "initiator-store").string() +
                   "\"\nSocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = " + std::to_string(port) +
                   "\nReconnectInterval = 1\nReconnectIntervalMax = 4\n[[session]]\nSenderCompID = \"C1\"\n"
                   "[[session]]\nSenderCompID = \"C2\"\n");
  }
  void TearDown() override { fs::remove_all(dir); }

  void start_acceptor(Child& c) {
    const fs::path ready = dir / "acceptor.ready";
    fs::remove(ready);
    ASSERT_TRUE(
        c.start({KITE_ACCEPTOR_BIN, "--config", (dir / "acceptor.toml").string(), "--ready-file", ready.string()},
                dir / "acceptor.out", dir / "acceptor.log"));
    ASSERT_TRUE(wait_for_text(ready, "\n", 10000)) << read_file(dir / "acceptor.log");
  }
  void start_initiator(Child& c) {
    ASSERT_TRUE(c.start({KITE_INITIATOR_BIN, "--config", (dir / "initiator.toml").string()}, dir / "initiator.out",
                        dir / "initiator.log"));
  }
  // Waits (bounded) until the log holds `n` of `needle`.
  bool wait_count(const std::string& file, const std::string& needle, std::size_t n, int timeout_ms = 15000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (count_of(read_file(dir / file), needle) >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Stops the initiator with SIGTERM, then the acceptor; checks that every
  // order each session sent was answered exactly once.
  void finish_and_check(Child& initiator, Child& acceptor) {
    initiator.signal(SIGTERM);
    EXPECT_EQ(initiator.wait(10000), 0);
    acceptor.signal(SIGTERM);
    EXPECT_EQ(acceptor.wait(10000), 0);
    const std::string log = read_file(dir / "initiator.log");
    for (const char* who : {"FIX.4.4:C1->KITE", "FIX.4.4:C2->KITE"}) {
      long sent = -1, reports = -1;
      ASSERT_TRUE(orders_and_reports(log, who, sent, reports)) << log;
      EXPECT_GT(sent, 0) << who;
      EXPECT_EQ(reports, sent) << who << "\n" << log;
    }
  }

  fs::path dir;
  int port = 0;
};

TEST_F(InitiatorDaemon, logsOnSendsOrdersReconnectsWithBackOffAndLogsOutOnSigterm) {
  Child acceptor, initiator;
  start_acceptor(acceptor);
  start_initiator(initiator);
  ASSERT_TRUE(wait_count("acceptor.log", "logged on", 2)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // orders flow
  acceptor.signal(SIGTERM);
  EXPECT_EQ(acceptor.wait(10000), 0);
  // Down: the attempts back off (1 s, 2 s, ... up to ReconnectIntervalMax).
  ASSERT_TRUE(wait_count("initiator.log", "next attempt in", 4, 10000)) << read_file(dir / "initiator.log");
  const std::string down = read_file(dir / "initiator.log");
  EXPECT_NE(down.find("FIX.4.4:C1->KITE connect to 127.0.0.1:" + std::to_string(port) + " failed"), std::string::npos);
  EXPECT_TRUE(std::regex_search(down, std::regex("C1->KITE connect to [^\\n]* next attempt in 1[0-9]{3} ms"))) << down;
  Child again;
  start_acceptor(again);
  ASSERT_TRUE(wait_count("initiator.log", "logged on", 4)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  finish_and_check(initiator, again);
  const std::string log = read_file(dir / "initiator.log");
  EXPECT_EQ(count_of(log, "Logout sent: shutting down"), 2u) << log;
  EXPECT_EQ(count_of(read_file(dir / "acceptor.log"), "peer logged out"), 2u);
}

// Over TLS with a client certificate: both daemons read their [tls] tables,
// the sessions log on and every order is answered once.
TEST_F(InitiatorDaemon, logsOnOverTlsWithAClientCertificateAndEveryOrderIsAnswered) {
  const kite::test::TestCertificates certs;
  if (!certs.ok()) GTEST_SKIP() << certs.why();
  // The acceptor's file opens with [engine] port = N; both gain a [tls] table at their end.
  const std::string plain = read_file(dir / "acceptor.toml");
  const std::size_t engine_end = plain.find('\n', plain.find("port = ")) + 1;
  write_file(dir / "acceptor.toml", plain.substr(0, engine_end) + "transport = \"tls\"\n" + plain.substr(engine_end) +
                                        "[tls]\ncertificate = \"" + certs.server_cert() + "\"\nprivate_key = \"" +
                                        certs.server_key() + "\"\nca_file = \"" + certs.ca() +
                                        "\"\nclient_certificate = \"require\"\n");
  write_file(dir / "initiator.toml", "[engine]\ntransport = \"tls\"\n" + read_file(dir / "initiator.toml") +
                                         "[tls]\nca_file = \"" + certs.ca() + "\"\ncertificate = \"" +
                                         certs.client_cert() + "\"\nprivate_key = \"" + certs.client_key() + "\"\n");
  Child acceptor, initiator;
  start_acceptor(acceptor);
  start_initiator(initiator);
  ASSERT_TRUE(wait_count("acceptor.log", "logged on", 2)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // orders flow
  finish_and_check(initiator, acceptor);
  EXPECT_EQ(read_file(dir / "acceptor.log").find("ERROR tls"), std::string::npos) << read_file(dir / "acceptor.log");
}

// The last "next seq out X, in Y" each side logged for C1 and C2 agree: what
// one side sent, the other took in, both ways.
void expect_sequences_agree(const std::string& initiator_log, const std::string& acceptor_log) {
  for (const char* c : {"C1", "C2"}) {
    long i_out = 0, i_in = 0, a_out = 0, a_in = 0;
    ASSERT_TRUE(interop::last_sequences(initiator_log, std::string("FIX.4.4:") + c + "->KITE", i_out, i_in));
    ASSERT_TRUE(interop::last_sequences(acceptor_log, std::string("FIX.4.4:KITE->") + c, a_out, a_in));
    EXPECT_EQ(i_out, a_in) << c;
    EXPECT_EQ(i_in, a_out) << c;
  }
}

TEST_F(InitiatorDaemon, killNineOfTheAcceptorMidStreamLosesNothingAndAnswersNothingTwice) {
  Child acceptor, initiator;
  start_acceptor(acceptor);
  start_initiator(initiator);
  ASSERT_TRUE(wait_count("acceptor.log", "logged on", 2)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Stopped, the acceptor reads nothing: the orders sent meanwhile die with it
  // in its socket buffer, and come back by resend from the initiator's store.
  acceptor.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  acceptor.signal(SIGKILL);
  acceptor.wait(5000);
  Child again;
  start_acceptor(again);
  ASSERT_TRUE(wait_count("initiator.log", "logged on", 4)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The initiator ran throughout: each session's orders, all answered, once.
  finish_and_check(initiator, again);
  const std::string alog = read_file(dir / "acceptor.log");
  const std::string ilog = read_file(dir / "initiator.log");
  for (const char* c : {"C1", "C2"}) {  // asked by the acceptor, served by the initiator
    EXPECT_EQ(count_of(alog, std::string("KITE->") + c + " ResendRequest sent for"), 1u) << alog;
    EXPECT_EQ(count_of(ilog, std::string(c) + "->KITE ResendRequest for"), 1u) << ilog;
  }
  expect_sequences_agree(ilog, alog);
}

// ClOrdID (11) of each NewOrderSingle the acceptor took in, and of each
// ExecutionReport it sent, not counting resends (PossDupFlag 43=Y).
void orders_and_answers(const std::string& message_log, std::map<std::string, int>& orders,
                        std::map<std::string, int>& answers) {
  std::istringstream in(message_log);
  std::string line;
  while (std::getline(in, line)) {
    const bool inbound = line.find("Z IN  ") != std::string::npos;
    if (line.find("\x01"
                  "43=Y\x01") != std::string::npos)
      continue;
    const std::size_t id = line.find(
        "\x01"
        "11=");
    if (id == std::string::npos) continue;
    const std::string cl = line.substr(id + 4, line.find('\x01', id + 4) - id - 4);
    if (inbound && line.find("\x01"
                             "35=D\x01") != std::string::npos)
      ++orders[cl];
    if (!inbound && line.find("\x01"
                              "35=8\x01") != std::string::npos)
      ++answers[cl];
  }
}

TEST_F(InitiatorDaemon, killNineOfTheInitiatorMidStreamLosesNothingAndAnswersNothingTwice) {
  fs::create_directory(dir / "messages");
  std::string toml = read_file(dir / "acceptor.toml");
  toml.insert(0, "[message_log]\ndir = \"" + (dir / "messages").string() + "\"\nsessions = [\"*\"]\n");
  write_file(dir / "acceptor.toml", toml);
  Child acceptor, initiator;
  start_acceptor(acceptor);
  start_initiator(initiator);
  ASSERT_TRUE(wait_count("acceptor.log", "logged on", 2)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Orders pile up unread at the stopped acceptor; it answers them into the
  // stopped initiator's socket buffer, where the answers die with it and come
  // back by resend from the acceptor's store.
  acceptor.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  initiator.signal(SIGSTOP);
  acceptor.signal(SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  initiator.signal(SIGKILL);
  initiator.wait(5000);
  Child again;
  start_initiator(again);
  ASSERT_TRUE(wait_count("acceptor.log", "logged on", 4)) << read_file(dir / "initiator.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  again.signal(SIGTERM);
  EXPECT_EQ(again.wait(10000), 0);
  acceptor.signal(SIGTERM);
  EXPECT_EQ(acceptor.wait(10000), 0);
  const std::string alog = read_file(dir / "acceptor.log");
  const std::string ilog = read_file(dir / "initiator.log");
  for (const char* c : {"C1", "C2"}) {  // asked by the initiator, served by the acceptor
    EXPECT_EQ(count_of(ilog, std::string(c) + "->KITE ResendRequest sent for"), 1u) << ilog;
    EXPECT_EQ(count_of(alog, std::string("KITE->") + c + " ResendRequest for"), 1u) << alog;
  }
  expect_sequences_agree(ilog, alog);
  for (const char* c : {"C1", "C2"}) {
    std::map<std::string, int> orders, answers;
    orders_and_answers(read_file(dir / "messages" / (std::string("FIX.4.4_KITE-") + c + ".messages")), orders, answers);
    EXPECT_GT(orders.size(), 100u) << c;
    for (const auto& [id, n] : orders) {
      EXPECT_EQ(n, 1) << c << " order " << id << " taken in " << n << " times";
      EXPECT_EQ(answers[id], 1) << c << " order " << id << " answered " << answers[id] << " times";
    }
    EXPECT_EQ(answers.size(), orders.size()) << c;
  }
}

}  // namespace
}  // namespace kite::app::test
