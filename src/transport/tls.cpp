// The tls transport: TlsContext (an SSL_CTX made from a TlsConfig) and the
// TLS driver (kernel sockets, read directly or behind epoll, with OpenSSL's
// non-blocking SSL_do_handshake / SSL_read / SSL_write).
#include "kite/transport/tls.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

#ifdef KITE_HAVE_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#endif

#include "listeners.hpp"

namespace kite::transport {

const char* to_string(ClientCert c) noexcept {
  switch (c) {
    case ClientCert::none: return "none";
    case ClientCert::optional: return "optional";
    case ClientCert::require: return "require";
  }
  return "?";
}

bool parse_client_cert(std::string_view s, ClientCert& out) noexcept {
  for (ClientCert c : {ClientCert::none, ClientCert::optional, ClientCert::require}) {
    if (s == to_string(c)) {
      out = c;
      return true;
    }
  }
  return false;
}

const char* to_string(TlsVersion v) noexcept { return v == TlsVersion::tls1_3 ? "1.3" : "1.2"; }

bool parse_tls_version(std::string_view s, TlsVersion& out) noexcept {
  if (s == "1.2")
    out = TlsVersion::tls1_2;
  else if (s == "1.3")
    out = TlsVersion::tls1_3;
  else
    return false;
  return true;
}

#ifndef KITE_HAVE_TLS

bool tls_compiled_in() noexcept { return false; }
TlsContext::~TlsContext() = default;
std::shared_ptr<TlsContext> TlsContext::make(const TlsConfig&, TlsRole, const std::string&, std::string& error) {
  error = "tls transport not built (configure with -DKITE_WITH_TLS=ON and libssl-dev installed)";
  return nullptr;
}
std::unique_ptr<Driver> make_tls_driver(const DriverConfig&, std::shared_ptr<TlsContext>, bool, std::string& error) {
  error = "tls transport not built (KITE_WITH_TLS=OFF)";
  return nullptr;
}

#else

bool tls_compiled_in() noexcept { return true; }

namespace {

// The reasons in the thread's OpenSSL error queue, oldest first, as one
// line; the queue is left empty.
std::string ssl_errors() {
  std::string s;
  while (const unsigned long e = ERR_get_error()) {
    const char* r = ERR_reason_error_string(e);
    char buf[256];
    if (r == nullptr) {
      ERR_error_string_n(e, buf, sizeof buf);
      r = buf;
    }
    if (!s.empty()) s += "; ";
    s += r;
  }
  return s.empty() ? std::string("no OpenSSL reason given") : s;
}

bool check_readable(const std::string& path, const char* what, bool folder, std::string& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = std::string(what) + " '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    error = std::string(what) + " '" + path + "': not a " + (folder ? "folder" : "file");
    return false;
  }
  if (::access(path.c_str(), R_OK) != 0) {
    error = std::string(what) + " '" + path + "': not readable by this user";
    return false;
  }
  return true;
}

bool is_ip_address(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

TlsContext::~TlsContext() { SSL_CTX_free(static_cast<SSL_CTX*>(ctx_)); }

std::shared_ptr<TlsContext> TlsContext::make(const TlsConfig& c, TlsRole role, const std::string& host,
                                             std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(role == TlsRole::server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) {
    error = "cannot make a TLS context: " + ssl_errors();
    return nullptr;
  }
  std::shared_ptr<TlsContext> out(new TlsContext());
  out->ctx_ = ctx;
  out->role_ = role;
  out->config_ = c;
  SSL_CTX_set_min_proto_version(ctx, c.min_version == TlsVersion::tls1_3 ? TLS1_3_VERSION : TLS1_2_VERSION);
  // No renegotiation (a peer cannot make the loop re-handshake), a peer's
  // close without close_notify is an ordinary end of stream (FIX peers
  // often just close), no session resumption.
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (role == TlsRole::server) SSL_CTX_set_num_tickets(ctx, 0);
  // A partial write is progress (the send buffer keeps the rest), and the
  // send buffer may move its pending bytes between a retry and the next.
  // Buffers are kept for the connection's life: releasing them would
  // allocate again on the next message.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_clear_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  // One recv per burst of records rather than two per record (header, body).
  SSL_CTX_set_read_ahead(ctx, 1);

  if (role == TlsRole::server && c.certificate.empty()) {
    error = "certificate: missing (a TLS acceptor needs its certificate chain and private key)";
    return nullptr;
  }
  if (!c.certificate.empty()) {
    if (!check_readable(c.certificate, "certificate", false, error)) return nullptr;
    if (SSL_CTX_use_certificate_chain_file(ctx, c.certificate.c_str()) != 1) {
      error = "certificate '" + c.certificate + "': not a PEM certificate chain (" + ssl_errors() + ")";
      return nullptr;
    }
    const std::string& key = c.private_key.empty() ? c.certificate : c.private_key;
    if (!check_readable(key, "private key", false, error)) return nullptr;
    if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      const int reason = ERR_GET_REASON(ERR_peek_last_error());
      if (reason == X509_R_KEY_VALUES_MISMATCH || reason == X509_R_KEY_TYPE_MISMATCH) {
        ERR_clear_error();
        error = "private key '" + key + "' does not match certificate '" + c.certificate + "'";
      } else {
        error = "private key '" + key + "': not a PEM private key, or encrypted (" + ssl_errors() + ")";
      }
      return nullptr;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      ERR_clear_error();
      error = "private key '" + key + "' does not match certificate '" + c.certificate + "'";
      return nullptr;
    }
  } else if (!c.private_key.empty()) {
    error = "private_key '" + c.private_key + "' given without a certificate";
    return nullptr;
  }

  const bool trust = !c.ca_file.empty() || !c.ca_dir.empty();
  if (!c.ca_file.empty() && !check_readable(c.ca_file, "CA file", false, error)) return nullptr;
  if (!c.ca_dir.empty() && !check_readable(c.ca_dir, "CA folder", true, error)) return nullptr;
  if (trust) {
    if (SSL_CTX_load_verify_locations(ctx, c.ca_file.empty() ? nullptr : c.ca_file.c_str(),
                                      c.ca_dir.empty() ? nullptr : c.ca_dir.c_str()) != 1) {
      error = (c.ca_file.empty() ? "CA folder '" + c.ca_dir : "CA file '" + c.ca_file) +
              "': no PEM certificates read (" + ssl_errors() + ")";
      return nullptr;
    }
  }

  if (role == TlsRole::server) {
    if (c.client_cert != ClientCert::none && !trust) {
      error = std::string("client_certificate = \"") + to_string(c.client_cert) +
              "\" needs ca_file or ca_dir (the CAs that client certificates are checked against)";
      return nullptr;
    }
    int mode = SSL_VERIFY_NONE;
    if (c.client_cert == ClientCert::optional) mode = SSL_VERIFY_PEER;
    if (c.client_cert == ClientCert::require) mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, nullptr);
    static const unsigned char kContext[] = "kite";
    SSL_CTX_set_session_id_context(ctx, kContext, sizeof kContext - 1);
    if (!c.ca_file.empty()) {
      // Tells clients which CAs their certificate should come from.
      if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(c.ca_file.c_str()))
        SSL_CTX_set_client_CA_list(ctx, names);
      ERR_clear_error();
    }
  } else {
    if (c.verify_peer && !trust && SSL_CTX_set_default_verify_paths(ctx) != 1) {
      error = "no ca_file or ca_dir, and the system's trust store cannot be read (" + ssl_errors() + ")";
      return nullptr;
    }
    SSL_CTX_set_verify(ctx, c.verify_peer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
    out->check_name_ = c.server_name.empty() ? host : c.server_name;
  }
  return out;
}

