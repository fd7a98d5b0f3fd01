// tls_bench: what TLS costs per order on the engine's transport, in one run:
// a loopback TCP pair, both ends driven by the engine's drivers on this
// thread (the acceptor's as the single model reads it, the initiator's the
// same way), exchanging a 200-byte order and a 221-byte ExecutionReport.
//   roundtrip/plain    kernel TCP (the direct driver)
//   roundtrip/tls12    the tls transport, TLS 1.2 (ECDHE-ECDSA AES-GCM)
//   roundtrip/tls13    the tls transport, TLS 1.3 (AES-256-GCM)
// CPU time per iteration is both ends' cost of one order and its report:
// two sends and two receives, plus, with TLS, two encryptions and two
// decryptions. OpenSSL's allocator is Kite's recycling one (as in
// kite-acceptor): ssl_allocs is the allocations OpenSSL asked for per round
// trip, ssl_malloc those that reached malloc.
#include <benchmark/benchmark.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "kite/bench/certificates.hpp"
#include "kite/transport/driver.hpp"
#include "kite/transport/tcp.hpp"
#include "kite/transport/tls.hpp"

namespace {

using namespace kite::transport;

kite::bench::Certificates* g_certs = nullptr;

class Counter final : public Sink {
 public:
  void on_data(Conn& c, const char*, std::size_t n) noexcept override {
    got[c.slot] += n;
    c.rx.consume(c.rx.size());
  }
  void on_closed(Conn&, Io, int) noexcept override { closed = true; }
  void on_accepted(int) noexcept override {}
  std::size_t got[2] = {0, 0};
  bool closed = false;
};

enum class Mode { plain, tls12, tls13 };

void roundtrip(benchmark::State& state, Mode mode) {
  if (mode != Mode::plain && (!tls_compiled_in() || !g_certs->ok())) {
    state.SkipWithError("no tls transport or no openssl command");
    return;
  }
  const ListenResult l = listen_tcp("127.0.0.1", 0, false);
  ConnectResult cr = connect_tcp("127.0.0.1", l.port);
  int afd = -1;
  for (int i = 0; i < 1000 && afd < 0; ++i) {
    pollfd p{l.fd, POLLIN, 0};
    ::poll(&p, 1, 10);
    afd = accept_nonblocking(l.fd);
  }
  if (l.fd < 0 || cr.fd < 0 || afd < 0) {
    state.SkipWithError("loopback connection failed");
    return;
  }
  DriverConfig dc;
  std::unique_ptr<Driver> server, client;
  std::string error;
  if (mode == Mode::plain) {
    server = make_direct_driver(dc);
    client = make_direct_driver(dc);
  } else {
    TlsConfig sc, cc;
    sc.certificate = g_certs->server_cert();
    sc.private_key = g_certs->server_key();
    cc.ca_file = g_certs->ca();
    cc.server_name = "localhost";
    if (mode == Mode::tls13)
      sc.min_version = cc.min_version = TlsVersion::tls1_3;
    else {
      sc.min_version = TlsVersion::tls1_2;
      cc.min_version = TlsVersion::tls1_2;
    }
    auto sctx = TlsContext::make(sc, TlsRole::server, {}, error);
    auto cctx = TlsContext::make(cc, TlsRole::client, "127.0.0.1", error);
    if (sctx && mode == Mode::tls12)
      SSL_CTX_set_max_proto_version(static_cast<SSL_CTX*>(sctx->native()), TLS1_2_VERSION);
    if (!sctx || !cctx) {
      state.SkipWithError(error.c_str());
      return;
    }
    server = make_tls_driver(dc, sctx, true, error);
    client = make_tls_driver(dc, cctx, true, error);
  }
  Conn s, c;
  s.fd = afd;
  s.slot = 0;
  c.fd = cr.fd;
  c.slot = 1;
  for (Conn* x : {&s, &c}) {
    x->rx.reset_capacity(64 * 1024);
    x->tx.reset_capacity(256 * 1024);
  }
  if (!server->add(s, error) || !client->add(c, error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::string order(200, 'D'), report(221, '8');
  Counter sink;
  const auto one = [&] {
    std::memcpy(c.tx.claim(order.size()), order.data(), order.size());
    c.tx.commit(order.size());
    client->flush(c);
    while (sink.got[0] < order.size() && !sink.closed) {
      server->poll(sink, 0);
      if (!c.tx.empty()) client->flush(c);
      client->poll(sink, 0);  // the handshake, on the first round
    }
    sink.got[0] -= order.size();
    std::memcpy(s.tx.claim(report.size()), report.data(), report.size());
    s.tx.commit(report.size());
    server->flush(s);
    while (sink.got[1] < report.size() && !sink.closed) {
      client->poll(sink, 0);
      if (!s.tx.empty()) server->flush(s);
    }
    sink.got[1] -= report.size();
  };
  for (int i = 0; i < 100; ++i) one();  // handshake and warm-up
  const TlsAllocations a0 = tls_allocations();
  for (auto _ : state) one();
  if (sink.closed) state.SkipWithError("connection closed");
  const TlsAllocations a1 = tls_allocations();
  state.counters["ssl_allocs"] =
      benchmark::Counter(static_cast<double>(a1.calls - a0.calls), benchmark::Counter::kAvgIterations);
  state.counters["ssl_malloc"] =
      benchmark::Counter(static_cast<double>(a1.from_system - a0.from_system), benchmark::Counter::kAvgIterations);
  server->remove(s);
  client->remove(c);
  ::close(l.fd);
}

BENCHMARK_CAPTURE(roundtrip, plain, Mode::plain)->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(roundtrip, tls12, Mode::tls12)->Unit(benchmark::kNanosecond);
BENCHMARK_CAPTURE(roundtrip, tls13, Mode::tls13)->Unit(benchmark::kNanosecond);

}  // namespace

int main(int argc, char** argv) {
  use_recycling_tls_allocator();  // before anything starts OpenSSL
  kite::bench::Certificates certs;
  g_certs = &certs;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
