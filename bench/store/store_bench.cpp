// store_bench: what each message store and flush policy costs per stored
// message, alone (store/...) and on the whole send path of a logged-on
// session (send/...: encode, store, commit into a send buffer), and what a
// store that holds sends adds to each message when it lets it go at once
// (held/pass, postgresql "async" inside its window: a copy into HeldOutput,
// a seal, a release) beside the direct write (held/direct).
//
// The journal lives in $KITE_STORE_BENCH_DIR (default: the system temp
// folder); msync cost depends on that folder's device (tmpfs makes msync
// nearly free, a disk makes every_message pay a device write).
#include <benchmark/benchmark.h>

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/held_output.hpp"
#include "kite/session/session.hpp"
#include "kite/session/store.hpp"

namespace kite::session::bench {
namespace {

namespace fs = std::filesystem;

fs::path bench_dir() {
  const char* d = std::getenv("KITE_STORE_BENCH_DIR");
  return fs::path(d != nullptr ? d : fs::temp_directory_path().string()) /
         ("kite-store-bench-" + std::to_string(::getpid()));
}

enum Kind : int { kNull, kMemory, kFileNone, kFileMessage, kFileEvery100, kFileEvery10ms };

StoreSettings settings_for(int kind) {
  StoreSettings s;
  s.kind = kind == kNull ? StoreKind::null : kind == kMemory ? StoreKind::memory : StoreKind::file;
  s.path = bench_dir().string();
  s.capacity_bytes = 256u << 20;
  s.flush_every_n = 100;
  s.flush_every_ms = 10;
  switch (kind) {
    case kFileMessage: s.flush = FlushPolicy::every_message; break;
    case kFileEvery100: s.flush = FlushPolicy::every_n; break;
    case kFileEvery10ms: s.flush = FlushPolicy::every_ms; break;
    default: s.flush = FlushPolicy::none; break;
  }
  return s;
}

std::unique_ptr<MessageStore> make(int kind) {
  fs::remove_all(bench_dir());
  const StoreSettings s = settings_for(kind);
  if (kind == kMemory) return std::make_unique<MemoryStore>(64u << 20, 1u << 20);
  return make_store(s, "FIX.4.4:BENCH->PEER", SystemClock().now_ns());
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
      "39=0\x01"
      "55=KITE\x01"
      "54=1\x01"
      "38=100\x01"
      "44=101.25\x01"
      "151=100\x01"
      "14=0\x01"
      "6=0\x01";
  m.resize(193, 'x');
  m += "10=000\x01";
  return m;
}();

void store_message(benchmark::State& state) {
  auto store = make(static_cast<int>(state.range(0)));
  SystemClock clock;
  std::uint64_t seq = 1;
  for (auto _ : state) {
    if (!store->store(seq, kMessage)) {
      state.PauseTiming();
      store->reset(0);
      seq = 1;
      state.ResumeTiming();
      continue;
    }
    store->poll(clock.now_ns());
    ++seq;
    asm volatile("" : : "r"(seq) : "memory");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  store.reset();
  fs::remove_all(bench_dir());
}

// The engine's send buffer, reduced to a reusable block.
class SinkOutbound final : public engine::Outbound {
 public:
  char* claim(std::size_t min) noexcept override { return min <= sizeof buf_ ? buf_ : nullptr; }
  void commit(std::size_t n) noexcept override {
    bytes_ += n;
    asm volatile("" : : "r"(buf_) : "memory");
  }
  std::size_t pending() const noexcept override { return 0; }
  void close(const char*, bool) noexcept override {}

 private:
  char buf_[16384];
  std::size_t bytes_ = 0;
};

class NoApp final : public Application {
 public:
  void on_message(Session&, const codec::Header&, const codec::FieldIndex&) noexcept override {}
};

void send_message(benchmark::State& state) {
  SystemClock clock;
  NullLogger log;
  NoApp app;
  SessionSettings s;
  s.sender_comp_id = "KITE";
  s.target_comp_id = "PEER";
  s.store = settings_for(static_cast<int>(state.range(0)));
  s.check_latency = false;
  s.role = Role::initiator;
  auto store = make(static_cast<int>(state.range(0)));
  Session session(s, *store, app, clock, log);
  link::SessionConnection conn(session, clock, log);
  SinkOutbound out;
  // Log on through a hand-made acceptor answer.
  conn.on_connected(out, 0);
  codec::HeaderTemplate peer({"FIX.4.4", "PEER", "KITE", "", "", "", ""});
  codec::MessageWriter w(peer);
  char buf[512];
  w.begin(buf, sizeof buf, "A", 1, clock.now_ns());
  w.add_uint(codec::tag::EncryptMethod, 0);
  w.add_uint(codec::tag::HeartBtInt, 30);
  const std::size_t n = w.finish();
  conn.on_data(buf, n, 0);
  if (!session.logged_on()) {
    state.SkipWithError("logon failed");
    return;
  }
  std::uint64_t order = 0;
  for (auto _ : state) {
    ++order;
    const SendResult r = session.send("8", [&](codec::MessageWriter& m) {
      m.add_string(codec::tag::OrderID, "O1");
      m.add_uint(codec::tag::ClOrdID, order);
      m.add_string(codec::tag::ExecID, "E1");
      m.add_char(codec::tag::ExecType, '0');
      m.add_char(codec::tag::OrdStatus, '0');
      m.add_string(codec::tag::Symbol, "KITE");
      m.add_char(codec::tag::Side, '1');
      m.add_uint(codec::tag::OrderQty, 100);
      m.add_decimal(codec::tag::Price, {10125, -2});
      m.add_uint(codec::tag::LeavesQty, 100);
      m.add_uint(codec::tag::CumQty, 0);
      m.add_uint(codec::tag::AvgPx, 0);
    });
    if (r != SendResult::ok) {
      state.PauseTiming();
      session.reset_sequences();
      state.ResumeTiming();
    }
    session.store().poll(clock.now_ns());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  store.reset();
  fs::remove_all(bench_dir());
}

// A connection's send buffer, as the session sees it.
class SinkOutput final : public SessionOutput {
 public:
  char* claim(std::size_t min) noexcept override { return min <= sizeof buf_ ? buf_ : nullptr; }
  void commit(std::size_t n) noexcept override {
    bytes_ += n;
    asm volatile("" : : "r"(buf_) : "memory");
  }
  void disconnect(const char*) noexcept override {}

 private:
  char buf_[16384];
  std::size_t bytes_ = 0;
};

// A store that holds sends and lets every one go at once (async inside its window).
class PassingStore final : public MessageStore {
 public:
  std::uint64_t next_sender_seq() const noexcept override { return next_; }
  std::uint64_t next_target_seq() const noexcept override { return 1; }
  void set_next_sender_seq(std::uint64_t s) noexcept override { next_ = s; }
  void set_next_target_seq(std::uint64_t) noexcept override {}
  bool store(std::uint64_t seq, std::string_view) noexcept override {
    next_ = seq + 1;
    return true;
  }
  std::string_view get(std::uint64_t) const noexcept override { return {}; }
  void reset(std::int64_t) noexcept override { next_ = 1; }
  std::int64_t creation_time() const noexcept override { return 0; }
  bool holds_sends() const noexcept override { return true; }
  std::uint64_t send_mark() const noexcept override { return next_; }
  bool may_send(std::uint64_t mark) const noexcept override { return mark <= window_end_; }

 private:
  std::uint64_t next_ = 1;
  std::uint64_t window_end_ = ~std::uint64_t{0};
};

// One 200-byte message per iteration: written straight into the sink
// (range 0), or through HeldOutput, sealed and released (range 1).
void held_message(benchmark::State& state) {
  const bool held = state.range(0) != 0;
  PassingStore store;
  SinkOutput sink;
  HeldOutput buffer(store, 1u << 20, 4096);
  buffer.bind(&sink);
  SessionOutput& out = held ? static_cast<SessionOutput&>(buffer) : sink;
  char message[200];
  std::memset(message, 'x', sizeof message);
  std::uint64_t seq = 1;
  for (auto _ : state) {
    char* p = out.claim(sizeof message);
    std::memcpy(p, message, sizeof message);
    store.store(seq++, {p, sizeof message});
    out.commit(sizeof message);
    if (held) {
      buffer.seal();
      buffer.release();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void kinds(benchmark::internal::Benchmark* b) {
  b->ArgNames({"store"});
  for (int k = kNull; k <= kFileEvery10ms; ++k) b->Arg(k);
}

}  // namespace

// Names: store/<kind> where kind 0 null, 1 memory, 2 file+none, 3 file+every
// message, 4 file+every 100, 5 file+every 10 ms.
BENCHMARK(store_message)->Name("store")->Apply(kinds)->MinTime(0.2);
BENCHMARK(send_message)->Name("send")->Apply(kinds)->MinTime(0.2);
BENCHMARK(held_message)->Name("held/direct")->Arg(0)->MinTime(0.2);
BENCHMARK(held_message)->Name("held/pass")->Arg(1)->MinTime(0.2);

}  // namespace kite::session::bench

BENCHMARK_MAIN();
