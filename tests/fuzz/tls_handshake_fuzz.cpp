// Arbitrary bytes as a client's first flight to the acceptor side of the tls
// transport: the TLS driver (direct) adopts one end of a socket pair, the
// input is written into the other end in chunks, and the driver is polled
// after each, so its handshake step, its failure reporting and its reads run
// on hostile input as they would on a live port.
//
// Input: byte 0 holds the chunk size (x 16, +1 bytes), byte 1 bit 0 asks for
// a client certificate (require), bit 1 sets TLS 1.3 as the minimum; the
// rest is the client's stream. The server's certificate is made once, with
// the OpenSSL API, in a temporary folder.
//
// Invariants: no crash or sanitizer report; bytes handed to the sink fit the
// receive buffer; a connection is reported closed at most once; nothing is
// delivered before a handshake could have completed.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "kite/transport/driver.hpp"
#include "kite/transport/tls.hpp"

namespace {

using namespace kite::transport;

class Quiet final : public EventLog {
 public:
  void event(const char*) noexcept override { ++lines; }
  int lines = 0;
};

class Recorder final : public Sink {
 public:
  void on_data(Conn& c, const char* p, std::size_t n) noexcept override {
    if (p != nullptr || n > c.rx.capacity() || c.rx.size() > c.rx.capacity()) std::abort();
    c.rx.clear();
    bytes += n;
  }
  void on_closed(Conn&, Io, int) noexcept override {
    if (closed) std::abort();
    closed = true;
  }
  void on_accepted(int fd) noexcept override { ::close(fd); }
  bool closed = false;
  std::size_t bytes = 0;
};

// A self-signed P-256 certificate and its key, written as PEM files.
bool make_identity(const std::string& dir) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  if (key == nullptr || x == nullptr) return false;
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  if (X509_sign(x, key, EVP_sha256()) == 0) return false;
  FILE* f = std::fopen((dir + "/cert.pem").c_str(), "w");
  FILE* k = std::fopen((dir + "/key.pem").c_str(), "w");
  if (f == nullptr || k == nullptr) return false;
  PEM_write_X509(f, x);
  PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(key);
  return true;
}

struct Setup {
  Quiet events;
  std::shared_ptr<TlsContext> ctx[4];  // by (require client cert, TLS 1.3 minimum)
  Setup() {
    char tmpl[] = "/tmp/kite-tls-fuzz-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr || !make_identity(tmpl)) std::abort();
    const std::string dir = tmpl;
    for (int i = 0; i < 4; ++i) {
      TlsConfig c;
      c.certificate = dir + "/cert.pem";
      c.private_key = dir + "/key.pem";
      if (i & 1) {
        c.client_cert = ClientCert::require;
        c.ca_file = c.certificate;
      }
      if (i & 2) c.min_version = TlsVersion::tls1_3;
      std::string error;
      ctx[i] = TlsContext::make(c, TlsRole::server, {}, error);
      if (ctx[i] == nullptr) {
        std::fprintf(stderr, "tls_handshake_fuzz: %s\n", error.c_str());
        std::abort();
      }
    }
    std::remove((dir + "/cert.pem").c_str());
    std::remove((dir + "/key.pem").c_str());
    ::rmdir(tmpl);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Setup setup;
  if (size < 2) return 0;
  const std::size_t chunk = static_cast<std::size_t>(data[0]) * 16 + 1;
  const int variant = data[1] & 3;
  data += 2;
  size -= 2;

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  DriverConfig dc;
  dc.socket.nodelay = false;  // not TCP
  dc.events = &setup.events;
  std::string error;
  auto driver = make_tls_driver(dc, setup.ctx[variant], true, error);
  if (!driver) std::abort();
  Conn c;
  c.fd = sv[0];
  c.rx.reset_capacity(4096);
  c.tx.reset_capacity(4096);
  if (!driver->add(c, error)) std::abort();
  Recorder sink;
  std::size_t at = 0;
  while (!sink.closed && at < size) {
    const std::size_t n = std::min(chunk, size - at);
    const ssize_t put = ::send(sv[1], data + at, n, MSG_NOSIGNAL);
    if (put <= 0) break;
    at += static_cast<std::size_t>(put);
    driver->poll(sink, 0);
    // The server's answers (ServerHello, alerts) are read and dropped.
    char drain[16384];
    while (::recv(sv[1], drain, sizeof drain, MSG_DONTWAIT) > 0) {}
  }
  ::shutdown(sv[1], SHUT_WR);
  for (int i = 0; i < 4 && !sink.closed; ++i) driver->poll(sink, 0);
  driver->remove(c);
  ::close(sv[1]);
  return 0;
}
