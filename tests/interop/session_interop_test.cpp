// Session interop with QuickFIX 1.15.1, both directions.
//  (a) a QuickFIX initiator (kite_qf_peer) logs on to kite-acceptor (a
//      process, ack mode, file store), sends 10,000 orders and gets every
//      ExecutionReport; then gaps are forced both ways and recovered through
//      resends (see session_qf_peer.cpp), checked from both sides' sequence
//      numbers and the messages received.
//  (b) a Kite initiator (engine Initiator + session layer, in this process)
//      against a QuickFIX acceptor (kite_qf_peer acceptor): 10,000 orders,
//      then the same two gaps forced from the Kite side.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "kite/codec/codec.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/log.hpp"
#include "kite/session/session.hpp"
#include "kite/session/store.hpp"
#include "kite/session/validation.hpp"
#include "kite/util/dictionary_dir.hpp"
#include "session_process.hpp"

namespace kite::interop {
namespace {

constexpr long kOrders = 10000;

std::string acceptor_config(int port, const fs::path& store, const std::string& begin, const std::string& target) {
  return "[engine]\nmodel = \"mono\"\nport = " + std::to_string(port) +
         "\nidle = \"block\"\n[app]\nmode = \"ack\"\n[defaults]\nSenderCompID = \"KITE\"\nUseDataDictionary = true\n"
         "StoreKind = \"file\"\n"
         "FileStorePath = \"" +
         store.string() + "\"\n[[session]]\nBeginString = \"" + begin + "\"\nTargetCompID = \"" + target + "\"\n" +
         (begin == "FIXT.1.1" ? "DefaultApplVerID = \"FIX.5.0SP2\"\n" : "");
}

class QuickFixInitiatorToKiteAcceptor : public ::testing::TestWithParam<const char*> {};

TEST_P(QuickFixInitiatorToKiteAcceptor, tenThousandOrdersAnsweredAndForcedGapsRecoveredThroughResends) {
  const std::string begin = GetParam();
  const fs::path dir = make_temp_dir("kite-interop-a-");
  ASSERT_FALSE(dir.empty());
  write_file(dir / "acceptor.toml", acceptor_config(0, dir / "store", begin, "QF"));

  Child kite;
  ASSERT_TRUE(kite.start({KITE_ACCEPTOR_BIN, "--config", (dir / "acceptor.toml").string(), "--ready-file",
                          (dir / "port").string(), "--test-hooks"},
                         dir / "kite.out", dir / "kite.log"));
  ASSERT_TRUE(wait_for_text(dir / "port", "\n", 10000)) << read_file(dir / "kite.log");
  const std::string port = std::to_string(std::stoi(read_file(dir / "port")));

  fs::create_directories(dir / "qfstore");
  ::setenv("KITE_QF_STORE_DIR", (dir / "qfstore").c_str(), 1);
  Child qf;
  ASSERT_TRUE(qf.start({KITE_QF_PEER_BIN, "initiator", port, begin, "QF", "KITE", std::to_string(kOrders), "200", "1",
                        std::to_string(kite.pid()), "50"},
                       dir / "qf.out", dir / "qf.err"));
  const int qf_code = qf.wait(60000);
  kite.signal(SIGTERM);
  const int kite_code = kite.wait(10000);
  const std::string kite_log = read_file(dir / "kite.log");
  auto r = parse_summary(read_file(dir / "qf.out"));
  SCOPED_TRACE("quickfix:\n" + read_file(dir / "qf.out") + read_file(dir / "qf.err"));

  EXPECT_EQ(qf_code, 0);
  EXPECT_EQ(kite_code, 0) << kite_log;
  EXPECT_EQ(r["ok"], 1);
  // 10,000 orders plus 5 across the inbound gap, 1 across each outbound gap.
  const long total = kOrders + 7;
  EXPECT_EQ(r["sent"], total);
  EXPECT_EQ(r["answered"], total);  // every ClOrdID has its ExecutionReport
  // Every ClOrdID was answered once in the live stream; the only second
  // answers are PossDup resends QuickFIX asked for after its gap.
  EXPECT_EQ(r["er_total"] - r["possdup"], total - r["possdup_first"]);
  EXPECT_GE(r["possdup"], 5);                       // Kite resent stored ExecutionReports ...
  EXPECT_EQ(r["possdup_with_orig"], r["possdup"]);  // ... each with OrigSendingTime
  EXPECT_GE(r["resend_requests_in"], 1);            // Kite asked QuickFIX to resend (inbound gap)
  EXPECT_GE(r["resend_requests_out"], 2);           // QuickFIX asked Kite twice (target moved back, Kite skipped)
  EXPECT_GE(r["gap_fills_in"], 1);                  // Kite's skipped numbers came back as a GapFill
  EXPECT_EQ(r["other_app"], 0);
  EXPECT_NE(kite_log.find("MsgSeqNum too high"), std::string::npos);
  EXPECT_NE(kite_log.find("ResendRequest for"), std::string::npos);
  EXPECT_NE(kite_log.find("outbound sequence skipped by 5"), std::string::npos);

  // Both sides agree on both numbers at the end.
  long out = 0, in = 0;
  ASSERT_TRUE(last_sequences(kite_log, begin + ":KITE->QF", out, in)) << kite_log;
  EXPECT_EQ(in, r["next_sender"]);
  EXPECT_EQ(out, r["next_target"]);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Versions, QuickFixInitiatorToKiteAcceptor, ::testing::Values("FIX.4.4", "FIX.4.2"));

TEST(KiteAcceptorShutdown, sigtermLogsOutTheQuickFixSessionAndExitsCleanly) {
  const fs::path dir = make_temp_dir("kite-interop-stop-");
  ASSERT_FALSE(dir.empty());
  write_file(dir / "acceptor.toml", acceptor_config(0, dir / "store", "FIX.4.4", "QF"));
  Child kite;
  ASSERT_TRUE(kite.start(
      {KITE_ACCEPTOR_BIN, "--config", (dir / "acceptor.toml").string(), "--ready-file", (dir / "port").string()},
      dir / "kite.out", dir / "kite.log"));
  ASSERT_TRUE(wait_for_text(dir / "port", "\n", 10000)) << read_file(dir / "kite.log");
  const std::string port = std::to_string(std::stoi(read_file(dir / "port")));
  ::unsetenv("KITE_QF_STORE_DIR");
  Child qf;  // an endless stream, cut by the shutdown
  ASSERT_TRUE(qf.start({KITE_QF_PEER_BIN, "initiator", port, "FIX.4.4", "QF", "KITE", "100000000", "10", "0", "0", "4"},
                       dir / "qf.out", dir / "qf.err"));
  ASSERT_TRUE(wait_for_text(dir / "kite.log", "logged on", 10000)) << read_file(dir / "kite.log");
  kite.signal(SIGTERM);
  EXPECT_EQ(kite.wait(10000), 0);
  qf.wait(15000);
  const std::string log = read_file(dir / "kite.log");
  auto r = parse_summary(read_file(dir / "qf.out"));
  EXPECT_NE(log.find("Logout sent: kite-acceptor shutting down"), std::string::npos) << log;
  EXPECT_NE(log.find("Logout answered"), std::string::npos) << log;  // QuickFIX answered before the exit
  EXPECT_NE(log.find("stopped (0 connection(s) were still open)"), std::string::npos) << log;
  EXPECT_GE(r["logouts"], 1);
  fs::remove_all(dir);
}

// --- (b) Kite initiator, QuickFIX acceptor ------------------------------------

namespace tag = codec::tag;

// Sends kOrders orders with up to kWindow unanswered, then forces the two gaps
// from the session's own thread, then logs out.
class KiteClient final : public session::Application {
 public:
  static constexpr long kWindow = 200;
  void on_logon(session::Session& s) noexcept override {
    ++logons;
    while (phase == 0 && sent < kOrders && sent - static_cast<long>(answers.size()) < kWindow) send(s, "C");
  }
  void on_logout(session::Session&, const char*) noexcept override { done.store(true); }
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "8") {
      ++other;
      return;
    }
    std::string_view cl;
    ix.get(tag::ClOrdID, cl);
    ++answers[std::string(cl)];
    ++er_total;
    if (h.poss_dup) ++possdup;
    const long answered = static_cast<long>(answers.size());
    if (phase == 0) {
      while (sent < kOrders && sent - answered < kWindow) send(s, "C");
      if (answered == kOrders) {
        phase = 1;  // our outbound numbers jump: QuickFIX must ask and get a GapFill
        s.set_next_sender_seq(s.next_sender_seq() + 5);
        for (int i = 0; i < 5; ++i) send(s, "G");
      }
    } else if (phase == 1 && answered == kOrders + 5) {
      phase = 2;  // we forget 5 inbound numbers: we ask, QuickFIX resends its reports
      s.set_next_target_seq(s.next_target_seq() - 5);
      send(s, "R");
    } else if (phase == 2 && answered == kOrders + 6 && s.queued() == 0) {
      phase = 3;
      s.logout("done");
    }
  }

