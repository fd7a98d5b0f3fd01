// The tls transport end to end on loopback: Kite's initiator and acceptor
// (every model) exchange records over TLS; wrong host names, untrusted
// certificates and missing client certificates are refused with one clear
// line; a plaintext client and a stalled handshake harm no TLS session.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "kite/engine/engine.hpp"
#include "kite/transport/tls.hpp"
#include "support/engine_testing.hpp"
#include "support/tls_testing.hpp"

namespace kite::engine::test {
namespace {

using transport::ClientCert;
using transport::Kind;

class Lines final : public transport::EventLog {
 public:
  void event(const char* line) noexcept override {
    std::lock_guard<std::mutex> g(mu_);
    lines_.emplace_back(line);
  }
  bool contains(const std::string& needle) {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& l : lines_) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  std::size_t count(const std::string& needle) {
    std::lock_guard<std::mutex> g(mu_);
    std::size_t n = 0;
    for (const auto& l : lines_) n += l.find(needle) != std::string::npos;
    return n;
  }
  std::string all() {
    std::lock_guard<std::mutex> g(mu_);
    std::string s;
    for (const auto& l : lines_) s += l + "\n";
    return s;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs = new kite::test::TestCertificates(); }
  static void TearDownTestSuite() {
    delete certs;
    certs = nullptr;
  }
  void SetUp() override {
    if (!transport::tls_compiled_in()) GTEST_SKIP() << "built without the tls transport";
    if (!certs->ok()) GTEST_SKIP() << certs->why();
    ecfg.transport = Kind::tls;
    ecfg.model = Model::mono;
    ecfg.workers = 2;
    ecfg.idle = {IdleKind::block, 0, 1000};
    ecfg.log = false;
    ecfg.tls.certificate = certs->server_cert();
    ecfg.tls.private_key = certs->server_key();
    ecfg.events = &server_lines;
    icfg.transport = Kind::tls;
    icfg.idle = {IdleKind::block, 0, 1000};
    icfg.host = "127.0.0.1";
    icfg.tls.ca_file = certs->ca();
    icfg.tls.server_name = "localhost";
    icfg.events = &client_lines;
  }

  std::unique_ptr<Engine> start_engine(ProtocolFactory& f) {
    std::string error;
    auto e = Engine::start(ecfg, f, error);
    EXPECT_TRUE(e) << error;
    if (e) icfg.port = e->port();
    return e;
  }

