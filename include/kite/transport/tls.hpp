// TLS over kernel TCP: the `tls` transport (OpenSSL in user space, not the
// kernel's kTLS).
//
// A TlsContext is made once at set-up from a TlsConfig (certificate chain,
// key, trust anchors, peer checks); every mistake a user can make in it
// (missing file, unreadable key, key not matching the certificate, bad CA
// file) is reported as one line naming the file. The TLS driver then runs
// each connection's handshake inside the agent's duty cycle without ever
// blocking (a peer that handshakes slowly or stalls costs one non-blocking
// read per cycle, and is closed after handshake_timeout_ms), and moves bytes
// with non-blocking SSL_read / SSL_write between the socket and the
// connection's buffers. After the handshake no OpenSSL call allocates.
//
// The protocol above (engine::Protocol) sees the connection as soon as the
// socket is adopted: what it writes before the handshake ends waits in the
// send buffer and goes out, encrypted, once it completes.
//
// Limits: no session resumption (every connection makes a full handshake),
// no renegotiation (refused), no kTLS, no vendor stacks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kite/transport/driver.hpp"

namespace kite::transport {

// The acceptor's demand for a client certificate.
enum class ClientCert : std::uint8_t {
  none,      // not asked for
  optional,  // asked for; checked against the CAs when one is sent
  require,   // asked for; a client without one is refused
};
const char* to_string(ClientCert c) noexcept;
bool parse_client_cert(std::string_view s, ClientCert& out) noexcept;  // "none", "optional", "require"

enum class TlsVersion : std::uint8_t { tls1_2, tls1_3 };
const char* to_string(TlsVersion v) noexcept;
bool parse_tls_version(std::string_view s, TlsVersion& out) noexcept;  // "1.2", "1.3"

enum class TlsRole : std::uint8_t { server, client };

struct TlsConfig {
  std::string certificate;  // PEM certificate chain (leaf first); required for a server
  std::string private_key;  // PEM private key matching it; empty: read from `certificate`
  std::string ca_file;      // PEM trust anchors for the peer's certificate
  std::string ca_dir;       // a c_rehash'ed folder of trust anchors
  // Client: check the server's certificate chain (off only for tests).
  bool verify_peer = true;
  // Client: check that the server's certificate names `server_name` (or the
  // connect host when empty); an IP address is matched against IP SANs.
  bool verify_host = true;
  std::string server_name;                    // client: the name checked and sent as SNI; empty: the connect host
  ClientCert client_cert = ClientCert::none;  // server
  TlsVersion min_version = TlsVersion::tls1_2;
  int handshake_timeout_ms = 10000;  // a connection not through its handshake by then is closed
};

// Whether this build has the tls transport (KITE_WITH_TLS).
bool tls_compiled_in() noexcept;

// OpenSSL 3.0's record writer allocates and frees two to four small blocks
// for every record it writes. This gives OpenSSL an allocator of per-thread
// free lists (blocks up to 512 bytes; larger ones go to malloc), so that
// after a connection's first records no message reaches malloc. It is
// process-wide and must come before anything starts OpenSSL (first thing in
// main): false when it is too late, or in a build without TLS. Kite's
// programs call it; libkite does not (its host owns OpenSSL's allocator).
bool use_recycling_tls_allocator() noexcept;

struct TlsAllocations {
  std::uint64_t calls = 0;        // allocations OpenSSL asked for
  std::uint64_t from_system = 0;  // those that reached malloc (new slabs, large blocks)
  bool installed = false;
};
// Counts since use_recycling_tls_allocator() (zeros when it is not in use).
TlsAllocations tls_allocations() noexcept;

// An OpenSSL SSL_CTX and the checks it applies. Immutable once made; shared
// by every thread's driver.
class TlsContext {
 public:
  // nullptr with `error` one line naming the file or setting at fault, e.g.
  // "private key 'key.pem' does not match certificate 'cert.pem'".
  // `host` (client) is the connect host, used when server_name is empty.
  static std::shared_ptr<TlsContext> make(const TlsConfig& config, TlsRole role, const std::string& host,
                                          std::string& error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  TlsRole role() const noexcept { return role_; }
  const TlsConfig& config() const noexcept { return config_; }
  const std::string& check_name() const noexcept { return check_name_; }  // client: the name verified
  void* native() const noexcept { return ctx_; }                          // SSL_CTX*

 private:
  TlsContext() = default;
  void* ctx_ = nullptr;
  TlsRole role_ = TlsRole::server;
  TlsConfig config_;
  std::string check_name_;
};

// The tls transport's driver: kernel sockets read directly (`direct`, the
// single model and one-session initiator threads) or behind one epoll set.
// Handshake failures are reported to config.events naming the peer.
std::unique_ptr<Driver> make_tls_driver(const DriverConfig& config, std::shared_ptr<TlsContext> context, bool direct,
                                        std::string& error);

}  // namespace kite::transport
