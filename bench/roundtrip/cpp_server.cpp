#include "cpp_server.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kite/codec/codec.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"
#include "kite/session/settings.hpp"
#include "messages.hpp"
#include "server.hpp"

namespace kite::bench {
namespace {

// One ExecutionReport (New) per NewOrderSingle; anything else is refused
// with a BusinessMessageReject. Shared by every session: the counters are
// per-thread values only in the sense that each session's thread bumps them
// (the IDs need only be distinct enough for a benchmark).
class AckApplication final : public session::Application {
 public:
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "D") {
      s.send_business_reject(h.msg_seq_num, h.msg_type, 3, "unsupported message type");
      return;
    }
    OrderEcho e;
    ix.get(codec::tag::ClOrdID, e.cl_ord_id);
    ix.get(codec::tag::Symbol, e.symbol);
    ix.get(codec::tag::Account, e.account);
    ix.get(codec::tag::Side, e.side);
    ix.get(codec::tag::OrderQty, e.order_qty);
    ix.get(codec::tag::Price, e.price);
    const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t now = s.time_ns();  // the clock read once for this message
    s.send("8", [&](codec::MessageWriter& w) { add_execution_report_body(w, now, e, id, id); });
  }
  std::uint64_t orders() const noexcept { return next_id_.load(std::memory_order_relaxed) - 1; }

 private:
  std::atomic<std::uint64_t> next_id_{1};
};

}  // namespace

int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error) {
  engine::EngineConfig c;
  if (!engine::parse_model(o.model, c.model)) {
    error = "bad model " + o.model;
    return 1;
  }
  if (!transport::parse_kind(o.transport, c.transport) || !transport::compiled_in(c.transport)) {
    error = "unsupported: cpp server has no " + o.transport + " transport in this build";
    return 3;
  }
  if (!engine::supports(c.transport, c.model)) {
    error = "unsupported: cpp server cannot run " + o.model + " on " + o.transport;
    return 3;
  }
  const int sessions = static_cast<int>(std::max(1u, o.sessions));
  const int workers = static_cast<int>(std::max(1u, o.workers));
  c.bind_address = o.bind;
  c.port = static_cast<std::uint16_t>(o.port);
  c.workers = workers;
  c.cores = o.cores;
  c.coordinator_core = o.coordinator_core;
  c.idle.kind = o.spin ? engine::IdleKind::busy_spin : engine::IdleKind::block;
  c.busy_poll_usecs = o.busy_poll_usecs;
  c.quickack = o.quickack;
  c.send_full = engine::SendFullPolicy::wait;
  switch (c.model) {
    case engine::Model::single: c.max_connections = 1; break;
    case engine::Model::pool: c.max_connections = (sessions + workers - 1) / workers; break;
    default: c.max_connections = sessions; break;
  }

  session::SystemClock clock;
  session::StderrLogger log;
  AckApplication app;
  session::SessionRegistry registry(clock, log);
  try {
    for (int k = 0; k < sessions; ++k) {
      session::SessionSettings s;
      s.role = session::Role::acceptor;
      s.begin_string = "FIX.4.4";
      s.sender_comp_id = std::string(kServerCompID);
      s.target_comp_id = client_comp_id(static_cast<unsigned>(k));
      s.reset_on_logon = true;
      s.reset_on_disconnect = true;
      s.check_latency = false;
      s.validate = false;
      s.store.kind = o.store == "file"     ? session::StoreKind::file
                     : o.store == "memory" ? session::StoreKind::memory
                                           : session::StoreKind::null;
      s.store.path = o.store_dir.empty() ? "." : o.store_dir;
      registry.add(s, app);
    }
  } catch (const std::exception& e) {
    error = std::string("session set-up: ") + e.what();
    return 1;
  }
  link::AcceptorLimits limits;
  limits.max_connections = static_cast<std::size_t>(sessions) + 4;
  link::AcceptorFactory factory(registry, limits);
  auto eng = engine::Engine::start(c, factory, error);
  if (!eng) return 1;
  if (!write_ready_file(o.ready_file, eng->port())) {
    error = "cannot write the ready file " + o.ready_file;
    eng->stop();
    return 1;
  }
  while (!stop.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  eng->stop();
  const engine::EngineStats st = eng->stats();
  const std::vector<engine::ThreadInfo> threads = eng->threads();
  const std::size_t first = threads.size() - st.per_thread_load.size();  // pool: the front door comes first
  for (std::size_t i = 0; i < st.per_thread_load.size(); ++i) {
    const engine::AgentLoad& l = st.per_thread_load[i];
    // Orders are counted for the whole server: exact for single and mono, one thread.
    print_server_load(threads[first + i].name.c_str(), l.cycles, l.idle_cycles, static_cast<double>(l.busy_ns) * 1e-9,
                      static_cast<double>(l.total_ns) * 1e-9, st.per_thread_load.size() == 1 ? app.orders() : 0);
  }
  return 0;
}

}  // namespace kite::bench
