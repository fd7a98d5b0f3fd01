// kite-acceptor's code path and Kite's initiator, both through libkite's C API
// and configured by their TOML text's [tls] table, log on and exchange orders
// and ExecutionReports over TLS in every acceptor model. OpenSSL's
// allocations are counted (CRYPTO_set_mem_functions, set in main before
// OpenSSL starts): after the handshakes, thousands of orders cost none but
// the record writer's (OpenSSL 3.0's WPACKET, crypto/packet.c: at most two
// small blocks per record written, freed before SSL_write returns).
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "kite/kite.h"
#include "support/tls_testing.hpp"

namespace {

std::atomic<long> g_ssl_allocs{0};     // every other allocation
std::atomic<long> g_record_allocs{0};  // the record writer's packet.c

void count(const char* file) {
  const bool writer = file != nullptr && std::strstr(file, "crypto/packet.c") != nullptr;
  (writer ? g_record_allocs : g_ssl_allocs).fetch_add(1, std::memory_order_relaxed);
}
void* count_malloc(size_t n, const char* file, int) {
  count(file);
  return std::malloc(n);
}
void* count_realloc(void* p, size_t n, const char* file, int) {
  count(file);
  return std::realloc(p, n);
}
void count_free(void* p, const char*, int) { std::free(p); }

kite::test::TestCertificates* g_certs = nullptr;

struct Counts {
  std::atomic<int> logons{0}, reports{0}, bad{0};
};

bool is(kite_str s, const char* v) { return s.size == std::strlen(v) && std::memcmp(s.data, v, s.size) == 0; }

void on_logon(void* user, kite_session*) { static_cast<Counts*>(user)->logons.fetch_add(1); }
void on_report(void* user, kite_session*, const kite_message* m) {
  auto* c = static_cast<Counts*>(user);
  if (is(m->msg_type, "8"))
    c->reports.fetch_add(1);
  else
    c->bad.fetch_add(1);
}

template <class Pred>
bool wait_until(Pred p, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!p()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string acceptor_toml(const std::string& model, const std::string& tls) {
  return "[engine]\nmodel = \"" + model +
         "\"\nport = 0\nidle = \"block\"\nworkers = 2\ntransport = \"tls\"\n"
         "[app]\nmode = \"ack\"\n" +
         tls +
         "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\n"
         "StoreKind = \"memory\"\nUseDataDictionary = false\n[[session]]\nTargetCompID = \"BENCH0\"\n";
}

std::string initiator_toml(unsigned port, const std::string& tls) {
  return "[engine]\nidle = \"block\"\ntransport = \"tls\"\n" + tls +
         "[defaults]\nBeginString = \"FIX.4.4\"\nConnectionType = \"initiator\"\nSenderCompID = \"BENCH0\"\n"
         "TargetCompID = \"KITE\"\nResetOnLogon = true\nStoreKind = \"memory\"\nUseDataDictionary = false\n"
         "SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = " +
         std::to_string(port) + "\n[[session]]\n";
}

class TlsOrdersTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!g_certs->ok()) GTEST_SKIP() << g_certs->why();
    server_tls = "[tls]\ncertificate = \"" + g_certs->server_cert() + "\"\nprivate_key = \"" + g_certs->server_key() +
                 "\"\nclient_certificate = \"require\"\nca_file = \"" + g_certs->ca() + "\"\n";
    client_tls = "[tls]\nca_file = \"" + g_certs->ca() + "\"\nserver_name = \"localhost\"\ncertificate = \"" +
                 g_certs->client_cert() + "\"\nprivate_key = \"" + g_certs->client_key() + "\"\n";
  }
  std::string server_tls, client_tls;
};

