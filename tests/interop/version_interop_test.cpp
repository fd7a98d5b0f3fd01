// Every FIX version Kite loads, both directions, dictionaries on both sides
// (issue 35). Per version, at once:
//  - kite-initiator (UseDataDictionary = true) sends 1,000 orders to a
//    QuickFIX acceptor (UseDataDictionary=Y with the repository's
//    dictionaries) on one session and 1,000 to kite-acceptor
//    (UseDataDictionary = true) on another;
//  - a QuickFIX initiator (dictionary on) sends 1,000 orders carrying its
//    version's fields to the same kite-acceptor.
// Each order gets exactly one ExecutionReport and nobody sends a Reject.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "session_process.hpp"

namespace kite::interop {
namespace {

constexpr long kOrders = 1000;

struct Version {
  const char* name;   // the test's name
  const char* begin;  // BeginString
  const char* appl;   // DefaultApplVerID on FIXT.1.1, else ""
};

std::string fixt_line(const Version& v) {
  return *v.appl != '\0' ? std::string("DefaultApplVerID = \"") + v.appl + "\"\n" : std::string();
}

// kite_qf_peer's BEGIN argument: "FIXT.1.1/FIX.5.0SP1" on FIXT.
std::string qf_begin(const Version& v) { return *v.appl != '\0' ? std::string(v.begin) + "/" + v.appl : v.begin; }

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The sum of kite-initiator's interval lines' "reports N" (every session).
long reports_so_far(const std::string& log) {
  static const std::regex re("sent [0-9]+, reports ([0-9]+)");
  long n = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it)
    n += std::stol((*it)[1]);
  return n;
}

// kite-initiator's last words for one session: "orders sent N, execution reports M".
bool final_counts(const std::string& log, const std::string& who, long& sent, long& reports) {
  const std::regex re(std::regex_replace(who, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                      " orders sent ([0-9]+), execution reports ([0-9]+)");
  std::smatch m;
  if (!std::regex_search(log, m, re)) return false;
  sent = std::stol(m[1]);
  reports = std::stol(m[2]);
  return true;
}

class EveryVersion : public ::testing::TestWithParam<Version> {};

TEST_P(EveryVersion, kiteAndQuickFixValidatingBothWaysAnswerEveryOrderOnceWithoutReject) {
  const Version& v = GetParam();
  const fs::path dir = make_temp_dir("kite-versions-");
  ASSERT_FALSE(dir.empty());
  const int qf_port = free_port();
  ASSERT_GT(qf_port, 0);

  Child qf_acceptor;
  ASSERT_TRUE(qf_acceptor.start({KITE_QF_PEER_BIN, "acceptor", std::to_string(qf_port), qf_begin(v), "QFA", "KI", "60"},
                                dir / "qfa.out", dir / "qfa.err"));

  write_file(dir / "acceptor.toml", "[engine]\nmodel = \"mono\"\nport = 0\nidle = \"block\"\n[app]\nmode = \"ack\"\n"
                                    "[defaults]\nSenderCompID = \"KITE\"\nBeginString = \"" +
                                        std::string(v.begin) + "\"\n" + fixt_line(v) +
                                        "UseDataDictionary = true\n[[session]]\nTargetCompID = \"KI\"\n"
                                        "[[session]]\nTargetCompID = \"QF\"\n");
  Child kite_acceptor;
  ASSERT_TRUE(kite_acceptor.start(
      {KITE_ACCEPTOR_BIN, "--config", (dir / "acceptor.toml").string(), "--ready-file", (dir / "port").string()},
      dir / "acceptor.out", dir / "acceptor.log"));
  ASSERT_TRUE(wait_for_text(dir / "port", "\n", 10000)) << read_file(dir / "acceptor.log");
  const int kite_port = std::stoi(read_file(dir / "port"));
  ASSERT_TRUE(wait_for_text(dir / "qfa.out", "listening=", 10000)) << read_file(dir / "qfa.err");

  write_file(dir / "initiator.toml",
             "[orders]\nsource = \"rate\"\nrate = 2000\ncount = " + std::to_string(kOrders) +
                 "\nreport_interval_s = 1\n[app]\nshutdown_wait_ms = 3000\n"
                 "[defaults]\nConnectionType = \"initiator\"\nSenderCompID = \"KI\"\nBeginString = \"" +
                 v.begin + "\"\n" + fixt_line(v) +
                 "UseDataDictionary = true\nHeartBtInt = 30\nSocketConnectHost = \"127.0.0.1\"\n"
                 "ReconnectInterval = 1\n[[session]]\nTargetCompID = \"QFA\"\nSocketConnectPort = " +
                 std::to_string(qf_port) + "\n[[session]]\nTargetCompID = \"KITE\"\nSocketConnectPort = " +
                 std::to_string(kite_port) + "\n");
  Child kite_initiator;
  ASSERT_TRUE(kite_initiator.start({KITE_INITIATOR_BIN, "--config", (dir / "initiator.toml").string()},
                                   dir / "initiator.out", dir / "initiator.log"));
  Child qf_initiator;
  ASSERT_TRUE(qf_initiator.start({KITE_QF_PEER_BIN, "initiator", std::to_string(kite_port), qf_begin(v), "QF", "KITE",
                                  std::to_string(kOrders), "200", "0", "0", "40"},
                                 dir / "qfi.out", dir / "qfi.err"));

  // kite-initiator's two sessions: every order answered, or 30 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (reports_so_far(read_file(dir / "initiator.log")) < 2 * kOrders && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a late second answer would show
  kite_initiator.signal(SIGTERM);
  EXPECT_EQ(kite_initiator.wait(15000), 0);
  EXPECT_EQ(qf_initiator.wait(45000), 0);
  EXPECT_EQ(qf_acceptor.wait(15000), 0);
  kite_acceptor.signal(SIGTERM);
  EXPECT_EQ(kite_acceptor.wait(10000), 0);

  const std::string ini = read_file(dir / "initiator.log");
  const std::string acc = read_file(dir / "acceptor.log");
  auto qfa = parse_summary(read_file(dir / "qfa.out"));
  auto qfi = parse_summary(read_file(dir / "qfi.out"));
  SCOPED_TRACE("kite-initiator:\n" + ini + "kite-acceptor:\n" + acc + "quickfix acceptor:\n" +
               read_file(dir / "qfa.out") + read_file(dir / "qfa.err") + "quickfix initiator:\n" +
               read_file(dir / "qfi.out") + read_file(dir / "qfi.err"));

  // kite-initiator -> QuickFIX acceptor.
  long sent = 0, reports = 0;
  ASSERT_TRUE(final_counts(ini, std::string(v.begin) + ":KI->QFA", sent, reports));
  EXPECT_EQ(sent, kOrders);
  EXPECT_EQ(reports, kOrders);
  EXPECT_EQ(qfa["orders_in"], kOrders);
  EXPECT_EQ(qfa["rejects_out"], 0);  // QuickFIX's dictionary took every order
  EXPECT_EQ(qfa["rejects_in"], 0);   // and Kite's took every report
  // kite-initiator -> kite-acceptor.
  ASSERT_TRUE(final_counts(ini, std::string(v.begin) + ":KI->KITE", sent, reports));
  EXPECT_EQ(sent, kOrders);
  EXPECT_EQ(reports, kOrders);
  // QuickFIX initiator -> kite-acceptor.
  EXPECT_EQ(qfi["ok"], 1);
  EXPECT_EQ(qfi["sent"], kOrders);
  EXPECT_EQ(qfi["answered"], kOrders);
  EXPECT_EQ(qfi["er_total"], kOrders);  // exactly one report per order
  EXPECT_EQ(qfi["other_app"], 0);
  EXPECT_EQ(qfi["rejects_in"], 0);
  EXPECT_EQ(qfi["rejects_out"], 0);
  // No Reject either way in Kite's logs (sent: "Reject of", received: "Reject received").
  EXPECT_EQ(count_of(acc, "Reject of"), 0u);
  EXPECT_EQ(count_of(ini, "Reject of"), 0u);
  EXPECT_EQ(count_of(acc, "Reject received"), 0u);
  EXPECT_EQ(count_of(ini, "Reject received"), 0u);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Versions, EveryVersion,
    ::testing::Values(Version{"FIX40", "FIX.4.0", ""}, Version{"FIX41", "FIX.4.1", ""},
                      Version{"FIX42", "FIX.4.2", ""}, Version{"FIX43", "FIX.4.3", ""},
                      Version{"FIX44", "FIX.4.4", ""}, Version{"FIX50", "FIXT.1.1", "FIX.5.0"},
                      Version{"FIX50SP1", "FIXT.1.1", "FIX.5.0SP1"}, Version{"FIX50SP2", "FIXT.1.1", "FIX.5.0SP2"}),
    [](const ::testing::TestParamInfo<Version>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace kite::interop
