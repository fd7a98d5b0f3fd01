// engine_cost: the server's cost per order in the `mono` model, for
// callgrind. One process serves (run it under valgrind), another drives it
// (run it natively): 32 initiator sessions on one thread, closed loop. The
// fix server answers with the acceptor's OrderApplication in ack mode; the
// echo server and its pingers are kite/bench/echo.hpp's (the engine tests' too).
//
//   engine_cost serve  --protocol fix|echo --sessions 32 --port 0 --port-file F [--dictionary DIR]
//   engine_cost client --protocol fix|echo --sessions 32 --orders 200 --port P
//
// `serve` exits once every session has connected and gone, printing the
// orders it answered. Under callgrind with
//   --toggle-collect='kite::engine::detail::SessionAgent::do_work*'
//   --toggle-collect='kite::engine::detail::SessionAgent::block*'
// only the server thread's duty cycles are counted (the main thread only
// waits); Ir / orders is the instructions per order. See docs/engine.md.
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kite/app/order_app.hpp"
#include "kite/bench/echo.hpp"
#include "kite/codec/codec.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"
#include "kite/session/store.hpp"

namespace kite::engine::tools {
namespace {

namespace tag = codec::tag;

using bench::cat;

// The echo pingers' records: the size of a NewOrderSingle.
constexpr std::size_t kEchoRecordBytes = 150;

// --peer bench: the order of bench_roundtrip's client (same fields), so that
// bench_roundtrip's servers (cpp and quickfix flavours) can be driven with an
// exact number of orders.
bool g_bench_peer = false;

class OrderClient final : public session::Application {
 public:
  OrderClient(int id, int orders, std::atomic<int>& done) : id_(id), orders_(orders), done_(done) {}
  void on_logon(session::Session& s) noexcept override { send_next(s); }
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex&) noexcept override {
    if (h.msg_type != "8") return;
    if (++answered_ == orders_) {
      done_.fetch_add(1);
      s.logout("done");
    } else {
      send_next(s);
    }
  }

 private:
  void send_next(session::Session& s) {
    char id[32];
    const int n = std::snprintf(id, sizeof id, "C%d-%d", id_, answered_ + 1);
    s.send("D", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, std::string_view(id, static_cast<std::size_t>(n)));
      if (g_bench_peer) {
        w.add_char(tag::HandlInst, '1');
        w.add_string(tag::Account, "BENCH-ACCOUNT-001");
      }
      w.add_string(tag::Symbol, g_bench_peer ? "KITE.XPAR" : "KITE");
      w.add_char(tag::Side, '1');
      w.add_timestamp(tag::TransactTime, clock_.now_ns());
      w.add_uint(tag::OrderQty, 100);
      w.add_char(tag::OrdType, '2');
      w.add_decimal(tag::Price, codec::Decimal{10125, -2});
      if (g_bench_peer) w.add_char(tag::TimeInForce, '0');
    });
  }
  int id_, orders_, answered_ = 0;
  std::atomic<int>& done_;
  session::SystemClock clock_;
};

class FixClients final : public ProtocolFactory {
 public:
  FixClients(const session::Clock& clock, session::Logger& log, int sessions, int orders, std::atomic<int>& done) {
    for (int i = 0; i < sessions; ++i) {
      session::SessionSettings st;
      st.role = session::Role::initiator;
      st.sender_comp_id = cat(g_bench_peer ? "BENCH" : "CLI", i);
      st.target_comp_id = g_bench_peer ? "KITE" : "SRV";
      st.send_reset_seq_num_flag = g_bench_peer;
      apps_.push_back(std::make_unique<OrderClient>(i, orders, done));
      stores_.push_back(std::make_unique<session::MemoryStore>());
      sessions_.push_back(std::make_unique<session::Session>(st, *stores_.back(), *apps_.back(), clock, log));
      factories_.push_back(std::make_unique<link::InitiatorFactory>(*sessions_.back(), clock, log));
    }
  }
  Protocol* open(int id) noexcept override {
    if (next_ >= factories_.size()) return nullptr;
    auto* f = factories_[next_++].get();
    Protocol* p = f->open(id);
    owner_[p] = f;
    return p;
  }
  void release(Protocol* p) noexcept override { owner_[p]->release(p); }

 private:
  std::vector<std::unique_ptr<OrderClient>> apps_;
  std::vector<std::unique_ptr<session::MemoryStore>> stores_;
  std::vector<std::unique_ptr<session::Session>> sessions_;
  std::vector<std::unique_ptr<link::InitiatorFactory>> factories_;
  std::size_t next_ = 0;
  std::map<Protocol*, link::InitiatorFactory*> owner_;
};

struct Options {
  std::string protocol = "fix";
  std::string transport = "kernel";
  std::string idle = "block";
  int sessions = 32;
  int orders = 200;
  int port = 0;
  int core = -1;
  int timeout_s = 600;
  std::string port_file;
  std::string peer = "kite";
  std::string dictionary;  // serve: UseDataDictionary=Y with this DataDictionary (a folder or file)
};

