// kite_qf_peer: the QuickFIX 1.15.1 side of the session interop and crash
// tests, as a process of its own (QuickFIX's headers need gnu++14 and do not
// pass Kite's warnings; the tests talk to it through its command line and
// the key=value summary it prints).
//
//   kite_qf_peer initiator PORT BEGIN SENDER TARGET ORDERS WINDOW GAPS KITE_PID TIMEOUT_S
//     Logs on to a Kite acceptor, sends ORDERS NewOrderSingles (at most
//     WINDOW unanswered) and counts the ExecutionReports per ClOrdID. It
//     keeps going across disconnects (QuickFIX reconnects every second and
//     resends what the acceptor asks for). With GAPS=1, after the stream:
//       1. its outbound MsgSeqNum jumps by 5 (setNextSenderMsgSeqNum), then
//          5 orders: Kite must ask for a resend and get a GapFill;
//       2. its expected inbound MsgSeqNum goes back by 5
//          (setNextTargetMsgSeqNum), then 1 order: QuickFIX asks Kite for a
//          resend and Kite serves its stored ExecutionReports (PossDupFlag=Y);
//       3. SIGUSR1 to KITE_PID (kite-acceptor --test-hooks skips 5 outbound
//          numbers), then 1 order: QuickFIX asks again, Kite gap-fills.
//     With GAPS=2, after the stream its expected inbound number goes back to
//     2 and 1 order is sent: the acceptor must resend everything it ever sent
//     (PossDupFlag=Y), from its store (the crash test: across a restart).
//     Then it logs out and prints the summary.
//   BEGIN "FIXT.1.1/FIX.5.0SP1" names the DefaultApplVerID (FIX.5.0SP2 when
//   none). Both sides validate with the repository's dictionaries.
//   kite_qf_peer acceptor PORT BEGIN SENDER TARGET TIMEOUT_S
//     A QuickFIX acceptor answering each NewOrderSingle with an
//     ExecutionReport (New); exits after the peer logs out (or TIMEOUT_S),
//     printing the summary.
#include <quickfix/Application.h>
#include <quickfix/FileStore.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/SocketInitiator.h>

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

struct Counters {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, int> answers;  // ClOrdID -> ExecutionReports (PossDup ones included)
  std::map<std::string, int> live;     // ClOrdID -> ExecutionReports without PossDupFlag
  long er_total = 0;
  long possdup = 0;
  long possdup_with_orig = 0;
  long possdup_first = 0;  // PossDup ERs that were the first answer for their ClOrdID
  long other_app = 0;
  long logons = 0;
  long logouts = 0;
  long resend_requests_in = 0;   // ResendRequests received
  long resend_requests_out = 0;  // ResendRequests sent
  long gap_fills_in = 0;         // SequenceReset-GapFill received
  long orders_in = 0;            // acceptor: NewOrderSingles received
  long orders_possdup_in = 0;    // acceptor: of which PossDupFlag=Y
  long rejects_in = 0;           // Reject (3) and BusinessMessageReject (j) received
  long rejects_out = 0;          // Reject (3) and BusinessMessageReject (j) sent
  bool logged_on = false;
};

Counters g;

std::string field(const FIX::FieldMap& m, int tag) { return m.isSetField(tag) ? m.getField(tag) : std::string(); }