  static kite::test::TestCertificates* certs;
  EngineConfig ecfg;
  InitiatorConfig icfg;
  Lines server_lines, client_lines;
};
kite::test::TestCertificates* TlsTest::certs = nullptr;

class TlsModelTest : public TlsTest, public ::testing::WithParamInterface<Model> {};

TEST_P(TlsModelTest, initiatorAndAcceptorExchangeRecordsOverTls) {
  ecfg.model = GetParam();
  ecfg.max_connections = 8;
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  // Three sessions on two threads: one thread drives two (epoll), the other
  // one (read directly). Records of 200 bytes, as an order.
  constexpr int kSessions = 3, kCount = 300;
  PingerFactory pingers(kCount, 200);
  icfg.sessions = kSessions;
  icfg.threads = 2;
  std::string error;
  auto init = Initiator::start(icfg, pingers, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(30000)) << server_lines.all() << client_lines.all();
  init->stop();
  ASSERT_EQ(pingers.all.size(), static_cast<std::size_t>(kSessions));
  for (const auto& p : pingers.all) {
    EXPECT_EQ(p->answered, kCount);
    EXPECT_EQ(p->wrong, 0);
    EXPECT_EQ(p->reason, "done");
  }
  ASSERT_TRUE(eventually([&] { return echo.released_count() == kSessions; }));
  EXPECT_EQ(echo.reason_count("peer closed"), kSessions);
  EXPECT_EQ(server_lines.all(), "");
  EXPECT_EQ(client_lines.all(), "");
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(Models, TlsModelTest, ::testing::Values(Model::single, Model::mono, Model::pool, Model::shard),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Streams `total` numbered 1000-byte records as fast as the send buffer
// takes them and checks every echo comes back in order.
class Burst final : public Protocol, public ProtocolFactory {
 public:
  explicit Burst(int total) : total_(total) {}
  void on_connected(Outbound& out, std::int64_t) noexcept override {
    out_ = &out;
    fill();
  }
  std::size_t on_data(const char* d, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (n - used >= kSize) {
      char want[16];
      std::snprintf(want, sizeof want, "r%08d", received.load());
      if (std::memcmp(d + used, want, 9) != 0 || d[used + kSize - 1] != '\n') ++wrong;
      ++received;
      used += kSize;
    }
    if (received == total_) out_->close("done", true);
    return used;
  }
  int on_timer(std::int64_t) noexcept override { return fill(); }
  void on_disconnected(const char* why, std::int64_t) noexcept override { reason = why; }
  Protocol* open(int) noexcept override { return this; }
  void release(Protocol*) noexcept override {}

  std::atomic<int> received{0};
  int sent = 0, wrong = 0;
  std::string reason;

 private:
  static constexpr std::size_t kSize = 1000;
  int fill() noexcept {
    int n = 0;
    while (sent < total_) {
      char* p = out_->claim(kSize);
      if (p == nullptr) break;
      std::memset(p, '.', kSize);
      std::snprintf(p, 16, "r%08d", sent);
      p[9] = ' ';
      p[kSize - 1] = '\n';
      out_->commit(kSize);
      ++sent;
      ++n;
    }
    return n;
  }
  int total_;
  Outbound* out_ = nullptr;
};

// Small socket and send buffers on both sides: SSL_write finds the socket full
// (partial writes, EPOLLOUT), and the echo's receive side fills and pauses.
TEST_P(TlsModelTest, streamsThroughFullSocketsWithoutLosingOrReordering) {
  ecfg.model = GetParam();
  ecfg.socket_sndbuf = ecfg.socket_rcvbuf = 65536;
  ecfg.send_full = SendFullPolicy::wait;
  ecfg.recv_buffer = 16 * 1024;
  ecfg.send_buffer = 32 * 1024;
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  constexpr int kTotal = 3000;  // 3 MB each way
  Burst burst(kTotal);
  icfg.sessions = 1;
  icfg.socket_sndbuf = icfg.socket_rcvbuf = 65536;
  std::string error;
  auto init = Initiator::start(icfg, burst, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(30000)) << burst.received.load() << " of " << kTotal;
  init->stop();
  EXPECT_EQ(burst.received.load(), kTotal);
  EXPECT_EQ(burst.wrong, 0);
  EXPECT_EQ(burst.reason, "done");
  EXPECT_EQ(server_lines.all(), "");
  engine->stop();
}

// Runs one initiator session that must not get through; returns its pinger.
std::unique_ptr<Pinger> refused_session(const InitiatorConfig& icfg) {
  PingerFactory pingers(10);
  InitiatorConfig c = icfg;
  c.sessions = 1;
  c.threads = 1;
  std::string error;
  auto init = Initiator::start(c, pingers, error);
  EXPECT_TRUE(init) << error;
  if (!init) return nullptr;
  EXPECT_TRUE(init->wait_closed(10000));
  init->stop();
  if (pingers.all.empty()) return nullptr;
  return std::move(pingers.all.front());
}

TEST_F(TlsTest, refusesAServerWhoseCertificateDoesNotNameTheHost) {
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  icfg.tls.server_name = "wrong.example";
  auto p = refused_session(icfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->answered, 0);
  EXPECT_EQ(client_lines.count("does not name 'wrong.example'"), 1u) << client_lines.all();
  EXPECT_TRUE(client_lines.contains("server 127.0.0.1:")) << client_lines.all();
  // The acceptor saw the client give up (an alert), and said so once.
  ASSERT_TRUE(eventually([&] { return server_lines.count("TLS handshake failed") == 1; })) << server_lines.all();
  engine->stop();
}

TEST_F(TlsTest, checksTheConnectHostWhenNoServerNameIsGiven) {
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  icfg.tls.server_name.clear();  // 127.0.0.1: the certificate's IP SAN
  PingerFactory pingers(20);
  icfg.sessions = 1;
  std::string error;
  auto init = Initiator::start(icfg, pingers, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(10000));
  EXPECT_EQ(pingers.all.front()->answered, 20) << client_lines.all();
  engine->stop();
}

TEST_F(TlsTest, refusesAnUntrustedServerCertificate) {
  ecfg.tls.certificate = certs->rogue_cert();
  ecfg.tls.private_key = certs->rogue_key();
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  auto p = refused_session(icfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->answered, 0);
  EXPECT_EQ(client_lines.count("the peer's certificate was refused: self-signed certificate"), 1u)
      << client_lines.all();
  engine->stop();
}

TEST_F(TlsTest, acceptorRequiringAClientCertificateRefusesAClientWithoutOne) {
  ecfg.tls.client_cert = ClientCert::require;
  ecfg.tls.ca_file = certs->ca();
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  auto p = refused_session(icfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->answered, 0);
  ASSERT_TRUE(eventually([&] { return server_lines.count("peer did not return a certificate") == 1; }))
      << server_lines.all();
  EXPECT_TRUE(server_lines.contains("client 127.0.0.1:")) << server_lines.all();
  EXPECT_TRUE(server_lines.contains("client_certificate = \"require\"")) << server_lines.all();

  // The same acceptor takes a client that shows a certificate from its CA.
  icfg.tls.certificate = certs->client_cert();
  icfg.tls.private_key = certs->client_key();
  PingerFactory pingers(20);
  icfg.sessions = 1;
  std::string error;
  auto init = Initiator::start(icfg, pingers, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(10000));
  EXPECT_EQ(pingers.all.front()->answered, 20) << server_lines.all() << client_lines.all();
  engine->stop();
}

TEST_F(TlsTest, acceptorRefusesAClientCertificateFromAnotherCa) {
  ecfg.tls.client_cert = ClientCert::optional;
  ecfg.tls.ca_file = certs->ca();
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  icfg.tls.certificate = certs->rogue_cert();
  icfg.tls.private_key = certs->rogue_key();
  auto p = refused_session(icfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->answered, 0);
  ASSERT_TRUE(eventually([&] { return server_lines.count("the peer's certificate was refused") == 1; }))
      << server_lines.all();
  engine->stop();
}

// A TLS session keeps going while a second connection misbehaves beside it
// on the same thread (mono) or the same worker (pool, one worker).
class TlsNeighbourTest : public TlsTest, public ::testing::WithParamInterface<Model> {
 protected:
  void SetUp() override {
    TlsTest::SetUp();
    ecfg.model = GetParam();
    ecfg.workers = 1;
    ecfg.max_connections = 4;
    ecfg.tls.handshake_timeout_ms = 600;
  }
  // Starts one TLS session that pings `count` times; returns once it has
  // answered at least one record (its handshake is through).
  std::unique_ptr<Initiator> start_session(PingerFactory& pingers) {
    icfg.sessions = 1;
    std::string error;
    auto init = Initiator::start(icfg, pingers, error);
    EXPECT_TRUE(init) << error;
    EXPECT_TRUE(eventually([&] { return !pingers.all.empty(); }));
    return init;
  }
};

TEST_P(TlsNeighbourTest, plaintextClientIsRefusedWithoutHarmingATlsSession) {
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  PingerFactory pingers(3000, 200);
  auto init = start_session(pingers);
  ASSERT_TRUE(init);
  Client plain;
  ASSERT_TRUE(plain.connect(icfg.port));
  ASSERT_TRUE(
      plain.send_all("8=FIX.4.4\x01"
                     "9=5\x01"
                     "35=A\x01"
                     "10=000\x01"));
  EXPECT_TRUE(plain.wait_eof(5000));
  ASSERT_TRUE(init->wait_closed(30000));
  EXPECT_EQ(pingers.all.front()->answered, 3000);
  EXPECT_EQ(pingers.all.front()->reason, "done");
  EXPECT_EQ(server_lines.count("TLS handshake failed"), 1u) << server_lines.all();
  EXPECT_TRUE(server_lines.contains("a plaintext client on a TLS port?")) << server_lines.all();
  engine->stop();
}

TEST_P(TlsNeighbourTest, stalledHandshakeDoesNotStallAnotherSession) {
  EchoFactory echo;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  // Connected first, says nothing (a TLS client that stalls before its
  // ClientHello); a second sends half a ClientHello record header and stops.
  Client silent, half;
  ASSERT_TRUE(silent.connect(icfg.port));
  ASSERT_TRUE(half.connect(icfg.port));
  ASSERT_TRUE(half.send_all(std::string("\x16\x03\x01\x02", 4)));
  PingerFactory pingers(500, 200);
  const auto t0 = std::chrono::steady_clock::now();
  auto init = start_session(pingers);
  ASSERT_TRUE(init);
  ASSERT_TRUE(init->wait_closed(30000));
  EXPECT_EQ(pingers.all.front()->answered, 500);
  // Both stalled connections are closed at the handshake timeout, each logged once.
  EXPECT_TRUE(silent.wait_eof(5000));
  EXPECT_TRUE(half.wait_eof(5000));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(400));
  EXPECT_EQ(server_lines.count("TLS handshake not completed within 600 ms"), 2u) << server_lines.all();
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(Models, TlsNeighbourTest, ::testing::Values(Model::mono, Model::pool, Model::shard),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// A blocking OpenSSL client limited to TLS 1.2: its handshake result.
bool handshake_with_tls12_only(std::uint16_t port, const std::string& ca) {
  Client tcp;
  if (!tcp.connect(port)) return false;
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, tcp.fd());
  SSL_set_tlsext_host_name(ssl, "localhost");
  const bool ok = SSL_connect(ssl) == 1;
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return ok;
}

TEST_F(TlsTest, minimumVersionRefusesAnOlderClient) {
  EchoFactory echo;
  ecfg.tls.min_version = transport::TlsVersion::tls1_3;
  auto engine = start_engine(echo);
  ASSERT_TRUE(engine);
  EXPECT_FALSE(handshake_with_tls12_only(icfg.port, certs->ca()));
  ASSERT_TRUE(eventually([&] { return server_lines.count("unsupported protocol") == 1; })) << server_lines.all();
  engine->stop();

  ecfg.tls.min_version = transport::TlsVersion::tls1_2;
  auto older = start_engine(echo);
  ASSERT_TRUE(older);
  EXPECT_TRUE(handshake_with_tls12_only(icfg.port, certs->ca())) << server_lines.all();
  older->stop();
}

TEST_F(TlsTest, badConfigurationIsReportedNamingTheFile) {
  EchoFactory echo;
  std::string error;
  ecfg.tls.certificate = certs->path("missing.pem");
  EXPECT_FALSE(Engine::start(ecfg, echo, error));
  EXPECT_NE(error.find("certificate '" + certs->path("missing.pem") + "': No such file or directory"),
            std::string::npos)
      << error;

  ecfg.tls.certificate = certs->server_cert();
  ecfg.tls.private_key = certs->client_key();
  EXPECT_FALSE(Engine::start(ecfg, echo, error));
  EXPECT_NE(
      error.find("private key '" + certs->client_key() + "' does not match certificate '" + certs->server_cert() + "'"),
      std::string::npos)
      << error;

  ecfg.tls.private_key = certs->ca();  // a certificate, not a key
  EXPECT_FALSE(Engine::start(ecfg, echo, error));
  EXPECT_NE(error.find("private key '" + certs->ca() + "': not a PEM private key"), std::string::npos) << error;

  ecfg.tls.private_key = certs->server_key();
  ecfg.tls.client_cert = ClientCert::require;
  EXPECT_FALSE(Engine::start(ecfg, echo, error));
  EXPECT_NE(error.find("needs ca_file or ca_dir"), std::string::npos) << error;

  ecfg.tls.certificate.clear();
  ecfg.tls.private_key.clear();
  EXPECT_FALSE(Engine::start(ecfg, echo, error));
  EXPECT_NE(error.find("certificate: missing"), std::string::npos) << error;
}

}  // namespace
}  // namespace kite::engine::test
