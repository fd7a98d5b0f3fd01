// The quickfix flavour. Built as gnu++14 without Kite's warning flags: the
// QuickFIX 1.14/1.15 headers need both. Tuned as a QuickFIX user would for
// latency: no message log (no LogFactory), null or memory store,
// SocketNodelay=Y, no data dictionary, no latency check; the acceptor is a
// SocketAcceptor polled by one thread of ours, pinned and named, which spins
// (poll with a zero timeout) or blocks (poll with a 100 ms timeout).
#include "quickfix_server.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <quickfix/Application.h>
#include <quickfix/FileStore.h>
#include <quickfix/MessageStore.h>
#include <quickfix/NullStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/fix44/ExecutionReport.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

namespace kite {
namespace bench {
namespace {

class AckApplication : public FIX::Application {
 public:
  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID&) override {}
  void onLogout(const FIX::SessionID&) override {}
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}
  void fromAdmin(const FIX::Message&, const FIX::SessionID&) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                   FIX::IncorrectTagValue, FIX::RejectLogon) override {}
  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                      FIX::IncorrectTagValue,
                                                                      FIX::UnsupportedMessageType) override {
    if (m.getHeader().getField(FIX::FIELD::MsgType) != "D") throw FIX::UnsupportedMessageType();
    ++orders_;
    const std::string oid = std::to_string(first_id_ + orders_);
    const std::string qty = m.getField(FIX::FIELD::OrderQty);
    FIX44::ExecutionReport er{FIX::OrderID(oid),
                              FIX::ExecID(oid),
                              FIX::ExecType('0'),
                              FIX::OrdStatus('0'),
                              FIX::Side(m.getField(FIX::FIELD::Side)[0]),
                              FIX::LeavesQty(0),
                              FIX::CumQty(0),
                              FIX::AvgPx(0)};
    er.setField(FIX::FIELD::ClOrdID, m.getField(FIX::FIELD::ClOrdID));
    er.setField(FIX::FIELD::Symbol, m.getField(FIX::FIELD::Symbol));
    er.setField(FIX::FIELD::OrderQty, qty);
    er.setField(FIX::FIELD::Price, m.getField(FIX::FIELD::Price));
    er.setField(FIX::FIELD::LeavesQty, qty);
    er.setField(FIX::TransactTime(FIX::UtcTimeStamp(), 3));
    FIX::Session::sendToTarget(er, id);
  }

 private:
  // IDs of kite-acceptor's width: counted from the start time in microseconds.
  const unsigned long long first_id_ = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
  unsigned long long orders_ = 0;

 public:
  unsigned long long orders() const { return orders_; }
};

void name_and_pin(const char* name, int core) {
  pthread_setname_np(pthread_self(), name);
  if (core >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
}

}  // namespace

int run_quickfix_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error) {
  int port = o.port;
  if (port == 0) {  // QuickFIX cannot report an ephemeral port: pick a free one
    const int fd = listen_tcp(o.bind, port, false, error);
    if (fd < 0) return 1;
    ::close(fd);
  }
  try {
    FIX::SessionSettings settings;
    FIX::Dictionary defaults;
    defaults.setString(FIX::CONNECTION_TYPE, "acceptor");
    defaults.setInt(FIX::SOCKET_ACCEPT_PORT, port);
    defaults.setString(FIX::SOCKET_REUSE_ADDRESS, "Y");
    defaults.setString(FIX::SOCKET_NODELAY, "Y");
    defaults.setString(FIX::START_TIME, "00:00:00");
    defaults.setString(FIX::END_TIME, "00:00:00");
    defaults.setString(FIX::USE_DATA_DICTIONARY, "N");
    defaults.setString(FIX::CHECK_LATENCY, "N");
    defaults.setString(FIX::VALIDATE_USER_DEFINED_FIELDS, "N");
    defaults.setString(FIX::RESET_ON_LOGON, "Y");
    defaults.setString(FIX::RESET_ON_DISCONNECT, "Y");
    defaults.setString(FIX::PERSIST_MESSAGES, o.store == "null" ? "N" : "Y");
    if (o.store == "file") defaults.setString(FIX::FILE_STORE_PATH, o.store_dir.empty() ? "." : o.store_dir);
    settings.set(defaults);
    for (unsigned k = 0; k < std::max(1u, o.sessions); ++k) {
      FIX::Dictionary d;
      settings.set(FIX::SessionID("FIX.4.4", "KITE", "BENCH" + std::to_string(k)), d);
    }
    AckApplication app;
    std::unique_ptr<FIX::MessageStoreFactory> store;
    if (o.store == "file")
      store.reset(new FIX::FileStoreFactory(settings));
    else if (o.store == "memory")
      store.reset(new FIX::MemoryStoreFactory());
    else
      store.reset(new FIX::NullStoreFactory());
    FIX::SocketAcceptor acceptor(app, *store, settings);  // no LogFactory: nothing is logged

    std::atomic<int> state(0);  // 0 starting, 1 listening, -1 failed
    std::string thread_error;
    std::thread t([&] {
      name_and_pin(o.model == "single" ? "kite-single" : "kite-mono", o.cores.empty() ? -1 : o.cores[0]);
      try {
        acceptor.poll(0.0);  // the first poll binds the listener
        state = 1;
        const double timeout = o.spin ? 0.0 : 0.1;
        LoopLoad load;
        load.start();
        while (!stop.load(std::memory_order_relaxed)) {
          const unsigned long long before = app.orders();
          acceptor.poll(timeout);
          load.pass(app.orders() != before);  // a poll that answered an order (other work is rare here)
        }
        // Stopping: a Logout to every logged-on session (QuickFIX sends it from the
        // next polls), then a bounded wait for the answers, inside the lab's grace.
        std::vector<FIX::Session*> on;
        for (unsigned k = 0; k < std::max(1u, o.sessions); ++k) {
          FIX::Session* s = FIX::Session::lookupSession(FIX::SessionID("FIX.4.4", "KITE", "BENCH" + std::to_string(k)));
          if (s != nullptr && s->isLoggedOn()) {
            s->logout("server stopping");
            on.push_back(s);
          }
        }
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (std::chrono::steady_clock::now() < until &&
               std::any_of(on.begin(), on.end(), [](FIX::Session* s) { return s->isLoggedOn(); }))
          acceptor.poll(0.01);
        load.report(o.model == "single" ? "kite-single" : "kite-mono", app.orders());
      } catch (const std::exception& e) {
        thread_error = e.what();
        state = -1;
      }
    });
    while (state == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (state == 1 && !write_ready_file(o.ready_file, port)) {
      error = "cannot write the ready file " + o.ready_file;
      const_cast<std::atomic<bool>&>(stop).store(true);
    }
    t.join();
    if (state == -1) {
      error = "quickfix: " + thread_error;
      return 1;
    }
    acceptor.stop(true);
  } catch (const std::exception& e) {
    error = std::string("quickfix: ") + e.what();
    return 1;
  }
  return error.empty() ? 0 : 1;
}

}  // namespace bench
}  // namespace kite