namespace {

enum class Phase : std::uint8_t { handshake, open, failed };

// The driver's state for one connection, kept per slot and reused.
struct TlsConn {
  SSL* ssl = nullptr;
  Phase phase = Phase::failed;
  bool want_write = false;  // OpenSSL (a handshake step, or a read) waits for the socket to take bytes
  bool queued = false;      // epoll: listed in again_ (OpenSSL may hold decrypted bytes)
  std::int64_t deadline_ms = 0;
  char peer[64] = {};
};

std::int64_t coarse_ms() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

class TlsDriver final : public Driver {
 public:
  TlsDriver(const DriverConfig& c, std::shared_ptr<TlsContext> ctx, bool direct, int ep)
      : cfg_(c), ctx_(std::move(ctx)), direct_(direct), ep_(ep), events_(static_cast<std::size_t>(c.max_events)) {}
  ~TlsDriver() override {
    for (auto& t : state_) {
      if (t.ssl != nullptr) SSL_free(t.ssl);
    }
    if (ep_ >= 0) ::close(ep_);
  }
  const char* name() const noexcept override { return direct_ ? "tls-direct" : "tls-epoll"; }

  bool listen(int fd, std::string& error) override {
    if (direct_) {
      listeners_.push_back(fd);
      return true;
    }
    return epoll_add_listener(ep_, fd, error);
  }

