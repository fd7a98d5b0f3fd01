// pg_store_bench: what the postgresql store's commit costs, under each
// commit policy and by group size, beside the memory-mapped journal.
//
// Each iteration stores a burst of B 200-byte messages as one inbound batch
// each (number + message), then:
//   pg/sync:B     waits until the burst's last change is committed (what a
//                 sync session waits before its answers go out);
//   pg/async:B    goes on at once; commits are observed as they land;
//   journal:B     a file store (FlushPolicy none) msynced once per burst
//                 (the journal's group commit: FlushPolicy every N = B).
// Reported: messages/s (items_per_second), commit latency p50/p99 in us
// (from a message's store() to the moment its commit is observed), and
// transactions per message for the postgresql store.
//
// Idle strategies (printed in the output's context): the store thread
// sleeps 100 us when its queue is empty (sleep polling); this benchmark's
// thread yields (std::this_thread::yield) while it waits for a commit, and
// checks for landed commits after every message under async (where it runs
// at most 1024 changes, two full groups, ahead of the database).
//
// The database: $KITE_PG_CONNINFO, else a private server started with
// tests/support/pg_server.sh (fsync on) and stopped at exit. The journal:
// $KITE_STORE_BENCH_DIR (default the temp folder).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kite/bench/histogram.hpp"
#include "kite/session/pg_store.hpp"
#include "kite/session/store.hpp"

namespace kite::session::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string g_conninfo;
std::string g_skip;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// A 200-byte message, the size of a small ExecutionReport.
const std::string kMessage = [] {
  std::string m =
      "8=FIX.4.4\x01"
      "9=178\x01"
      "35=8\x01"
      "49=KITE\x01"
      "56=PEER\x01"
      "34=1\x01"
      "52=20261130-04:00:00.000\x01"
      "37=O1\x01"
      "11=C1\x01"
      "17=E1\x01"
      "150=0\x01"
      "39=0\x01";
  m.resize(193, 'x');
  return m + "10=000\x01";
}();

void report(benchmark::State& state, const kite::bench::Histogram& h, std::uint64_t messages) {
  state.SetItemsProcessed(static_cast<std::int64_t>(messages));
  state.counters["p50_us"] = h.percentile(50) / 1000.0;
  state.counters["p99_us"] = h.percentile(99) / 1000.0;
}

// One run of pg/<policy>:B. Every change is one batch: number + message.
void pg_commit(benchmark::State& state, CommitPolicy policy) {
  if (!g_skip.empty()) {
    state.SkipWithError(g_skip.c_str());
    return;
  }
  const auto burst = static_cast<std::size_t>(state.range(0));
  StoreSettings s;
  s.kind = StoreKind::postgresql;
  s.pg_conninfo = g_conninfo;
  s.pg_commit = policy;
  s.pg_group_max = 512;
  s.capacity_bytes = 64u << 20;
  PgSessionKey key{"FIX.4.4", "BENCH", "PEER",
                   std::string(policy == CommitPolicy::sync ? "sync-" : "async-") + std::to_string(burst)};
  std::unique_ptr<PgStore> store;
  try {
    store = std::make_unique<PgStore>(s, key, now_ns());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  store->reset(now_ns());
  store->wait_committed(10000);
  kite::bench::Histogram h;
  // Pending commits: (ticket, store time); a ring sized for what can be in flight.
  struct Pending {
    std::uint64_t ticket;
    std::int64_t at;
  };
  std::vector<Pending> pending(1u << 20);
  std::size_t head = 0, tail = 0;
  const auto observe = [&] {
    while (tail != head && store->durable(pending[tail % pending.size()].ticket)) {
      h.record(now_ns() - pending[tail % pending.size()].at);
      ++tail;
    }
  };
  const std::uint64_t tx0 = store->transactions();
  std::uint64_t seq = store->next_sender_seq(), messages = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < burst; ++i) {
      // Async: bounded run-ahead (a full write queue would drop changes).
      while (store->appended() - store->committed() > 1024) {
        std::this_thread::yield();
        observe();
      }
      const std::int64_t t = now_ns();
      store->begin_inbound();
      store->set_next_target_seq(seq + 1);
      store->store(seq++, kMessage);
      store->end_inbound();
      if (head - tail == pending.size()) {
        while (!store->durable(pending[tail % pending.size()].ticket)) std::this_thread::yield();
        observe();
      }
      pending[head++ % pending.size()] = {store->ticket(), t};
      if (policy == CommitPolicy::async) observe();
    }
    messages += burst;
    if (policy == CommitPolicy::sync) {
      const std::uint64_t last = store->ticket();
      while (!store->durable(last)) std::this_thread::yield();
      observe();
    }
  }
  // Async: what is still in flight lands after the timed part; its latency counts.
  while (tail != head) {
    std::this_thread::yield();
    observe();
  }
  report(state, h, messages);
  state.counters["tx_per_msg"] =
      messages != 0 ? static_cast<double>(store->transactions() - tx0) / static_cast<double>(messages) : 0.0;
  if (store->lost_writes() != 0) state.SkipWithError("the write queue overflowed");
}