  std::map<std::string, int> answers;
  long sent = 0;
  long er_total = 0;
  long possdup = 0;
  long other = 0;
  int logons = 0;
  int phase = 0;
  std::atomic<bool> done{false};

 private:
  void send(session::Session& s, const char* prefix) {
    char id[32];
    std::snprintf(id, sizeof id, "%s%ld", prefix, ++sent);
    s.send("D", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, id);
      w.add_char(tag::HandlInst, '1');
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_timestamp(tag::TransactTime, codec::utc_now_ns());
      w.add_uint(tag::OrderQty, 100);
      w.add_char(tag::OrdType, '2');
      w.add_decimal(tag::Price, codec::Decimal{10125, -2});
    });
  }
};

TEST(KiteInitiatorToQuickFixAcceptor, tenThousandOrdersAnsweredAndForcedGapsRecoveredThroughResends) {
  const fs::path dir = make_temp_dir("kite-interop-b-");
  ASSERT_FALSE(dir.empty());
  const int port = free_port();
  ASSERT_GT(port, 0);
  Child qf;
  ASSERT_TRUE(qf.start({KITE_QF_PEER_BIN, "acceptor", std::to_string(port), "FIX.4.4", "QFA", "KITEI", "50"},
                       dir / "qf.out", dir / "qf.err"));
  ASSERT_TRUE(wait_for_text(dir / "qf.out", "listening=", 10000)) << read_file(dir / "qf.err");

  session::SystemClock clock;
  session::MemoryLogger log;
  session::SessionSettings st;
  st.role = session::Role::initiator;
  st.begin_string = "FIX.4.4";
  st.sender_comp_id = "KITEI";
  st.target_comp_id = "QFA";
  st.heart_bt_int = 30;
  st.validate = true;  // the dictionary on both sides
  st.data_dictionary = util::dictionary_dir();
  session::MemoryStore store;
  KiteClient app;
  session::Session s(st, store, app, clock, log);
  const auto validator = session::DictionaryValidator::for_settings(st);
  s.set_validator(validator.get());
  link::InitiatorFactory factory(s, clock, log);

  engine::InitiatorConfig cfg;
  cfg.port = static_cast<std::uint16_t>(port);
  cfg.sessions = 1;
  cfg.idle = {engine::IdleKind::block, 0, 1000};
  std::string error;
  std::unique_ptr<engine::Initiator> init;
  for (int attempt = 0; attempt < 50 && !init; ++attempt) {
    init = engine::Initiator::start(cfg, factory, error);
    if (!init) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(init) << error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
  while (!app.done.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  init->wait_closed(5000);
  init->stop();
  const int qf_code = qf.wait(10000);
  auto r = parse_summary(read_file(dir / "qf.out"));
  std::string lines;
  for (const auto& l : log.lines()) lines += l + "\n";
  SCOPED_TRACE("quickfix:\n" + read_file(dir / "qf.out") + read_file(dir / "qf.err") + "kite:\n" + lines);

  EXPECT_TRUE(app.done.load());
  EXPECT_EQ(qf_code, 0);
  EXPECT_EQ(app.logons, 1);
  EXPECT_EQ(app.phase, 3);
  const long total = kOrders + 6;
  EXPECT_EQ(app.sent, total);
  EXPECT_EQ(static_cast<long>(app.answers.size()), total);  // every order answered
  EXPECT_GE(app.possdup, 5);                                // QuickFIX resent its reports to us
  long twice = 0;
  for (const auto& kv : app.answers) twice += kv.second > 1 ? 1 : 0;
  EXPECT_LE(twice, app.possdup);  // a second answer is only ever a PossDup resend
  EXPECT_EQ(app.other, 0);
  EXPECT_EQ(r["orders_in"], total);        // QuickFIX got each order once (no resend of orders needed) ...
  EXPECT_GE(r["resend_requests_out"], 1);  // ... after asking us for the skipped numbers
  EXPECT_GE(r["gap_fills_in"], 1);         // which we gap-filled
  EXPECT_GE(r["resend_requests_in"], 1);   // and we asked QuickFIX for its reports
  EXPECT_TRUE(log.contains("ResendRequest sent"));
  // Both sides agree on both numbers at the end.
  EXPECT_EQ(static_cast<long>(s.next_sender_seq()), r["next_target"]);
  EXPECT_EQ(static_cast<long>(s.next_target_seq()), r["next_sender"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kite::interop