int serve(const Options& o) {
  session::SystemClock clock;
  session::NullLogger log;
  session::SessionRegistry registry(clock, log);
  app::IdSource ids;
  std::vector<std::unique_ptr<app::OrderApplication>> apps;  // one per session
  for (int i = 0; i < o.sessions; ++i) {
    session::SessionSettings st;
    st.sender_comp_id = "SRV";
    st.target_comp_id = cat("CLI", i);
    if (!o.dictionary.empty()) {  // the reference row: every message validated (docs/engine.md)
      st.validate = true;
      st.data_dictionary = o.dictionary;
    }
    apps.push_back(std::make_unique<app::OrderApplication>(app::Mode::ack, ids));
    registry.add(st, *apps.back());
  }
  link::AcceptorLimits limits;
  limits.max_connections = static_cast<std::size_t>(o.sessions);
  link::AcceptorFactory fix_factory(registry, limits);
  bench::EchoFactory echo_factory;
  ProtocolFactory& factory = o.protocol == "fix" ? static_cast<ProtocolFactory&>(fix_factory) : echo_factory;

  EngineConfig cfg;
  cfg.model = Model::mono;
  if (!transport::parse_kind(o.transport, cfg.transport) || !parse_idle(o.idle, cfg.idle.kind)) {
    std::fprintf(stderr, "bad --transport or --idle\n");
    return 2;
  }
  cfg.port = static_cast<std::uint16_t>(o.port);
  cfg.max_connections = o.sessions;
  if (o.core >= 0) cfg.cores = {o.core};
  std::string error;
  auto engine = Engine::start(cfg, factory, error);
  if (!engine) {
    std::fprintf(stderr, "engine_cost: %s\n", error.c_str());
    return 1;
  }
  if (!o.port_file.empty()) {
    const std::string tmp = o.port_file + ".tmp";
    std::ofstream(tmp) << engine->port() << "\n";
    std::rename(tmp.c_str(), o.port_file.c_str());
  }
  std::printf("listening on %u\n", engine->port());
  std::fflush(stdout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    const EngineStats st = engine->stats();
    if (st.accepted >= static_cast<std::uint64_t>(o.sessions) && st.active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  engine->stop();
  const EngineStats st = engine->stats();
  std::uint64_t orders = echo_factory.records;
  if (o.protocol == "fix") {
    orders = 0;
    for (const auto& a : apps) orders += a->stats().orders;
  }
  std::printf("protocol=%s sessions=%llu orders=%llu\n", o.protocol.c_str(),
              static_cast<unsigned long long>(st.accepted), static_cast<unsigned long long>(orders));
  return st.accepted >= static_cast<std::uint64_t>(o.sessions) ? 0 : 1;
}

int client(const Options& o) {
  g_bench_peer = o.peer == "bench";
  session::SystemClock clock;
  session::NullLogger log;
  std::atomic<int> done{0};
  FixClients fix(clock, log, o.sessions, o.orders, done);
  bench::PingerFactory echo(o.orders, kEchoRecordBytes);
  InitiatorConfig cfg;
  cfg.port = static_cast<std::uint16_t>(o.port);
  cfg.sessions = o.sessions;
  cfg.threads = 1;
  cfg.idle = {IdleKind::block, 0, 1000};
  transport::parse_kind(o.transport, cfg.transport);
  if (o.core >= 0) cfg.cores = {o.core};
  std::string error;
  auto init = Initiator::start(cfg, o.protocol == "fix" ? static_cast<ProtocolFactory&>(fix) : echo, error);
  if (!init) {
    std::fprintf(stderr, "engine_cost client: %s\n", error.c_str());
    return 1;
  }
  const bool ok = init->wait_closed(o.timeout_s * 1000);
  init->stop();
  for (const auto& p : echo.all) done += p->answered == o.orders ? 1 : 0;
  std::printf("sessions done=%d of %d, orders each=%d\n", done.load(), o.sessions, o.orders);
  return ok && done.load() == o.sessions ? 0 : 1;
}

}  // namespace
}  // namespace kite::engine::tools

int main(int argc, char** argv) {
  using kite::engine::tools::Options;
  Options o;
  CLI::App app{"engine_cost: instructions per order of the mono server (run `serve` under callgrind)"};
  app.require_subcommand(1);
  for (auto* sub : {app.add_subcommand("serve", "run the measured mono server"),
                    app.add_subcommand("client", "drive it: N sessions on one thread, closed loop")}) {
    sub->add_option("--protocol", o.protocol, "fix (session layer) or echo (engine only)")
        ->check(CLI::IsMember({"fix", "echo"}));
    sub->add_option("--transport", o.transport, "kernel or uring");
    sub->add_option("--sessions", o.sessions, "sessions (default 32)");
    sub->add_option("--port", o.port, "port (serve: 0 = any)");
    sub->add_option("--core", o.core, "pin the engine/client thread");
    sub->add_option("--timeout", o.timeout_s, "give up after this many seconds");
  }
  auto* serve = app.get_subcommand("serve");
  serve->add_option("--port-file", o.port_file, "write the bound port here");
  serve->add_option("--dictionary", o.dictionary,
                    "fix: validate every message against this DataDictionary (folder or FIX44.xml)");
  serve->add_option("--idle", o.idle,
                    "busy-spin, spin-yield or block (default block: idle cycles not counted as work)");
  app.get_subcommand("client")->add_option("--orders", o.orders, "orders per session (default 200)");
  app.get_subcommand("client")
      ->add_option("--peer", o.peer, "kite: engine_cost serve; bench: bench_roundtrip server (BENCH<k> -> KITE)")
      ->check(CLI::IsMember({"kite", "bench"}));
  CLI11_PARSE(app, argc, argv);
  return serve->parsed() ? kite::engine::tools::serve(o) : kite::engine::tools::client(o);
}
