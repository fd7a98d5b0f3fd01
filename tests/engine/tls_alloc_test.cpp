// After the handshake, the tls transport allocates nothing per message: an
// initiator sends 4,000 200-byte orders, one at a time, and the acceptor
// (every model) answers each with a 221-byte report, over TLS. Counted from
// the 500th answer on: operator new (kite_alloc_counter) and OpenSSL's own
// allocations that reach malloc (use_recycling_tls_allocator, installed in
// main before OpenSSL starts).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "kite/engine/engine.hpp"
#include "kite/transport/tls.hpp"
#include "support/alloc_counter.hpp"
#include "support/engine_testing.hpp"
#include "support/tls_testing.hpp"

namespace kite::engine::test {
namespace {

constexpr std::size_t kOrder = 200, kReport = 221;
constexpr int kWarm = 500, kTotal = 4000;

kite::test::TestCertificates* g_certs = nullptr;

// Answers every kOrder-byte order with a kReport-byte report.
class Reporter final : public Protocol {
 public:
  void on_connected(Outbound& out, std::int64_t) noexcept override { out_ = &out; }
  std::size_t on_data(const char*, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (n - used >= kOrder) {
      char* p = out_->claim(kReport);
      if (p == nullptr) break;
      std::memset(p, '8', kReport);
      out_->commit(kReport);
      used += kOrder;
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override { return 0; }
  void on_disconnected(const char*, std::int64_t) noexcept override {}

 private:
  Outbound* out_ = nullptr;
};

class ReporterFactory final : public ProtocolFactory {
 public:
  Protocol* open(int) noexcept override { return &r_; }
  void release(Protocol*) noexcept override {}

 private:
  Reporter r_;
};

// Sends an order, waits for its report, and so on; notes the counters at
// the kWarm-th report and at the last.
class Orders final : public Protocol, public ProtocolFactory {
 public:
  void on_connected(Outbound& out, std::int64_t) noexcept override {
    out_ = &out;
    send();
  }
  std::size_t on_data(const char*, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (n - used >= kReport) {
      used += kReport;
      const int got = ++reports;
      if (got == kWarm || got == kTotal) {
        const int i = got == kWarm ? 0 : 1;
        news[i] = kite::test::allocations();
        const transport::TlsAllocations a = transport::tls_allocations();
        ssl_calls[i] = a.calls;
        ssl_system[i] = a.from_system;
      }
      if (got == kTotal)
        out_->close("done", true);
      else
        send();
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override { return 0; }
  void on_disconnected(const char*, std::int64_t) noexcept override {}
  Protocol* open(int) noexcept override { return this; }
  void release(Protocol*) noexcept override {}

  std::atomic<int> reports{0};
  std::uint64_t news[2] = {}, ssl_calls[2] = {}, ssl_system[2] = {};

 private:
  void send() noexcept {
    char* p = out_->claim(kOrder);
    if (p == nullptr) return;
    std::memset(p, 'D', kOrder);
    out_->commit(kOrder);
  }
  Outbound* out_ = nullptr;
};

class TlsAllocTest : public ::testing::TestWithParam<Model> {};

TEST_P(TlsAllocTest, ordersAndReportsAllocateNothingAfterTheHandshake) {
  if (!transport::tls_compiled_in()) GTEST_SKIP() << "built without the tls transport";
  if (!g_certs->ok()) GTEST_SKIP() << g_certs->why();
  ASSERT_TRUE(transport::tls_allocations().installed);
  EngineConfig ecfg;
  ecfg.transport = transport::Kind::tls;
  ecfg.model = GetParam();
  ecfg.workers = 1;
  ecfg.max_connections = 2;
  ecfg.idle = {IdleKind::block, 0, 1000};
  ecfg.log = false;
  ecfg.tls.certificate = g_certs->server_cert();
  ecfg.tls.private_key = g_certs->server_key();
  ReporterFactory reporters;
  std::string error;
  auto engine = Engine::start(ecfg, reporters, error);
  ASSERT_TRUE(engine) << error;
  InitiatorConfig icfg;
  icfg.transport = transport::Kind::tls;
  icfg.port = engine->port();
  icfg.idle = {IdleKind::block, 0, 1000};
  icfg.tls.ca_file = g_certs->ca();
  icfg.tls.server_name = "localhost";
  Orders orders;
  auto init = Initiator::start(icfg, orders, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(30000)) << orders.reports.load();
  init->stop();
  engine->stop();
  ASSERT_EQ(orders.reports.load(), kTotal);
  EXPECT_EQ(orders.news[1] - orders.news[0], 0u) << "operator new calls over " << kTotal - kWarm << " orders";
  EXPECT_EQ(orders.ssl_system[1] - orders.ssl_system[0], 0u) << "OpenSSL allocations that reached malloc";
  std::printf("%s: OpenSSL asked for %llu allocations over %d orders and reports, all recycled\n",
              to_string(GetParam()), static_cast<unsigned long long>(orders.ssl_calls[1] - orders.ssl_calls[0]),
              2 * (kTotal - kWarm));
}

INSTANTIATE_TEST_SUITE_P(Models, TlsAllocTest, ::testing::Values(Model::single, Model::mono, Model::pool, Model::shard),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace kite::engine::test

int main(int argc, char** argv) {
  // Before anything starts OpenSSL (it refuses new functions after its first allocation).
  const bool recycling = kite::transport::use_recycling_tls_allocator();
  if (kite::transport::tls_compiled_in() && !recycling) {
    std::fprintf(stderr, "use_recycling_tls_allocator refused: OpenSSL allocated before main\n");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  kite::test::TestCertificates certs;
  kite::engine::test::g_certs = &certs;
  return RUN_ALL_TESTS();
}