  bool add(Conn& c, std::string& error) override {
    last_options_ = apply_options(c.fd, cfg_.socket);
    if (c.slot >= state_.size()) state_.resize(c.slot + 1);
    TlsConn& t = state_[c.slot];
    if (t.ssl != nullptr) SSL_free(t.ssl);
    ERR_clear_error();
    t.ssl = SSL_new(static_cast<SSL_CTX*>(ctx_->native()));
    if (t.ssl == nullptr || SSL_set_fd(t.ssl, c.fd) != 1) {
      error = "tls: cannot set up a connection: " + ssl_errors();
      return false;
    }
    describe_peer(c.fd, t.peer, sizeof t.peer);
    if (ctx_->role() == TlsRole::server) {
      SSL_set_accept_state(t.ssl);
    } else {
      SSL_set_connect_state(t.ssl);
      const std::string& name = ctx_->check_name();
      if (!name.empty()) {
        if (is_ip_address(name)) {
          if (ctx_->config().verify_host) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t.ssl), name.c_str());
        } else {
          SSL_set_tlsext_host_name(t.ssl, name.c_str());
          if (ctx_->config().verify_host) SSL_set1_host(t.ssl, name.c_str());
        }
      }
    }
    t.phase = Phase::handshake;
    t.want_write = false;
    t.queued = false;
    t.deadline_ms = coarse_ms() + ctx_->config().handshake_timeout_ms;
    ++handshaking_;
    c.watching = true;
    c.write_blocked = false;
    c.recv_paused = false;
    if (direct_) {
      conns_.push_back(&c);
    } else {
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.ptr = &c;
      if (::epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
        error = std::string("epoll_ctl(add): ") + std::strerror(errno);
        return false;
      }
      again_.reserve(state_.size());
      scratch_.reserve(state_.size());
      queue(c, t);  // a client speaks first: its ClientHello goes out on the next poll
    }
    return true;
  }

  Io flush(Conn& c) noexcept override {
    TlsConn& t = state_[c.slot];
    if (t.phase == Phase::failed) return Io::error;
    if (t.phase != Phase::open) return Io::retry;  // sent once the handshake is through
    const bool was = c.write_blocked;
    Io r = Io::ok;
    while (!c.tx.empty()) {
      ERR_clear_error();
      const int n = SSL_write(t.ssl, c.tx.data(), static_cast<int>(c.tx.size()));
      if (n > 0) {
        c.tx.consume(static_cast<std::size_t>(n));
        c.bytes_sent += static_cast<std::size_t>(n);
        continue;
      }
      const int e = SSL_get_error(t.ssl, n);
      if (e == SSL_ERROR_WANT_WRITE) {
        c.write_blocked = true;
        r = Io::retry;
      } else if (e == SSL_ERROR_WANT_READ) {
        r = Io::retry;
      } else {
        fail(t, "send failed", e);
        r = Io::error;
      }
      break;
    }
    if (r == Io::ok) c.write_blocked = false;
    if (!direct_ && was != c.write_blocked && c.fd >= 0) update(c, t);
    return r;
  }

  void remove(Conn& c) noexcept override {
    if (c.slot < state_.size()) {
      TlsConn& t = state_[c.slot];
      if (t.ssl != nullptr) {
        // One best-effort close_notify; the socket closes right after.
        if (t.phase == Phase::open) {
          ERR_clear_error();
          SSL_shutdown(t.ssl);
          ERR_clear_error();
        }
        SSL_free(t.ssl);
        t.ssl = nullptr;
      }
      if (t.phase == Phase::handshake) --handshaking_;
      t.phase = Phase::failed;
      t.queued = false;
    }
    if (direct_) {
      for (auto& p : conns_) {
        if (p == &c) p = nullptr;
      }
      dirty_ = true;
    } else if (c.fd >= 0) {
      ::epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
    }
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
    c.watching = false;
  }

  void resume(Conn& c) noexcept override {
    if (direct_ || !c.recv_paused || !c.watching) return;
    c.rx.make_room(c.rx.capacity() / 4);
    if (c.rx.write_room() == 0) return;
    c.recv_paused = false;
    TlsConn& t = state_[c.slot];
    update(c, t);
    queue(c, t);  // OpenSSL may hold records read before the pause
  }

  int poll(Sink& sink, int timeout_us) noexcept override {
    int work = 0;
    if (handshaking_ > 0) work += expire(sink);
    if (direct_) {
      if (timeout_us > 0) wait(timeout_us);
      for (const int lfd : listeners_) {
        work += accept_burst(lfd, 4, sink);
      }
      const std::size_t n = conns_.size();
      for (std::size_t i = 0; i < n; ++i) {
        Conn* c = conns_[i];
        if (c == nullptr) continue;
        TlsConn& t = state_[c->slot];
        if (c->write_blocked && t.phase == Phase::open && flush(*c) == Io::ok) ++work;
        if (conns_[i] != nullptr && c->watching) work += service(*c, t, sink);
      }
      if (dirty_) {
        std::erase(conns_, nullptr);
        dirty_ = false;
      }
      return work;
    }
    if (!again_.empty()) {
      scratch_.swap(again_);
      for (Conn* c : scratch_) {
        TlsConn& t = state_[c->slot];
        if (!t.queued) continue;  // removed since
        t.queued = false;
        if (c->watching) work += service(*c, t, sink);
      }
      scratch_.clear();
      timeout_us = 0;
    }
    const int timeout_ms = timeout_us > 0 ? (timeout_us + 999) / 1000 : 0;
    const int n = ::epoll_wait(ep_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events_[static_cast<std::size_t>(i)];
      if (is_listener(ev)) {
        work += accept_burst(listener_fd(ev), 16, sink);
        continue;
      }
      Conn& c = *static_cast<Conn*>(ev.data.ptr);
      if (!c.watching) continue;  // removed earlier in this batch
      TlsConn& t = state_[c.slot];
      if ((ev.events & EPOLLOUT) && c.write_blocked && t.phase == Phase::open && flush(c) == Io::ok) ++work;
      if (c.watching) work += service(c, t, sink);
    }
    return work;
  }

 private:
  // Handshake step, then reads until OpenSSL wants more from the socket, rx
  // is full, or the per-poll bound. Returns the reads that brought bytes.
  int service(Conn& c, TlsConn& t, Sink& sink) noexcept {
    int work = 0;
    if (t.phase == Phase::handshake) {
      if (!handshake(c, t, sink)) return 0;
      ++work;
    }
    if (t.phase != Phase::open) return work;
    const int bound = cfg_.max_reads_per_conn * 4;  // records are at most 16 KiB; reads often shorter
    for (int i = 0; c.watching; ++i) {
      c.rx.make_room(c.rx.capacity() / 4);
      if (c.rx.write_room() == 0) {  // the protocol is behind: stop reading, TCP pushes back
        if (!direct_ && !c.recv_paused) {
          c.recv_paused = true;
          update(c, t);
        }
        break;
      }
      if (i == bound) {  // fairness: come back on the next poll
        if (!direct_) queue(c, t);
        break;
      }
      ERR_clear_error();
      const int n = SSL_read(t.ssl, c.rx.write_ptr(), static_cast<int>(c.rx.write_room()));
      if (n > 0) {
        c.rx.produced(static_cast<std::size_t>(n));
        if (cfg_.socket.quickack) quickack(c.fd);
        ++work;
        sink.on_data(c, nullptr, static_cast<std::size_t>(n));
        // Nothing more inside OpenSSL: another read would almost always be
        // an EAGAIN syscall. Level-triggered epoll, or the next direct pass,
        // brings what arrives since.
        if (!SSL_has_pending(t.ssl)) break;
        continue;
      }
      const int e = SSL_get_error(t.ssl, n);
      if (e == SSL_ERROR_WANT_READ) {
        if (t.want_write) {  // what waited for room went out
          t.want_write = false;
          if (!direct_) update(c, t);
        }
        break;
      }
      if (e == SSL_ERROR_WANT_WRITE) {  // a post-handshake message waits for room: EPOLLOUT brings us back
        if (!t.want_write) {
          t.want_write = true;
          if (!direct_) update(c, t);
        }
        break;
      }
      c.watching = false;
      if (e == SSL_ERROR_ZERO_RETURN) {
        sink.on_closed(c, Io::closed, 0);
      } else {
        const int err = errno;
        fail(t, "receive failed", e);
        sink.on_closed(c, Io::error, err);
      }
      break;
    }
    return work;
  }

  // One non-blocking handshake step. True when it completed now.
  bool handshake(Conn& c, TlsConn& t, Sink& sink) noexcept {
    ERR_clear_error();
    const int r = SSL_do_handshake(t.ssl);
    if (r == 1) {
      t.phase = Phase::open;
      --handshaking_;
      t.want_write = false;
      if (!direct_) update(c, t);
      if (!c.tx.empty() && flush(c) == Io::error) {
        c.watching = false;
        sink.on_closed(c, Io::error, 0);
        return false;
      }
      return true;
    }
    const int e = SSL_get_error(t.ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      const bool ww = e == SSL_ERROR_WANT_WRITE;
      if (ww != t.want_write) {
        t.want_write = ww;
        if (!direct_) update(c, t);
      }
      return false;
    }
    --handshaking_;
    fail(t, "TLS handshake failed", e);
    c.watching = false;
    sink.on_closed(c, Io::error, 0);
    return false;
  }

  // Closes connections whose handshake outlived the timeout.
  int expire(Sink& sink) noexcept {
    const std::int64_t now = coarse_ms();
    int work = 0;
    for (std::size_t i = 0; i < state_.size(); ++i) {
      TlsConn& t = state_[i];
      if (t.phase != Phase::handshake || now < t.deadline_ms) continue;
      Conn* c = find(static_cast<std::uint32_t>(i));
      if (c == nullptr) continue;
      --handshaking_;
      t.phase = Phase::failed;
      report("%s %s: TLS handshake not completed within %d ms: closing", who(), t.peer,
             ctx_->config().handshake_timeout_ms);
      c->watching = false;
      sink.on_closed(*c, Io::error, ETIMEDOUT);
      ++work;
    }
    return work;
  }

  // The Conn of a slot (epoll keeps no list: the slot's Conn pointer is
  // remembered when it is queued or added; here a linear look-up is fine,
  // it runs only while a handshake is late).
  Conn* find(std::uint32_t slot) noexcept {
    if (direct_) {
      for (Conn* c : conns_) {
        if (c != nullptr && c->slot == slot) return c;
      }
      return nullptr;
    }
    return slot < owners_.size() ? owners_[slot] : nullptr;
  }

  void queue(Conn& c, TlsConn& t) noexcept {
    if (c.slot >= owners_.size()) owners_.resize(c.slot + 1, nullptr);
    owners_[c.slot] = &c;
    if (t.queued) return;
    t.queued = true;
    again_.push_back(&c);
  }

  void update(Conn& c, const TlsConn& t) noexcept {
    if (c.fd < 0) return;
    epoll_event ev{};
    ev.events = (c.recv_paused ? 0u : static_cast<unsigned>(EPOLLIN | EPOLLRDHUP)) |
                (c.write_blocked || t.want_write ? static_cast<unsigned>(EPOLLOUT) : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  // Logs why a connection failed, once, naming its peer; marks it failed.
  void fail(TlsConn& t, const char* what, int ssl_error) noexcept {
    t.phase = Phase::failed;
    char why[320];
    const long verify = t.ssl != nullptr ? SSL_get_verify_result(t.ssl) : X509_V_OK;
    if (verify != X509_V_OK) {
      if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        std::snprintf(why, sizeof why, "the peer's certificate does not name '%s'", ctx_->check_name().c_str());
      } else {
        std::snprintf(why, sizeof why, "the peer's certificate was refused: %s", X509_verify_cert_error_string(verify));
      }
      ERR_clear_error();
    } else if (ssl_error == SSL_ERROR_SYSCALL) {
      std::snprintf(why, sizeof why, "%s", errno != 0 ? std::strerror(errno) : "the peer closed the connection");
      ERR_clear_error();
    } else {
      const unsigned long e = ERR_peek_error();
      const int reason = ERR_GET_REASON(e);
      const char* r = e != 0 ? ERR_reason_error_string(e) : nullptr;
      const char* hint = "";
      if (ctx_->role() == TlsRole::server &&
          (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_HTTP_REQUEST || reason == SSL_R_UNKNOWN_PROTOCOL ||
           reason == SSL_R_PACKET_LENGTH_TOO_LONG))
        hint = " (a plaintext client on a TLS port?)";
      if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) hint = " (client_certificate = \"require\")";
      std::snprintf(why, sizeof why, "%s%s", r != nullptr ? r : "protocol error", hint);
      ERR_clear_error();
    }
    report("%s %s: %s: %s: closing", who(), t.peer, what, why);
  }

  const char* who() const noexcept { return ctx_->role() == TlsRole::server ? "client" : "server"; }

  void report(const char* fmt, ...) noexcept __attribute__((format(printf, 2, 3))) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (cfg_.events != nullptr)
      cfg_.events->event(line);
    else
      std::fprintf(stderr, "tls: %s\n", line);
  }

  static void describe_peer(int fd, char* out, std::size_t cap) noexcept {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    std::snprintf(out, cap, "?");
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return;
    char host[INET6_ADDRSTRLEN] = {};
    unsigned port = 0;
    if (sa.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
      ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
      port = ntohs(in->sin_port);
      std::snprintf(out, cap, "%s:%u", host, port);
    } else if (sa.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
      ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
      port = ntohs(in6->sin6_port);
      std::snprintf(out, cap, "[%s]:%u", host, port);
    }
  }

  // Only for the block idle strategy: the hot path never gets here.
  void wait(int timeout_us) noexcept {
    pollfd fds[16];
    nfds_t k = 0;
    for (const int lfd : listeners_) {
      if (k < 16) fds[k++] = {lfd, POLLIN, 0};
    }
    for (Conn* c : conns_) {
      if (c == nullptr || k >= 16) continue;
      const TlsConn& t = state_[c->slot];
      // Decrypted bytes already inside OpenSSL: no waiting.
      if (t.phase == Phase::open && SSL_has_pending(t.ssl)) return;
      fds[k++] = {c->fd, static_cast<short>(POLLIN | (c->write_blocked || t.want_write ? POLLOUT : 0)), 0};
    }
    int ms = (timeout_us + 999) / 1000;
    if (handshaking_ > 0 && ms > 10) ms = 10;  // handshake deadlines are checked between waits
    ::poll(fds, k, ms);
  }

  DriverConfig cfg_;
  std::shared_ptr<TlsContext> ctx_;
  bool direct_;
  int ep_;
  std::vector<epoll_event> events_;
  std::vector<TlsConn> state_;          // by Conn::slot
  std::vector<Conn*> owners_;           // epoll: by Conn::slot
  std::vector<int> listeners_;          // direct
  std::vector<Conn*> conns_;            // direct
  std::vector<Conn*> again_, scratch_;  // epoll: to service without an event
  int handshaking_ = 0;
  bool dirty_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_tls_driver(const DriverConfig& config, std::shared_ptr<TlsContext> context, bool direct,
                                        std::string& error) {
  if (context == nullptr) {
    error = "tls: no TLS context";
    return nullptr;
  }
  int ep = -1;
  if (!direct) {
    ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) {
      error = std::string("epoll_create1: ") + std::strerror(errno);
      return nullptr;
    }
  }
  return std::make_unique<TlsDriver>(config, std::move(context), direct, ep);
}

#endif  // KITE_HAVE_TLS

}  // namespace kite::transport