class PeerApp : public FIX::Application {
 public:
  explicit PeerApp(bool acceptor) : acceptor_(acceptor) {}
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override {
    std::lock_guard<std::mutex> l(g.mu);
    ++g.logons;
    g.logged_on = true;
    g.cv.notify_all();
  }
  void onLogout(const FIX::SessionID&) override {
    std::lock_guard<std::mutex> l(g.mu);
    ++g.logouts;
    g.logged_on = false;
    g.cv.notify_all();
  }
  void toAdmin(FIX::Message& m, const FIX::SessionID&) override {
    const std::string type = field(m.getHeader(), 35);
    std::lock_guard<std::mutex> l(g.mu);
    if (type == "2") ++g.resend_requests_out;
    if (type == "3" || type == "j") ++g.rejects_out;
  }
  void toApp(FIX::Message& m, const FIX::SessionID&) throw(FIX::DoNotSend) override {
    if (field(m.getHeader(), 35) == "j") {
      std::lock_guard<std::mutex> l(g.mu);
      ++g.rejects_out;
    }
  }
  void fromAdmin(const FIX::Message& m, const FIX::SessionID&) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                     FIX::IncorrectTagValue,
                                                                     FIX::RejectLogon) override {
    const std::string type = field(m.getHeader(), 35);
    std::lock_guard<std::mutex> l(g.mu);
    if (type == "2") ++g.resend_requests_in;
    if (type == "3") ++g.rejects_in;
    if (type == "4" && field(m, 123) == "Y") ++g.gap_fills_in;
  }
  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                      FIX::IncorrectTagValue,
                                                                      FIX::UnsupportedMessageType) override {
    const std::string type = field(m.getHeader(), 35);
    const bool possdup = field(m.getHeader(), 43) == "Y";
    if (type == "j") {
      std::lock_guard<std::mutex> l(g.mu);
      ++g.rejects_in;
      return;
    }
    if (acceptor_) {
      if (type != "D") throw FIX::UnsupportedMessageType();
      {
        std::lock_guard<std::mutex> l(g.mu);
        ++g.orders_in;
        if (possdup) ++g.orders_possdup_in;
      }
      FIX::Message er;
      er.getHeader().setField(35, "8");
      const long n = ++next_id_;
      er.setField(37, std::to_string(n));
      er.setField(11, field(m, 11));
      er.setField(17, std::to_string(n));
      // Each version's required fields (dictionaries/FIX4x.xml, FIX50*.xml).
      const std::string& b = id.getBeginString();
      const bool fix40 = b == "FIX.4.0", before42 = fix40 || b == "FIX.4.1";
      if (before42 || b == "FIX.4.2") er.setField(20, "0");
      if (!fix40) er.setField(150, "0");
      er.setField(39, "0");
      er.setField(55, field(m, 55));
      er.setField(54, field(m, 54));
      er.setField(38, field(m, 38));
      if (before42) {
        er.setField(32, "0");
        er.setField(31, "0");
      }
      if (!fix40) er.setField(151, field(m, 38));
      er.setField(14, "0");
      er.setField(6, "0");
      FIX::Session::sendToTarget(er, id);
      return;
    }
    std::lock_guard<std::mutex> l(g.mu);
    if (type != "8") {
      ++g.other_app;
      return;
    }
    ++g.er_total;
    const int before = g.answers[field(m, 11)]++;
    if (!possdup) ++g.live[field(m, 11)];
    if (possdup) {
      ++g.possdup;
      if (m.getHeader().isSetField(122)) ++g.possdup_with_orig;
      if (before == 0) ++g.possdup_first;
    }
    g.cv.notify_all();
  }

 private:
  bool acceptor_;
  long next_id_ = 0;
};

FIX::SessionSettings make_settings(bool acceptor, int port, const FIX::SessionID& id) {
  FIX::SessionSettings s;
  FIX::Dictionary d;
  d.setString("ConnectionType", acceptor ? "acceptor" : "initiator");
  d.setString("StartTime", "00:00:00");
  d.setString("EndTime", "00:00:00");
  const char* hb = std::getenv("KITE_QF_HEARTBTINT");  // the crash test shortens it
  d.setString("HeartBtInt", hb != nullptr ? hb : "30");
  // Validation on, with the repository's dictionaries (KITE_DICTIONARY_DIR).
  const std::string dict = KITE_DICTIONARY_DIR;
  const std::string& begin = id.getBeginString();
  d.setString("UseDataDictionary", "Y");
  if (begin == "FIXT.1.1") {
    const char* appl = std::getenv("KITE_QF_APPLVER");  // FIX.5.0, FIX.5.0SP1 or FIX.5.0SP2
    const std::string appl_ver = appl != nullptr ? appl : "FIX.5.0SP2";
    d.setString("TransportDataDictionary", dict + "/FIXT11.xml");
    d.setString("AppDataDictionary", dict + "/FIX" + appl_ver.substr(4, 1) + appl_ver.substr(6) + ".xml");
  } else {
    d.setString("DataDictionary", dict + "/FIX" + begin.substr(4, 1) + begin.substr(6, 1) + ".xml");
  }
  d.setString("ReconnectInterval", "1");
  d.setString("SocketNodelay", "Y");
  d.setString("PersistMessages", "Y");
  if (begin == "FIXT.1.1") {
    const char* appl = std::getenv("KITE_QF_APPLVER");
    d.setString("DefaultApplVerID", appl != nullptr ? appl : "FIX.5.0SP2");
  }
  if (acceptor) {
    d.setString("SocketAcceptPort", std::to_string(port));
    d.setString("SocketReuseAddress", "Y");
  } else {
    d.setString("SocketConnectHost", "127.0.0.1");
    d.setString("SocketConnectPort", std::to_string(port));
  }
  s.set(id, d);
  // The socket initiator reads its reconnect interval from [DEFAULT] only.
  FIX::Dictionary defaults;
  defaults.setString("ReconnectInterval", "1");
  s.set(defaults);
  return s;
}

