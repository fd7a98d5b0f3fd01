// order-gateway: a FIX acceptor whose sessions are answered by an application
// of its own, on Kite's C++ library as installed (find_package(Kite) or
// pkg-config kite). It acknowledges every NewOrderSingle with an
// ExecutionReport (ExecType New) and counts them.
//
//   order-gateway gateway.toml      the acceptor's file (docs/acceptor.md)
//
// Stops on SIGTERM or SIGINT: every session is logged out first.
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "kite/codec/fix.hpp"

namespace {

using namespace kite;

// One per session. The acceptor calls it on the thread that owns the
// session's connection, with views into the receive buffer that die when
// on_message returns: read what the reply needs, reply, return.
class Gateway final : public session::Application {
 public:
  explicit Gateway(std::atomic<std::uint64_t>& acknowledged) : acknowledged_(acknowledged) {}

  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "D") {  // NewOrderSingle only
      s.send_business_reject(h.msg_seq_num, h.msg_type, 3, "unsupported message type");
      return;
    }
    std::string_view cl_ord_id, symbol;
    char side = 0;
    codec::Decimal qty;
    for (auto [tag, got] : {std::pair{codec::tag::ClOrdID, ix.get(codec::tag::ClOrdID, cl_ord_id)},
                            std::pair{codec::tag::Symbol, ix.get(codec::tag::Symbol, symbol)},
                            std::pair{codec::tag::Side, ix.get(codec::tag::Side, side)},
                            std::pair{codec::tag::OrderQty, ix.get(codec::tag::OrderQty, qty)}}) {
      if (got != codec::Get::ok) {
        s.send_reject(h.msg_seq_num, h.msg_type, codec::RejectReason::required_tag_missing, tag, "missing or bad");
        return;
      }
    }
    const std::uint64_t id = ++last_id_;
    // send_or_store: an ExecutionReport that cannot go out now (back-pressure)
    // is kept under its MsgSeqNum and reaches the peer by resend; never lost.
    s.send_or_store("8", [&](codec::MessageWriter& w) {
      w.add_uint(codec::tag::OrderID, id);
      w.add_string(codec::tag::ClOrdID, cl_ord_id);
      w.add_uint(codec::tag::ExecID, id);
      w.add_char(codec::tag::ExecType, '0');  // New
      w.add_char(codec::tag::OrdStatus, '0');
      w.add_string(codec::tag::Symbol, symbol);
      w.add_char(codec::tag::Side, side);
      w.add_decimal(codec::tag::OrderQty, qty);
      w.add_decimal(codec::tag::LeavesQty, qty);
      w.add_decimal(codec::tag::CumQty, {});
      w.add_decimal(codec::tag::AvgPx, {});
      w.add_timestamp(codec::tag::TransactTime, s.time_ns());
    });
    acknowledged_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::uint64_t>& acknowledged_;
  std::uint64_t last_id_ = 0;  // this session's; OrderIDs repeat across sessions
};

// Gives the acceptor one Gateway per configured session (in place of the
// built-in order-entry application of [app] mode).
class Hooks final : public app::AcceptorHooks {
 public:
  Hooks(std::size_t sessions, std::atomic<std::uint64_t>& acknowledged) {
    for (std::size_t i = 0; i < sessions; ++i) apps_.push_back(std::make_unique<Gateway>(acknowledged));
  }
  session::Application* application(std::size_t i, const session::SessionSettings&, app::OrderApplication&) override {
    return apps_[i].get();
  }

 private:
  std::vector<std::unique_ptr<Gateway>> apps_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: order-gateway CONFIG.toml\n");
    return 2;
  }
  session::StderrLogger log;
  std::atomic<std::uint64_t> acknowledged{0};
  std::unique_ptr<Hooks> hooks;  // outlives the acceptor (declared first)
  std::unique_ptr<app::Acceptor> acceptor;
  try {
    app::AcceptorConfig config = app::load_acceptor_config(argv[1]);
    hooks = std::make_unique<Hooks>(config.sessions.sessions.size(), acknowledged);
    acceptor = std::make_unique<app::Acceptor>(std::move(config), log, hooks.get());
  } catch (const std::exception& e) {  // one line naming the file, table and setting
    std::fprintf(stderr, "order-gateway: %s\n", e.what());
    return 2;
  }

  // Blocked before the engine's threads start, so that they inherit the mask
  // and the signals come to sigwait below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::string error;
  if (!acceptor->start(error)) {
    std::fprintf(stderr, "order-gateway: %s\n", error.c_str());
    return 1;
  }
  std::printf("order-gateway: listening on port %u\n", acceptor->port());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop, &sig);
  acceptor->shutdown();  // Logout to every session, answers awaited briefly
  std::printf("order-gateway: %llu orders acknowledged\n", static_cast<unsigned long long>(acknowledged.load()));
  return 0;
}