void pg_sync(benchmark::State& state) { pg_commit(state, CommitPolicy::sync); }
void pg_async(benchmark::State& state) { pg_commit(state, CommitPolicy::async); }

// The journal, msynced once per burst: its commit is the msync.
void journal(benchmark::State& state) {
  const auto burst = static_cast<std::size_t>(state.range(0));
  const char* d = std::getenv("KITE_STORE_BENCH_DIR");
  const fs::path dir =
      fs::path(d != nullptr ? d : fs::temp_directory_path().string()) / ("kite-pg-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  StoreSettings s;
  s.kind = StoreKind::file;
  s.capacity_bytes = 256u << 20;
  s.flush = FlushPolicy::none;
  auto store = std::make_unique<FileStore>(dir.string(), "BENCH", s, now_ns());
  kite::bench::Histogram h;
  std::vector<std::int64_t> at(burst);
  std::uint64_t seq = 1, messages = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < burst; ++i) {
      at[i] = now_ns();
      store->begin_inbound();
      store->set_next_target_seq(seq + 1);
      if (!store->store(seq++, kMessage)) {
        store->reset(now_ns());
        seq = 1;
      }
      store->end_inbound();
    }
    store->flush();
    const std::int64_t done = now_ns();
    for (std::size_t i = 0; i < burst; ++i) h.record(done - at[i]);
    messages += burst;
  }
  report(state, h, messages);
  store.reset();
  fs::remove_all(dir);
}

BENCHMARK(pg_sync)->Arg(1)->Arg(8)->Arg(64)->Arg(512)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(pg_async)->Arg(1)->Arg(8)->Arg(64)->Arg(512)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(journal)->Arg(1)->Arg(8)->Arg(64)->Arg(512)->UseRealTime()->Unit(benchmark::kMicrosecond);

// A private server unless $KITE_PG_CONNINFO names one: its state file, or "".
std::string start_server() {
  if (const char* c = std::getenv("KITE_PG_CONNINFO")) {
    g_conninfo = c;
    return {};
  }
  const std::string state = (fs::temp_directory_path() / ("kite-pg-bench-" + std::to_string(::getpid()) + ".env"));
  const std::string cmd = std::string("KITE_PG_FSYNC=on ") + KITE_PG_SERVER_SCRIPT + " start " + state + " >&2";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(state);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("conninfo=", 0) == 0) g_conninfo = line.substr(9);
    if (line.rfind("skip=", 0) == 0) g_skip = "no database: " + line.substr(5);
  }
  if (g_conninfo.empty() && g_skip.empty())
    g_skip = "no database: the server did not start (rc " + std::to_string(rc) + ")";
  return state;
}

}  // namespace
}  // namespace kite::session::bench

int main(int argc, char** argv) {
  using namespace kite::session::bench;
  const std::string state = start_server();
  benchmark::AddCustomContext("kite_pg_database", g_skip.empty() ? g_conninfo : g_skip);
  benchmark::AddCustomContext("kite_pg_fsync", std::getenv("KITE_PG_CONNINFO") ? "as the server is set" : "on");
  benchmark::AddCustomContext("kite_idle_strategy",
                              "store thread: sleep 100 us when its queue is empty; "
                              "benchmark thread: std::this_thread::yield while waiting for a commit");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!state.empty()) {
    const std::string cmd = std::string(KITE_PG_SERVER_SCRIPT) + " stop " + state;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "pg_store_bench: could not stop the server\n");
  }
  return 0;
}
