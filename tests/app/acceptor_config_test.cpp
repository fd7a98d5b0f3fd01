// kite-acceptor's configuration: the full example of docs/acceptor.md loads,
// and bad files fail with a message naming the file, the table or session,
// and the setting.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "kite/app/acceptor.hpp"
#include "kite/transport/transport.hpp"
#include "kite/util/config_error.hpp"

namespace kite::app::test {
namespace {

std::string docs_example() {
  const char* src = std::getenv("KITE_SOURCE_DIR");
  std::ifstream in(std::string(src ? src : ".") + "/docs/acceptor.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto begin = text.find("```toml\n");
  if (begin == std::string::npos) return {};
  const auto end = text.find("```", begin + 8);
  return text.substr(begin + 8, end - begin - 8);
}

std::string error_of(const std::string& text) {
  try {
    parse_acceptor_config(text, "acc.toml");
  } catch (const session::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const char* kBase = "[defaults]\nSenderCompID = \"KITE\"\n[[session]]\nTargetCompID = \"C1\"\n";

TEST(AcceptorConfig, docsExampleLoads) {
  const std::string text = docs_example();
  ASSERT_FALSE(text.empty());
  const AcceptorConfig c = parse_acceptor_config(text, "docs/acceptor.md");
  EXPECT_EQ(c.sessions.sessions.size(), 3u);
  EXPECT_EQ(c.engine.model, engine::Model::mono);
  EXPECT_EQ(c.engine.port, 9876);
  EXPECT_EQ(c.mode, Mode::ack);
  EXPECT_EQ(c.limits.max_connections, 64u);
  EXPECT_EQ(c.sessions.sessions[1].begin_string, "FIX.4.2");
}

TEST(AcceptorConfig, portComesFromTheSessionsWhenEngineHasNone) {
  const AcceptorConfig c = parse_acceptor_config(
      "[defaults]\nSenderCompID = \"K\"\nSocketAcceptPort = 7001\n[[session]]\nTargetCompID = \"A\"\n", "acc.toml");
  EXPECT_EQ(c.engine.port, 7001);
}

TEST(AcceptorConfig, badSettingsNameFileTableAndSetting) {
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\nmodel = \"fast\"\n") + kBase),
            "acc.toml: [engine]: setting model: expected \"single\", \"mono\", \"pool\" or \"shard\" (line 3)");
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\n[app]\nmode = \"fill\"\n") + kBase),
            "acc.toml: [app]: setting mode: expected \"ack\", \"match\" or \"echo\", got \"fill\" (line 4)");
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\nthreads = 2\n") + kBase),
            "acc.toml: [engine]: setting threads: unknown setting (expected one of: model, transport, bind, port, "
            "workers, cores, coordinator_core, idle, busy_poll_usecs, quickack, uring_sqpoll, max_connections, "
            "logon_timeout, max_message_size, max_unauthenticated, logon_grace_ms, max_unauthenticated_per_address, "
            "send_buffer, recv_buffer) (line 3)");
  EXPECT_EQ(error_of(std::string("[engine]\nport = 70000\n") + kBase),
            "acc.toml: [engine]: setting port: value 70000 out of range 0..65535 (line 2)");
  EXPECT_EQ(error_of(kBase), "acc.toml: [engine]: setting port: missing (set it, or SocketAcceptPort in the sessions)");
  EXPECT_EQ(error_of(std::string("[engin]\nport = 1\n") + kBase), "acc.toml: [engin]: unknown table");
}

TEST(AcceptorConfig, engineAndOtherTablesMustBeTables) {
  EXPECT_EQ(error_of(std::string("engine = 1\n") + kBase), "acc.toml: [engine]: must be a table (line 1)");
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\n[app]\nmode = \"ack\"\nlog = 2\n") + kBase),
            "acc.toml: [app]: setting log: unknown setting (expected one of: mode, shutdown_wait_ms) (line 5)");
}

TEST(AcceptorConfig, aTransportThisBuildLacksIsUnsupportedNamingTheSetting) {
  if (transport::compiled_in(transport::Kind::tcpdirect)) GTEST_SKIP() << "tcpdirect is built in";
  // Before the sessions are read: libkite reports it as KITE_ERROR_UNSUPPORTED.
  try {
    parse_acceptor_config("[engine]\ntransport = \"tcpdirect\"\nmodel = \"pool\"\n", "acc.toml");
    ADD_FAILURE() << "no error";
  } catch (const util::Unsupported& e) {
    EXPECT_STREQ(e.what(), "acc.toml: [engine]: setting transport: transport tcpdirect is not in this build (line 2)");
  }
}