// A NewOrderSingle with the version's fields: HandlInst up to FIX.4.3, no
// TransactTime on FIX.4.0 and 4.1.
FIX::Message order(const std::string& cl, const std::string& begin) {
  FIX::Message m;
  m.getHeader().setField(35, "D");
  m.setField(11, cl);
  const bool before42 = begin == "FIX.4.0" || begin == "FIX.4.1";
  if (before42 || begin == "FIX.4.2" || begin == "FIX.4.3") m.setField(21, "1");
  m.setField(55, "KITE");
  m.setField(54, "1");
  if (!before42) m.setField(60, "20261130-00:00:00.000");
  m.setField(38, "100");
  m.setField(40, "2");
  m.setField(44, "101.25");
  return m;
}

void print_summary(FIX::Session* s, long sent) {
  std::lock_guard<std::mutex> l(g.mu);
  long answered = 0, twice = 0, live_twice = 0;
  for (const auto& kv : g.answers) {
    ++answered;
    if (kv.second > 1) ++twice;
  }
  for (const auto& kv : g.live)
    if (kv.second > 1) ++live_twice;
  std::printf("live_more_than_once=%ld\n", live_twice);
  std::printf(
      "sent=%ld\nanswered=%ld\nanswered_more_than_once=%ld\ner_total=%ld\npossdup=%ld\n"
      "possdup_with_orig=%ld\npossdup_first=%ld\nother_app=%ld\nlogons=%ld\nlogouts=%ld\n"
      "resend_requests_in=%ld\nresend_requests_out=%ld\ngap_fills_in=%ld\norders_in=%ld\n"
      "orders_possdup_in=%ld\nrejects_in=%ld\nrejects_out=%ld\n",
      sent, answered, twice, g.er_total, g.possdup, g.possdup_with_orig, g.possdup_first, g.other_app, g.logons,
      g.logouts, g.resend_requests_in, g.resend_requests_out, g.gap_fills_in, g.orders_in, g.orders_possdup_in, g.rejects_in, g.rejects_out);
  if (s != nullptr)
    std::printf("next_sender=%d\nnext_target=%d\n", s->getExpectedSenderNum(), s->getExpectedTargetNum());
  std::fflush(stdout);
}

// Waits until pred() (under g.mu) or the deadline.
template <class Pred>
bool wait_for(std::unique_lock<std::mutex>& l, Clock::time_point deadline, Pred pred) {
  while (!pred()) {
    if (Clock::now() >= deadline) return false;
    g.cv.wait_for(l, std::chrono::milliseconds(50));
  }
  return true;
}