TEST_P(TlsOrdersTest, logsOnAndExchangesOrdersWithoutOpenSslAllocations) {
  kite_acceptor* a = nullptr;
  ASSERT_EQ(kite_acceptor_start_string(acceptor_toml(GetParam(), server_tls).c_str(), "acceptor.toml", nullptr, &a),
            KITE_OK)
      << kite_last_error();
  Counts counts;
  kite_callbacks cb{};
  cb.size = sizeof cb;
  cb.user = &counts;
  cb.on_logon = on_logon;
  cb.on_message = on_report;
  kite_initiator* in = nullptr;
  ASSERT_EQ(kite_initiator_start_string(initiator_toml(kite_acceptor_port(a), client_tls).c_str(), "initiator.toml",
                                        &cb, &in),
            KITE_OK)
      << kite_last_error();
  kite_session* s = kite_initiator_session(in, 0);
  ASSERT_TRUE(wait_until([&] { return counts.logons.load() == 1; }, 10000));

  constexpr int kWarm = 500, kOrders = 4000;
  long allocs_before = 0, records_before = 0;
  for (int i = 0; i < kOrders; ++i) {
    if (i == kWarm) {
      ASSERT_TRUE(wait_until([&] { return counts.reports.load() == kWarm; }, 20000));
      allocs_before = g_ssl_allocs.load();
      records_before = g_record_allocs.load();
    }
    char body[256];
    const int n = std::snprintf(body, sizeof body,
                                "11=C%012d\00121=1\00155=KITE.XPAR\00154=1\00160=20261201-10:00:00.000\00138=100\001"
                                "40=2\00144=101.25\001",
                                i);
    kite_status st;
    while ((st = kite_session_send(s, "D", body, static_cast<size_t>(n))) == KITE_BACK_PRESSURED)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    ASSERT_EQ(st, KITE_OK) << kite_last_error();
  }
  ASSERT_TRUE(wait_until([&] { return counts.reports.load() == kOrders; }, 30000)) << counts.reports.load();
  const long allocs = g_ssl_allocs.load() - allocs_before;
  EXPECT_EQ(allocs, 0) << "OpenSSL allocations over " << (kOrders - kWarm) << " orders and their reports";
  // Each order and each report is in at most one record of its own.
  const long records = g_record_allocs.load() - records_before;
  EXPECT_LE(records, 2 * 2 * (kOrders - kWarm)) << "record writer allocations";
  std::printf("%s: %ld record-writer allocations over %d orders and reports\n", GetParam(), records,
              2 * (kOrders - kWarm));
  EXPECT_EQ(counts.bad.load(), 0);
  kite_initiator_shutdown(in, 5000);
  kite_acceptor_shutdown(a);
  kite_initiator_free(in);
  kite_acceptor_free(a);
}

INSTANTIATE_TEST_SUITE_P(Models, TlsOrdersTest, ::testing::Values("single", "mono", "pool", "shard"),
                         [](const auto& info) { return std::string(info.param); });

class TlsConfigTest : public TlsOrdersTest {};

TEST_F(TlsConfigTest, refusesMistakesNamingTheFileAndSetting) {
  kite_acceptor* a = nullptr;
  const std::string key = g_certs->client_key();
  const std::string mismatch =
      "[tls]\ncertificate = \"" + g_certs->server_cert() + "\"\nprivate_key = \"" + key + "\"\n";
  EXPECT_EQ(kite_acceptor_start_string(acceptor_toml("mono", mismatch).c_str(), "a.toml", nullptr, &a),
            KITE_ERROR_CONFIG);
  EXPECT_NE(std::string(kite_last_error()).find("a.toml: [tls]: private key '" + key + "' does not match certificate"),
            std::string::npos)
      << kite_last_error();

  const std::string missing = "[tls]\ncertificate = \"/nonexistent/cert.pem\"\n";
  EXPECT_EQ(kite_acceptor_start_string(acceptor_toml("mono", missing).c_str(), "a.toml", nullptr, &a),
            KITE_ERROR_CONFIG);
  EXPECT_NE(std::string(kite_last_error()).find("certificate '/nonexistent/cert.pem': No such file or directory"),
            std::string::npos)
      << kite_last_error();

  EXPECT_EQ(kite_acceptor_start_string(acceptor_toml("mono", "").c_str(), "a.toml", nullptr, &a), KITE_ERROR_CONFIG);
  EXPECT_NE(std::string(kite_last_error()).find("tls needs a [tls] table"), std::string::npos) << kite_last_error();

  const std::string bad_mode = server_tls + "min_version = \"1.1\"\n";
  EXPECT_EQ(kite_acceptor_start_string(acceptor_toml("mono", bad_mode).c_str(), "a.toml", nullptr, &a),
            KITE_ERROR_CONFIG);
  EXPECT_NE(std::string(kite_last_error()).find("[tls]: setting min_version: expected \"1.2\" or \"1.3\""),
            std::string::npos)
      << kite_last_error();

  kite_initiator* in = nullptr;
  const std::string wrong_side = client_tls + "client_certificate = \"require\"\n";
  EXPECT_EQ(kite_initiator_start_string(initiator_toml(9, wrong_side).c_str(), "i.toml", nullptr, &in),
            KITE_ERROR_CONFIG);
  EXPECT_NE(std::string(kite_last_error()).find("i.toml: [tls]: setting client_certificate: an acceptor's setting"),
            std::string::npos)
      << kite_last_error();
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything starts OpenSSL: it refuses new functions after its first allocation.
  if (CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) != 1) {
    std::fprintf(stderr, "CRYPTO_set_mem_functions refused: OpenSSL allocated before main\n");
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  kite::test::TestCertificates certs;
  g_certs = &certs;
  return RUN_ALL_TESTS();
}
