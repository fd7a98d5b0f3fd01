// bench_roundtrip's client over the lab's tls transport against the cpp
// flavour serving tls in-process: the handshake is done before the
// measurement, every order is answered, and the measurement allocates
// nothing (operator new on any thread, or OpenSSL reaching malloc).
#include <gtest/gtest.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "client.hpp"
#include "cpp_server.hpp"
#include "kite/transport/tls.hpp"
#include "support/alloc_counter.hpp"
#include "support/tls_testing.hpp"

namespace kite::bench {
namespace {

namespace fs = std::filesystem;

// Before anything starts OpenSSL, as bench_roundtrip's main() does.
const bool g_recycling = transport::use_recycling_tls_allocator();

// run_cpp_server with transport tls on a thread of its own, blocking idle.
class TlsCell {
 public:
  TlsCell(const test::TestCertificates& certs, const std::string& model, unsigned sessions) {
    std::signal(SIGPIPE, SIG_IGN);
    ready_ = fs::temp_directory_path() / ("kite-tls-cell-" + std::to_string(::getpid()));
    fs::remove(ready_);
    ServerOptions o;
    o.transport = "tls";
    o.model = model;
    o.sessions = sessions;
    o.spin = false;
    o.tls_cert = certs.server_cert();
    o.tls_key = certs.server_key();
    o.ready_file = ready_.string();
    server_ = std::thread([this, o] { rc_ = run_cpp_server(o, stop_, error_); });
    for (int i = 0; i < 500 && !fs::exists(ready_) && rc_ < 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fs::exists(ready_)) std::ifstream(ready_) >> port_;
    fs::remove(ready_);
  }
  ~TlsCell() { stop(); }
  int port() const { return port_; }
  int stop() {
    stop_ = true;
    if (server_.joinable()) server_.join();
    return rc_;
  }
  const std::string& error() const { return error_; }

 private:
  fs::path ready_;
  std::atomic<bool> stop_{false};
  std::string error_;
  std::atomic<int> rc_{-1};
  int port_ = 0;
  std::thread server_;
};

ClientOptions tls_options(const test::TestCertificates& certs, int port, unsigned sessions) {
  ClientOptions o;
  o.port = port;
  o.sessions = sessions;
  o.warmup_s = 0.05;
  o.duration_s = 0.1;
  o.runs = 2;
  o.spin = false;
  o.tls = true;
  o.tls_ca = certs.ca();
  return o;
}

void expect_measured_without_allocating(const ClientOptions& o) {
  const Clock clock;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  const std::uint64_t news = test::allocations();
  const transport::TlsAllocations tls0 = transport::tls_allocations();
  const bool ok = client.measure(error);
  const std::uint64_t news_in_measure = test::allocations() - news;
  const transport::TlsAllocations tls1 = transport::tls_allocations();
  ASSERT_TRUE(ok) << error;
  client.logout();
  EXPECT_EQ(news_in_measure, 0u) << "operator new during the measurement (client or server)";
  ASSERT_TRUE(tls1.installed);
  EXPECT_GT(tls1.calls, tls0.calls) << "OpenSSL asked for blocks: the records went through it";
  EXPECT_EQ(tls1.from_system, tls0.from_system) << "OpenSSL reached malloc during the measurement";
  for (std::size_t i = 1; i < client.phases().size(); ++i) {
    EXPECT_GT(client.phases()[i].service.count(), 0u);
    EXPECT_EQ(client.phases()[i].errors, 0u);
  }
}

TEST(ClientTls, closedLoopOverTlsAnswersEveryOrderWithoutAllocating) {
  if (!client_tls_compiled_in()) GTEST_SKIP() << "built without OpenSSL";
  const test::TestCertificates certs;
  if (!certs.ok()) GTEST_SKIP() << certs.why();
  ASSERT_TRUE(g_recycling);
  TlsCell cell(certs, "single", 1);
  ASSERT_GT(cell.port(), 0) << cell.error();
  expect_measured_without_allocating(tls_options(certs, cell.port(), 1));
  EXPECT_EQ(cell.stop(), 0) << cell.error();
}

TEST(ClientTls, openLoopOverTlsOnSeveralSessionsWithoutAllocating) {
  if (!client_tls_compiled_in()) GTEST_SKIP() << "built without OpenSSL";
  const test::TestCertificates certs;
  if (!certs.ok()) GTEST_SKIP() << certs.why();
  TlsCell cell(certs, "mono", 3);
  ASSERT_GT(cell.port(), 0) << cell.error();
  ClientOptions o = tls_options(certs, cell.port(), 3);
  o.open_loop = true;
  o.rate = 3000;
  expect_measured_without_allocating(o);
  EXPECT_EQ(cell.stop(), 0) << cell.error();
}

TEST(ClientTls, aServerCertificateNotSignedByTheCaIsRefusedWithAMessage) {
  if (!client_tls_compiled_in()) GTEST_SKIP() << "built without OpenSSL";
  const test::TestCertificates certs;
  if (!certs.ok()) GTEST_SKIP() << certs.why();
  TlsCell cell(certs, "single", 1);
  ASSERT_GT(cell.port(), 0) << cell.error();
  ClientOptions o = tls_options(certs, cell.port(), 1);
  o.tls_ca = certs.rogue_cert();  // trusts another CA
  const Clock clock;
  Client client(o, clock);
  std::string error;
  EXPECT_FALSE(client.connect(error));
  EXPECT_NE(error.find("the server's certificate was refused"), std::string::npos) << error;
}

TEST(ClientTls, aMissingCaFileIsNamed) {
  if (!client_tls_compiled_in()) GTEST_SKIP() << "built without OpenSSL";
  ClientOptions o;
  o.port = 1;
  o.tls = true;
  o.tls_ca = "/nonexistent/ca.pem";
  const Clock clock;
  Client client(o, clock);
  std::string error;
  EXPECT_FALSE(client.connect(error));
  EXPECT_NE(error.find("/nonexistent/ca.pem"), std::string::npos) << error;
}

TEST(ClientTls, theCppServerWithoutItsCertificateSaysWhatIsMissing) {
  ServerOptions o;
  o.transport = "tls";
  std::atomic<bool> stop{true};
  std::string error;
  EXPECT_EQ(run_cpp_server(o, stop, error), 1);
  EXPECT_NE(error.find("--tls-cert"), std::string::npos) << error;
}

}  // namespace
}  // namespace kite::bench