int run_initiator(char** argv) {
  const int port = std::atoi(argv[2]);
  const FIX::SessionID id(argv[3], argv[4], argv[5]);
  const long orders = std::atol(argv[6]);
  const long window = std::atol(argv[7]);
  const int mode = std::atoi(argv[8]);  // 0: stream only, 1: forced gaps, 2: rewind at the end
  const pid_t kite = static_cast<pid_t>(std::atol(argv[9]));
  const auto deadline = Clock::now() + std::chrono::seconds(std::atoi(argv[10]));

  PeerApp app(false);
  // A file store when KITE_QF_STORE_DIR is set: QuickFIX's MemoryStore serves
  // no resend whose range starts at a number it never stored (a jump).
  const char* dir = std::getenv("KITE_QF_STORE_DIR");
  FIX::MemoryStoreFactory memory;
  std::unique_ptr<FIX::FileStoreFactory> file;
  if (dir != nullptr) file.reset(new FIX::FileStoreFactory(dir));
  FIX::MessageStoreFactory& store = file ? static_cast<FIX::MessageStoreFactory&>(*file) : memory;
  FIX::SessionSettings settings = make_settings(false, port, id);
  FIX::SocketInitiator init(app, store, settings);
  init.start();
  FIX::Session* s = FIX::Session::lookupSession(id);

  long sent = 0;
  bool ok = true;
  // Sends one order when logged on; waits for room in the window first.
  const auto send_orders = [&](const std::string& prefix, long n, long win) {
    for (long i = 1; i <= n && ok; ++i) {
      const std::string cl = prefix + std::to_string(i);
      {
        std::unique_lock<std::mutex> l(g.mu);
        ok = wait_for(l, deadline, [&] { return g.logged_on && sent - static_cast<long>(g.answers.size()) < win; });
      }
      if (!ok) break;
      FIX::Message m = order(cl, id.getBeginString());
      FIX::Session::sendToTarget(m, id);
      ++sent;
    }
  };
  const auto wait_answered = [&] {
    std::unique_lock<std::mutex> l(g.mu);
    ok = ok && wait_for(l, deadline, [&] { return static_cast<long>(g.answers.size()) >= sent; });
    // Let trailing resends and gap fills settle.
  };

  send_orders("C", orders, window);
  wait_answered();
  if (mode == 2 && ok) {
    // Rewind: expect the acceptor's second message again, so that it must
    // resend (as PossDup, from its store) everything it ever sent us. First
    // let the inbound side fall quiet: QuickFIX's reactor thread bumps the
    // expected number after it has processed a message, so a message still
    // being processed when we set 2 would make it 3 (the resend would then
    // start at 3, one report short).
    for (int i = 0, last = -1, same = 0; i < 100 && same < 2 && Clock::now() < deadline; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      const int now = s->getExpectedTargetNum();
      same = now == last ? same + 1 : 0;
      last = now;
    }
    s->setNextTargetMsgSeqNum(2);
    send_orders("Z", 1, 1);
    wait_answered();
    int last = -1;
    for (int i = 0; i < 100 && Clock::now() < deadline; ++i) {  // until the resend has settled
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int now = s->getExpectedTargetNum();
      if (now == last) break;
      last = now;
    }
  }
  if (mode == 1 && ok) {
    s->setNextSenderMsgSeqNum(s->getExpectedSenderNum() + 5);
    send_orders("G", 5, 5);
    wait_answered();
    if (ok) {
      s->setNextTargetMsgSeqNum(s->getExpectedTargetNum() - 5);
      send_orders("R", 1, 1);
      wait_answered();
    }
    if (ok && kite > 0) {
      ::kill(kite, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the hook acts on the session's next turn
      send_orders("K", 1, 1);
      wait_answered();
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (s != nullptr) s->logout("done");
  {
    std::unique_lock<std::mutex> l(g.mu);
    wait_for(l, Clock::now() + std::chrono::seconds(3), [&] { return !g.logged_on; });
  }
  print_summary(s, sent);
  init.stop();
  std::printf("ok=%d\n", ok ? 1 : 0);
  return ok ? 0 : 1;
}

int run_acceptor(char** argv) {
  const int port = std::atoi(argv[2]);
  const FIX::SessionID id(argv[3], argv[4], argv[5]);
  const auto deadline = Clock::now() + std::chrono::seconds(std::atoi(argv[6]));
  PeerApp app(true);
  FIX::MemoryStoreFactory store;
  FIX::SessionSettings settings = make_settings(true, port, id);
  FIX::SocketAcceptor acc(app, store, settings);
  acc.start();
  std::printf("listening=%d\n", port);
  std::fflush(stdout);
  FIX::Session* s = FIX::Session::lookupSession(id);
  {
    std::unique_lock<std::mutex> l(g.mu);
    wait_for(l, deadline, [&] { return g.logouts > 0; });
  }
  print_summary(s, 0);
  acc.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // BEGIN may be "FIXT.1.1/FIX.5.0SP1": the DefaultApplVerID after the slash.
  static std::string begin;
  if (argc > 3) {
    begin = argv[3];
    const std::size_t slash = begin.find('/');
    if (slash != std::string::npos) {
      ::setenv("KITE_QF_APPLVER", begin.c_str() + slash + 1, 1);
      begin.resize(slash);
      argv[3] = &begin[0];
    }
  }
  if (argc == 11 && std::string(argv[1]) == "initiator") return run_initiator(argv);
  if (argc == 7 && std::string(argv[1]) == "acceptor") return run_acceptor(argv);
  std::fprintf(stderr,
               "usage: kite_qf_peer initiator PORT BEGIN SENDER TARGET ORDERS WINDOW GAPS KITE_PID TIMEOUT_S\n"
               "       kite_qf_peer acceptor PORT BEGIN SENDER TARGET TIMEOUT_S\n");
  return 2;
}