TEST(AcceptorConfig, quickackIsOffUnlessAsked) {
  EXPECT_FALSE(parse_acceptor_config(std::string("[engine]\nport = 1\n") + kBase, "x").engine.quickack);
  EXPECT_TRUE(parse_acceptor_config(std::string("[engine]\nport = 1\nquickack = true\n") + kBase, "x").engine.quickack);
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\nquickack = 1\n") + kBase),
            "acc.toml: [engine]: setting quickack: expected true or false, got an integer (line 3)");
}

TEST(AcceptorConfig, perThreadConnectionsFollowTheModel) {
  const auto per_thread = [](const char* model) {
    return parse_acceptor_config(
               std::string("[engine]\nport = 1\nworkers = 2\nmax_connections = 9\nmodel = \"") + model + "\"\n" + kBase,
               "x")
        .engine.max_connections;
  };
  // Slots for max_connections and the evicted unauthenticated connections
  // still closing (max_unauthenticated: 9 - 1 session = 8).
  EXPECT_EQ(per_thread("single"), 1);
  EXPECT_EQ(per_thread("mono"), 17);
  EXPECT_EQ(per_thread("pool"), 9);    // the front door spreads them evenly
  EXPECT_EQ(per_thread("shard"), 17);  // the kernel does not
}

TEST(AcceptorConfig, theUnauthenticatedBudgetLeavesRoomForEverySession) {
  const AcceptorConfig d = parse_acceptor_config(std::string("[engine]\nport = 1\n") + kBase, "x");
  EXPECT_EQ(d.limits.max_unauthenticated, 16u);
  EXPECT_EQ(d.limits.max_unauthenticated_per_address, 4u);
  EXPECT_EQ(d.limits.logon_grace_ms, 1000);
  const AcceptorConfig small =
      parse_acceptor_config(std::string("[engine]\nport = 1\nmax_connections = 3\n") + kBase, "x");
  EXPECT_EQ(small.limits.max_unauthenticated, 2u);
  EXPECT_EQ(small.limits.max_unauthenticated_per_address, 2u);
  const AcceptorConfig set = parse_acceptor_config(
      std::string("[engine]\nport = 1\nmax_unauthenticated = 40\nmax_unauthenticated_per_address = 10\n") + kBase, "x");
  EXPECT_EQ(set.limits.max_unauthenticated, 40u);
  EXPECT_EQ(set.limits.max_unauthenticated_per_address, 10u);
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\nmax_connections = 8\nmax_unauthenticated = 8\n") + kBase),
            "acc.toml: [engine]: setting max_unauthenticated: 8 leaves no room for the 1 configured session(s) within "
            "max_connections 8 (at most 7) (line 4)");
  EXPECT_EQ(
      error_of(std::string("[engine]\nport = 1\nmax_unauthenticated = 2\nmax_unauthenticated_per_address = 3\n") +
               kBase),
      "acc.toml: [engine]: setting max_unauthenticated_per_address: 3 is more than max_unauthenticated 2 (line 4)");
  EXPECT_EQ(error_of(std::string("[engine]\nport = 1\nmax_unauthenticated = 0\n") + kBase),
            "acc.toml: [engine]: setting max_unauthenticated: value 0 out of range 1..100000 (line 3)");
}

TEST(AcceptorConfig, sessionProblemsNameTheSession) {
  EXPECT_EQ(error_of("[defaults]\nSenderCompID = \"K\"\n[[session]]\nTargetCompID = \"A\"\nSocketAcceptPort = 9000\n"
                     "[[session]]\nTargetCompID = \"B\"\nSocketAcceptPort = 9001\n"),
            "acc.toml: session 2 (FIX.4.4:K->B): setting SocketAcceptPort: 9001 differs from another session's 9000 "
            "(one listening port per daemon)");
  EXPECT_EQ(error_of("[engine]\nport = 1\n[defaults]\nSenderCompID = \"K\"\n[[session]]\nTargetCompID = \"A\"\n"
                     "ConnectionType = \"initiator\"\nSocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = 5\n"),
            "acc.toml: session 1 (FIX.4.4:K->A): setting ConnectionType: kite-acceptor runs acceptor sessions only");
  // The session loader's own errors come through unchanged.
  EXPECT_NE(error_of("[engine]\nport = 1\n[[session]]\nTargetCompID = \"A\"\n").find("setting SenderCompID"),
            std::string::npos);
}

TEST(AcceptorConfig, matchModeNeedsOneThread) {
  EXPECT_NE(
      error_of(std::string("[engine]\nport = 1\nmodel = \"pool\"\nworkers = 2\n[app]\nmode = \"match\"\n") + kBase)
          .find("[app]: setting mode: match needs every session on one thread"),
      std::string::npos);
  EXPECT_NO_THROW(parse_acceptor_config(std::string("[engine]\nport = 1\n[app]\nmode = \"match\"\n") + kBase, "x"));
}

}  // namespace
}  // namespace kite::app::test
