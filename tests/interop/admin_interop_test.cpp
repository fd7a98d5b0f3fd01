// kite-admin against a QuickFIX 1.15.1 counterparty: kite-acceptor (a
// process, with [admin]) serves a stream of orders from kite_qf_peer; in the
// middle the operator moves Kite's outbound number forward with
// `set-seq --force`. QuickFIX sees the jump on the wire, asks for the gap,
// gets it filled, and ends agreeing with the number kite-admin reports;
// every order is answered and the counters match what QuickFIX counted.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "session_process.hpp"
#include "support/command_testing.hpp"

namespace kite::interop {
namespace {

using Answer = kite::test::CommandOutput;

Answer admin(const fs::path& socket, const std::string& args) {
  return kite::test::kite_admin(KITE_ADMIN_BIN, socket.string(), args);
}

long json_number(const std::string& json, const std::string& key) {
  const std::size_t k = json.find("\"" + key + "\": ");
  return k == std::string::npos ? -1 : std::stol(json.substr(k + key.size() + 4));
}

TEST(AdminWithQuickFix, forcedSetSeqIsSeenByQuickFixWhichRecoversTheGap) {
  constexpr long kOrders = 20000;
  const fs::path dir = make_temp_dir("kite-admin-qf-");
  ASSERT_FALSE(dir.empty());
  const fs::path socket = dir / "admin.sock";
  write_file(dir / "acceptor.toml",
             "[engine]\nmodel = \"mono\"\nport = 0\nidle = \"block\"\n[admin]\nsocket = \"" + socket.string() +
                 "\"\n[defaults]\nSenderCompID = \"KITE\"\nStoreKind = \"file\"\nFileStorePath = \"" +
                 (dir / "store").string() + "\"\n[[session]]\nBeginString = \"FIX.4.4\"\nTargetCompID = \"QF\"\n");
  Child kite;
  ASSERT_TRUE(kite.start(
      {KITE_ACCEPTOR_BIN, "--config", (dir / "acceptor.toml").string(), "--ready-file", (dir / "port").string()},
      dir / "kite.out", dir / "kite.log"));
  ASSERT_TRUE(wait_for_text(dir / "port", "\n", 10000)) << read_file(dir / "kite.log");
  const std::string port = std::to_string(std::stoi(read_file(dir / "port")));
  fs::create_directories(dir / "qfstore");
  ::setenv("KITE_QF_STORE_DIR", (dir / "qfstore").c_str(), 1);
  Child qf;
  ASSERT_TRUE(qf.start({KITE_QF_PEER_BIN, "initiator", port, "FIX.4.4", "QF", "KITE", std::to_string(kOrders), "1", "0",
                        std::to_string(kite.pid()), "50"},
                       dir / "qf.out", dir / "qf.err"));
  // Mid-stream (one order in flight at a time keeps the stream going for a
  // while): jump our outbound number far ahead of anything sent.
  constexpr long kJumpTo = 1000000;
  std::string j;
  for (int i = 0; i < 500 && json_number(j, "messages_in") < kOrders / 4; ++i) {
    j = admin(socket, "sessions --json").out;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(json_number(j, "messages_in"), kOrders / 4) << j;
  const Answer set = admin(socket, "set-seq QF --out " + std::to_string(kJumpTo) + " --force");
  ASSERT_EQ(set.status, 0) << set.out;
  const int qf_code = qf.wait(60000);
  auto r = parse_summary(read_file(dir / "qf.out"));
  SCOPED_TRACE("quickfix:\n" + read_file(dir / "qf.out") + read_file(dir / "qf.err"));
  j = admin(socket, "sessions --json").out;
  const std::string m = admin(socket, "metrics").out;
  kite.signal(SIGTERM);
  EXPECT_EQ(kite.wait(10000), 0) << read_file(dir / "kite.log");

  EXPECT_EQ(qf_code, 0);
  EXPECT_EQ(r["sent"], kOrders);
  EXPECT_EQ(r["answered"], kOrders);                        // no order lost across the jump
  EXPECT_GE(r["resend_requests_out"], 1);                   // QuickFIX saw the gap and asked for it
  EXPECT_EQ(r["next_target"], json_number(j, "next_out"));  // and agrees with the number kite-admin shows
  EXPECT_GT(json_number(j, "next_out"), kJumpTo);
  EXPECT_NE(m.find("kite_resend_requests_received_total{session=\"FIX.4.4:KITE->QF\"} "), std::string::npos);
  EXPECT_EQ(m.find("kite_resend_requests_received_total{session=\"FIX.4.4:KITE->QF\"} 0\n"), std::string::npos) << m;
  EXPECT_EQ(m.find("kite_sequence_resets_sent_total{session=\"FIX.4.4:KITE->QF\"} 0\n"), std::string::npos) << m;
  // Logon, the orders and QuickFIX's session messages, all counted.
  EXPECT_GE(json_number(j, "messages_in"), kOrders + 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kite::interop
