// counters_bench: what the operators' view costs per order on the acceptor's
// path (frame, index, session, ack ExecutionReport, commit), in one run:
//   orders/off       no counters (kite-acceptor without [admin] / [message_log])
//   orders/counters  the link's counters, published state and reply-time histogram
//   orders/log       the counters and the FIX message log of the session
// The send side is a sink that takes every byte at once; the message log
// writes to the system temp folder. Report the ratios to orders/off.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kite/app/order_app.hpp"
#include "kite/codec/codec.hpp"
#include "kite/link/connection.hpp"
#include "kite/link/message_log.hpp"
#include "kite/link/metrics.hpp"
#include "kite/session/registry.hpp"

namespace kite::app::bench {
namespace {

namespace tag = codec::tag;

// Takes every committed byte at once.
class Sink final : public engine::Outbound {
 public:
  char* claim(std::size_t min) noexcept override { return min <= sizeof buf_ ? buf_ : nullptr; }
  void commit(std::size_t n) noexcept override { bytes_ += n; }
  std::size_t pending() const noexcept override { return 0; }
  void close(const char*, bool) noexcept override {}
  std::uint64_t bytes_ = 0;

 private:
  char buf_[1 << 16];
};

constexpr int kBatch = 100000;

// Renders a Logon (with ResetSeqNumFlag) and kBatch NewOrderSingles from PEER.
std::vector<std::string> render(const session::Clock& clock) {
  codec::HeaderTemplate h({"FIX.4.4", "PEER", "KITE", "", "", "", ""});
  codec::MessageWriter w(h);
  char buf[1024];
  std::vector<std::string> out;
  w.begin(buf, sizeof buf, "A", 1, clock.now_ns());
  w.add_uint(tag::EncryptMethod, 0);
  w.add_uint(tag::HeartBtInt, 30);
  w.add_bool(tag::ResetSeqNumFlag, true);
  out.emplace_back(buf, w.finish());
  for (int i = 0; i < kBatch; ++i) {
    w.begin(buf, sizeof buf, "D", static_cast<std::uint64_t>(i) + 2, clock.now_ns());
    char id[16];
    const int n = std::snprintf(id, sizeof id, "C%d", i);
    w.add_string(tag::ClOrdID, std::string_view(id, static_cast<std::size_t>(n)));
    w.add_string(tag::Symbol, "KITE");
    w.add_char(tag::Side, '1');
    w.add_timestamp(tag::TransactTime, clock.now_ns());
    w.add_uint(tag::OrderQty, 100);
    w.add_char(tag::OrdType, '2');
    w.add_decimal(tag::Price, {10125, -2});
    out.emplace_back(buf, w.finish());
  }
  return out;
}

enum Variant : int { kOff, kCounters, kLog };

void orders(benchmark::State& state) {
  const int variant = static_cast<int>(state.range(0));
  session::SystemClock clock;
  session::NullLogger log;
  session::SessionRegistry registry(clock, log);
  IdSource ids(1);
  OrderApplication app(Mode::ack, ids);
  session::SessionSettings s;
  s.role = session::Role::acceptor;
  s.sender_comp_id = "KITE";
  s.target_comp_id = "PEER";
  s.store.kind = session::StoreKind::null;
  registry.add(s, app);
  link::Metrics metrics(1);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("kite-counters-bench-" + std::to_string(::getpid()))).string();
  link::MessageLog mlog(path, 64u << 20, 0);
  link::MessageLog* logs[] = {&mlog};
  if (variant == kLog) {
    mlog.prepare();
    metrics.session(0).message_log.store(true);
  }
  link::SessionConnection conn(registry, {});
  if (variant != kOff) conn.observe(&metrics, logs);
  Sink sink;
  const std::vector<std::string> msgs = render(clock);
  conn.on_connected(sink, 0);
  std::size_t next = 0;
  std::int64_t now = 0;
  for (auto _ : state) {
    if (next == msgs.size()) {
      state.PauseTiming();
      conn.on_disconnected("batch done", 0);
      conn.on_connected(sink, 0);
      next = 0;
      state.ResumeTiming();
    }
    const std::string& m = msgs[next++];
    std::size_t used = conn.on_data(m.data(), m.size(), now);
    asm volatile("" : "+r"(used));
    if ((next & 63) == 0) conn.on_timer(now += 1'000'000);  // the engine's timer turns
  }
  conn.on_disconnected("done", 0);
  mlog.close();
  std::filesystem::remove(path);
  state.counters["orders"] = static_cast<double>(app.stats().orders);
}

BENCHMARK(orders)->Name("orders/off")->Arg(kOff)->MinTime(0.5);
BENCHMARK(orders)->Name("orders/counters")->Arg(kCounters)->MinTime(0.5);
BENCHMARK(orders)->Name("orders/log")->Arg(kLog)->MinTime(0.5);

}  // namespace
}  // namespace kite::app::bench

BENCHMARK_MAIN();
