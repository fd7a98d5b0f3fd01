#include "client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "kite/bench/thread.hpp"
#include "kite/transport/tls.hpp"
#ifdef KITE_BENCH_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

#include "kite/codec/codec.hpp"
#include "messages.hpp"

namespace kite::bench {

namespace {
constexpr std::size_t kRxSize = 256 * 1024;
constexpr std::size_t kTxSize = 512 * 1024;
constexpr std::size_t kMaxMessage = 1024;
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::uint32_t kBacklog = 1u << 16;  // per session; beyond it due orders are dropped (errors)

struct InFlight {
  std::int64_t slot_ns;
  std::int64_t send_ns;
  std::uint32_t phase;
};
}  // namespace

struct Client::Scratch {
  codec::FieldIndex index{128};
  codec::Header header;
  std::vector<epoll_event> events;
};

// One TCP connection to the server, carrying one FIX initiator session: its
// buffers, its orders awaiting replies and (open loop) its held-back slots.
struct Client::Connection {
  Connection(unsigned comp_index, unsigned cap)
      : header(codec::HeaderFields{"FIX.4.4", client_comp_id(comp_index), std::string(kServerCompID), {}, {}, {}, {}}),
        writer(header),
        rx(new char[kRxSize]),
        tx(new char[kTxSize]),
        ring(new InFlight[cap]),
        ring_cap(cap),
        backlog(new std::int64_t[kBacklog]) {}
  ~Connection() { close(); }
  void close() noexcept;
  codec::HeaderTemplate header;
  codec::MessageWriter writer;
  int fd = -1;
  void* ssl = nullptr;  // SSL*: the tls transport's session over fd
  std::unique_ptr<char[]> rx;
  std::size_t rx_len = 0;
  std::unique_ptr<char[]> tx;
  std::size_t tx_head = 0, tx_tail = 0;  // unsent bytes are [head, tail)
  std::unique_ptr<InFlight[]> ring;      // orders awaiting their reply, oldest first
  std::uint32_t ring_cap, ring_head = 0, ring_size = 0;
  std::unique_ptr<std::int64_t[]> backlog;  // open loop: slots due but held back by the cap
  std::uint32_t bl_head = 0, bl_size = 0;
  std::uint64_t seq = 1;
  std::uint64_t next_clordid = 1;
  std::int64_t next_send_ns = 0;  // closed loop: when the next order is due (INT64_MAX: waiting)
  std::int64_t last_send_ns = 0;
  bool logged_on = false;
  bool logged_out = false;
  bool closed = false;
};

Client::Client(const ClientOptions& o, const Clock& clock) : o_(o), clock_(clock), scratch_(new Scratch) {}

Client::~Client() {
  connections_.clear();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

#ifdef KITE_BENCH_TLS
bool client_tls_compiled_in() noexcept { return true; }

void Client::Connection::close() noexcept {
  if (ssl != nullptr) {
    if (!closed) SSL_shutdown(static_cast<SSL*>(ssl));  // a close_notify, not waited for
    SSL_free(static_cast<SSL*>(ssl));
    ssl = nullptr;
  }
  if (fd >= 0) ::close(fd);
  fd = -1;
}
#else
bool client_tls_compiled_in() noexcept { return false; }

void Client::Connection::close() noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
#endif

namespace {

#ifdef KITE_BENCH_TLS
// OpenSSL's queued errors as one line (and clears them).
std::string ssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

// The TLS handshake on a connected non-blocking socket, waiting in poll()
// until it completes or the deadline passes. The session is in c.ssl.
bool tls_handshake(const transport::TlsContext& ctx, const std::string& host, int fd, void*& out,
                   std::int64_t deadline_ns, std::string& error) {
  ERR_clear_error();
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx.native()));
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    error = "tls: cannot set up a connection: " + ssl_errors();
    SSL_free(ssl);
    return false;
  }
  out = ssl;
  SSL_set_connect_state(ssl);
  in_addr ip{};
  if (::inet_pton(AF_INET, host.c_str(), &ip) == 1) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  }
  while (true) {
    const int r = SSL_do_handshake(ssl);
    if (r == 1) return true;
    const int e = SSL_get_error(ssl, r);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
      const long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK)
        error = "tls: the server's certificate was refused (" + std::string(X509_verify_cert_error_string(verify)) +
                "; checked against the CA file and the name '" + host + "')";
      else if (e == SSL_ERROR_SYSCALL)
        error = "tls: the server closed the connection during the handshake (is it serving tls?)";
      else
        error = "tls: handshake failed: " + ssl_errors();
      return false;
    }
    if (Clock::monotonic_ns() > deadline_ns) {
      error = "tls: handshake with " + host + " timed out";
      return false;
    }
    pollfd p{fd, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
    ::poll(&p, 1, 50);
  }
}
#endif

int connect_one(const ClientOptions& o, std::int64_t deadline_ns, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  if (const int rc = getaddrinfo(o.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = "cannot resolve " + o.host + ": " + gai_strerror(rc);
    return -1;
  }
  const sockaddr_in addr = *reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  freeaddrinfo(res);
  // Retry while refused: the server may still be starting.
  while (true) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      return -1;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (o.busy_poll_usecs > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o.busy_poll_usecs, sizeof o.busy_poll_usecs);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      return fd;
    }
    const int err = errno;
    ::close(fd);
    if ((err != ECONNREFUSED && err != EINTR) || Clock::monotonic_ns() > deadline_ns) {
      error = "cannot connect to " + o.host + ":" + port + ": " + std::strerror(err);
      return -1;
    }
    ::usleep(20'000);
  }
}

}  // namespace

bool Client::connect(std::string& error) {
  if (o_.sessions == 0 || o_.runs == 0 || o_.duration_s <= 0 || (o_.open_loop && o_.rate <= 0)) {
    error = "bad options: sessions, runs, duration and (open loop) rate must be positive";
    return false;
  }
  const unsigned cap = o_.open_loop ? std::max(1u, o_.max_in_flight) : 1u;
  phases_.resize(o_.runs + 1);
  scratch_->events.resize(o_.sessions);
  if (o_.tls) {
    if (!client_tls_compiled_in()) {
      error = "tls: this bench_roundtrip was built without OpenSSL (KITE_WITH_TLS=OFF)";
      return false;
    }
    if (o_.tls_ca.empty()) {
      error = "tls: --tls-ca (the PEM file of the CA that signed the server's certificate) is required";
      return false;
    }
    transport::TlsConfig tc;
    tc.ca_file = o_.tls_ca;
    std::string why;
    tls_ = transport::TlsContext::make(tc, transport::TlsRole::client, o_.host, why);
    if (tls_ == nullptr) {
      error = "tls: " + why;
      return false;
    }
  }
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  const std::int64_t deadline = Clock::monotonic_ns() + static_cast<std::int64_t>(o_.connect_timeout_s * 1e9);
  for (unsigned k = 0; k < o_.sessions; ++k) {
    auto c = std::make_unique<Connection>(o_.first_session + k, cap);
    c->fd = connect_one(o_, deadline, error);
    if (c->fd < 0) return false;
#ifdef KITE_BENCH_TLS
    if (tls_ != nullptr && !tls_handshake(*tls_, o_.host, c->fd, c->ssl, deadline, error)) return false;
#endif
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = k;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd, &ev);
    c->tx_tail = write_logon(c->writer, c->tx.get(), kTxSize, c->seq++, codec::utc_now_ns());
    connections_.push_back(std::move(c));
  }
  // Logon every session, then wait for every Logon answer.
  unsigned pending = o_.sessions;
  for (auto& c : connections_) flush(*c);
  while (pending > 0) {
    const std::int64_t now = Clock::monotonic_ns();
    if (now > deadline) {
      error = "logon timed out: " + std::to_string(pending) + " of " + std::to_string(o_.sessions) +
              " sessions not logged on";
      return false;
    }
    const int n = ::epoll_wait(epoll_fd_, scratch_->events.data(), static_cast<int>(o_.sessions), 50);
    for (int i = 0; i < n; ++i) {
      Connection& c = *connections_[scratch_->events[static_cast<std::size_t>(i)].data.u32];
      const bool was = c.logged_on;
      if (!read(c, clock_.now_ns(), error)) return false;
      if (!was && c.logged_on) --pending;
    }
    for (auto& c : connections_) flush(*c);
  }
  return true;
}

bool Client::flush(Connection& c) noexcept {
#ifdef KITE_BENCH_TLS
  if (c.ssl != nullptr) {
    SSL* ssl = static_cast<SSL*>(c.ssl);
    while (c.tx_head < c.tx_tail) {
      const int n = SSL_write(ssl, c.tx.get() + c.tx_head, static_cast<int>(c.tx_tail - c.tx_head));
      if (n > 0) {
        c.tx_head += static_cast<std::size_t>(n);
        continue;
      }
      const int e = SSL_get_error(ssl, n);
      if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) break;
      ERR_clear_error();
      c.closed = true;
      return false;
    }
    if (c.tx_head == c.tx_tail) c.tx_head = c.tx_tail = 0;
    return true;
  }
#endif
  while (c.tx_head < c.tx_tail) {
    const ssize_t n = ::send(c.fd, c.tx.get() + c.tx_head, c.tx_tail - c.tx_head, MSG_NOSIGNAL);
    if (n > 0) {
      c.tx_head += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    c.closed = true;
    return false;
  }
  if (c.tx_head == c.tx_tail) c.tx_head = c.tx_tail = 0;
  return true;
}

bool Client::send_order(Connection& c, std::int64_t slot_ns, std::uint32_t phase) noexcept {
  if (c.tx_tail + kMaxMessage > kTxSize) {
    // The socket has not taken earlier bytes: compact, and if still full the
    // order cannot be sent now (counted like a cap hit).
    std::memmove(c.tx.get(), c.tx.get() + c.tx_head, c.tx_tail - c.tx_head);
    c.tx_tail -= c.tx_head;
    c.tx_head = 0;
    if (c.tx_tail + kMaxMessage > kTxSize) return false;
  }
  const std::size_t n =
      write_order(c.writer, c.tx.get() + c.tx_tail, kMaxMessage, c.seq, codec::utc_now_ns(), c.next_clordid);
  if (n == 0) return false;
  ++c.seq;
  ++c.next_clordid;
  c.tx_tail += n;
  const std::int64_t send_ns = clock_.now_ns();
  InFlight& f = c.ring[(c.ring_head + c.ring_size) % c.ring_cap];
  f = {slot_ns, send_ns, phase};
  ++c.ring_size;
  ++in_flight_;
  ++phases_[phase].sent;
  ++sent_total_;
  c.last_send_ns = send_ns;
  flush(c);
  return true;
}

bool Client::backlog_left() const noexcept {
  for (const auto& c : connections_)
    if (c->bl_size > 0) return true;
  return false;
}

std::uint32_t Client::phase_of(std::int64_t t) const noexcept {
  if (t < warm_end_ns_ || run_ns_ == 0) return 0;  // run_ns_ is 0 until measure(): connect() counts into the warm-up
  const std::int64_t r = 1 + (t - warm_end_ns_) / run_ns_;
  return static_cast<std::uint32_t>(std::min<std::int64_t>(r, o_.runs));
}

bool Client::run_complete(std::uint32_t run, std::int64_t now) const noexcept {
  if (now < warm_end_ns_ + run_ns_ * static_cast<std::int64_t>(run)) return false;
  // Rings and backlogs are oldest first: only their heads can still belong to the run.
  for (const auto& cp : connections_) {
    const Connection& c = *cp;
    if (c.ring_size > 0 && c.ring[c.ring_head].phase <= run) return false;
    if (c.bl_size > 0 && phase_of(c.backlog[c.bl_head]) <= run) return false;
  }
  return true;
}

void Client::note_in_flight(std::int64_t now) noexcept {
  Phase& p = phases_[phase_of(now)];
  if (in_flight_ > p.max_in_flight) p.max_in_flight = in_flight_;
}

// Reads what the connection has into rx: recv(), or SSL_read for tls (>0
// bytes, 0 for the end, -1 with errno EAGAIN for nothing now, -1 with errno
// set otherwise).
ssize_t Client::receive(Connection& c) noexcept {
#ifdef KITE_BENCH_TLS
  if (c.ssl != nullptr) {
    SSL* ssl = static_cast<SSL*>(c.ssl);
    const int n = SSL_read(ssl, c.rx.get() + c.rx_len, static_cast<int>(kRxSize - c.rx_len));
    if (n > 0) return n;
    const int e = SSL_get_error(ssl, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      errno = EAGAIN;
      return -1;
    }
    ERR_clear_error();
    if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) return 0;
    if (e != SSL_ERROR_SYSCALL) errno = EPROTO;
    return -1;
  }
#endif
  return ::recv(c.fd, c.rx.get() + c.rx_len, kRxSize - c.rx_len, 0);
}

// Whether a tls connection holds bytes read from the socket but not yet
// returned (OpenSSL reads ahead): the socket's readiness does not show them.
bool Client::tls_pending(const Connection& c) noexcept {
#ifdef KITE_BENCH_TLS
  return c.ssl != nullptr && SSL_has_pending(static_cast<const SSL*>(c.ssl)) == 1;
#else
  (void)c;
  return false;
#endif
}

bool Client::read(Connection& c, std::int64_t now, std::string& error) noexcept {
  while (true) {
    const ssize_t n = receive(c);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      error = std::string("recv: ") + std::strerror(errno);
      c.closed = true;
      return false;
    }
    if (n == 0) {
      c.closed = true;
      if (c.logged_out) return true;
      error = "the server closed a session";
      return false;
    }
    // Replies arrived: one timestamp for all the bytes of this recv.
    if (measuring_) now = clock_.now_ns();
    ++reads_with_data_;
    c.rx_len += static_cast<std::size_t>(n);
    std::size_t at = 0;
    while (at < c.rx_len) {
      const codec::FrameResult fr = codec::frame(c.rx.get() + at, c.rx_len - at);
      if (fr.status == codec::FrameStatus::incomplete) break;
      if (fr.status == codec::FrameStatus::invalid) {
        ++phases_[phase_of(now)].errors;
        at += fr.size;
        continue;
      }
      if (!on_message(c, c.rx.get() + at, fr, now, error)) return false;
      at += fr.size;
    }
    if (at > 0) {
      std::memmove(c.rx.get(), c.rx.get() + at, c.rx_len - at);
      c.rx_len -= at;
    }
    if (c.rx_len == kRxSize) {
      error = "receive buffer full without a complete frame";
      return false;
    }
    // Likely drained (a TLS record is at most 16 KiB: what OpenSSL holds is asked for directly).
    if (static_cast<std::size_t>(n) < kRxSize / 2 && !tls_pending(c)) return true;
  }
}

void Client::on_execution_report(Connection& c, bool accepted, std::int64_t now) noexcept {
  if (c.ring_size == 0) {
    ++phases_[phase_of(now)].errors;
    return;
  }
  const InFlight f = c.ring[c.ring_head];
  c.ring_head = (c.ring_head + 1) % c.ring_cap;
  --c.ring_size;
  --in_flight_;
  Phase& p = phases_[f.phase];
  if (!accepted) {
    ++p.errors;
  } else {
    // The achieved rate counts replies as they arrive in a run: an overloaded
    // server answers at its own pace, whatever the orders were due.
    if (now < warm_end_ns_ + run_ns_ * static_cast<std::int64_t>(o_.runs)) ++phases_[phase_of(now)].answered;
    p.service.record(now - f.send_ns);
    if (o_.open_loop) p.response.record(now - f.slot_ns);
  }
  if (!o_.open_loop) {
    c.next_send_ns = o_.think_us > 0 ? now + static_cast<std::int64_t>(o_.think_us * 1000) : now;
  }
}

bool Client::on_message(Connection& c, const char* frame, const codec::FrameResult& fr, std::int64_t now,
                        std::string& error) noexcept {
  // The hot path: the frame is checked (BodyLength, CheckSum); an
  // ExecutionReport needs only its MsgType, the body's first field, and its
  // ExecType. Everything else goes through the full index and header.
  const char* body = frame + fr.body_begin;
  const std::size_t body_len = fr.body_end - fr.body_begin;
  constexpr std::string_view kExecReport{"35=8\x01", 5};
  constexpr std::string_view kExecType{
      "\x01"
      "150=",
      5};
  if (body_len > kExecReport.size() && std::string_view(body, kExecReport.size()) == kExecReport) {
    const std::string_view rest(body + kExecReport.size() - 1, body_len - kExecReport.size() + 1);
    const std::size_t at = rest.find(kExecType);
    const std::size_t v = at == std::string_view::npos ? rest.size() : at + kExecType.size();
    on_execution_report(c, v + 1 < rest.size() && rest[v] == '0' && rest[v + 1] == codec::kSoh, now);
    return true;
  }
  codec::FieldIndex& ix = scratch_->index;
  if (!ix.build(frame, fr) || !codec::read_header(ix, scratch_->header)) {
    ++phases_[phase_of(now)].errors;
    return true;
  }
  const std::string_view type = scratch_->header.msg_type;
  if (type.size() == 1) {
    switch (type[0]) {
      case '8': {  // not reached for a well-formed body (MsgType first): kept for the odd one
        std::string_view exec_type;
        on_execution_report(c, ix.get(codec::tag::ExecType, exec_type) == codec::Get::ok && exec_type == "0", now);
        return true;
      }
      case 'A': c.logged_on = true; return true;
      case '0': return true;
      case '1': {  // TestRequest: answer with a Heartbeat carrying its TestReqID
        std::string_view id;
        ix.get(codec::tag::TestReqID, id);
        if (c.tx_tail + kMaxMessage <= kTxSize) {
          c.tx_tail += write_heartbeat(c.writer, c.tx.get() + c.tx_tail, kMaxMessage, c.seq++, codec::utc_now_ns(), id);
          c.last_send_ns = now;
        }
        return true;
      }
      case '5':
        c.logged_out = true;
        if (measuring_) {
          error = "server logged out a session during the measurement";
          return false;
        }
        if (!c.logged_on) {
          std::string_view text;
          ix.get(codec::tag::Text, text);
          error = "logon refused: " + std::string(text);
          return false;
        }
        return true;
      case '3':
      case 'j':
        // A reject of an order still counts as its (failed) answer.
        if (c.ring_size > 0 && c.logged_on) {
          const InFlight f = c.ring[c.ring_head];
          c.ring_head = (c.ring_head + 1) % c.ring_cap;
          --c.ring_size;
          --in_flight_;
          ++phases_[f.phase].errors;
          if (!o_.open_loop) c.next_send_ns = now;
        }
        return true;
      default: break;
    }
  }
  ++phases_[phase_of(now)].errors;
  return true;
}

// The state of one measure(): the open-loop schedule, the end and the drain,
// and the pass being timed for the client's own load.
struct Client::Measurement {
  std::int64_t end_ns = 0;        // no order is due at or after it
  double interval_ns = 0;         // open loop: between two slots
  std::uint64_t slot = 0;         // open loop: the next slot's number
  std::int64_t next_slot_ns = 0;  // open loop: when it is due
  bool stopping = false;          // past end_ns: only replies are awaited
  std::int64_t drain_deadline = 0;
  std::int64_t next_heartbeat_check = 0;
  std::uint32_t reported = 0;  // runs handed to run_done_
  // Each pass's time goes to the phase it started in, as busy when the pass
  // sent or received something, else as idle.
  std::int64_t pass_start = 0;
  std::uint32_t pass_phase = 0;
  bool pass_counted = false, pass_busy = false;
};

// The measure() steps below are inlined into its loop: the loop stays one
// function, with no call per pass that it did not make before.

[[gnu::always_inline]] inline void Client::end_pass(Measurement& m, std::int64_t now) noexcept {
  if (!m.pass_counted) return;
  ClientLoad& load = phases_[m.pass_phase].load;
  (m.pass_busy ? load.busy_s : load.idle_s) += static_cast<double>(now - m.pass_start) * 1e-9;
}

[[gnu::always_inline]] inline void Client::begin_pass(Measurement& m, std::int64_t now) noexcept {
  m.pass_start = now;
  m.pass_phase = phase_of(now);
  m.pass_counted = !m.stopping;
  m.pass_busy = false;
}

// Every due slot is queued on its connection and sent at once unless the
// in-flight cap holds it back; a held order keeps its slot, so its response
// time includes the wait (no coordinated omission).
[[gnu::always_inline]] inline void Client::queue_due_slots(Measurement& m, std::int64_t now) noexcept {
  const std::size_t n = connections_.size();
  while (m.next_slot_ns <= now && m.next_slot_ns < m.end_ns) {
    Connection& c = *connections_[m.slot % n];
    phases_[phase_of(m.next_slot_ns)].lateness.record(now - m.next_slot_ns);
    if (c.bl_size == kBacklog) {
      ++phases_[phase_of(m.next_slot_ns)].errors;
    } else {
      c.backlog[(c.bl_head + c.bl_size) % kBacklog] = m.next_slot_ns;
      ++c.bl_size;
      if (c.ring_size + c.bl_size > c.ring_cap) ++phases_[phase_of(m.next_slot_ns)].cap_hits;
    }
    ++m.slot;
    m.next_slot_ns =
        start_ns_ + static_cast<std::int64_t>((static_cast<double>(m.slot) + o_.slot_offset) * m.interval_ns);
  }
}

// Open loop: sends the queued orders the in-flight cap lets through, oldest first.
[[gnu::always_inline]] inline void Client::send_backlog() noexcept {
  for (auto& cp : connections_) {
    Connection& c = *cp;
    while (c.bl_size > 0 && c.ring_size < c.ring_cap) {
      const std::int64_t due = c.backlog[c.bl_head];
      if (!send_order(c, due, phase_of(due))) break;  // send buffer full: retry next cycle
      c.bl_head = (c.bl_head + 1) % kBacklog;
      --c.bl_size;
    }
  }
}

// Closed loop: each connection whose reply came (and think time passed) sends its next order.
[[gnu::always_inline]] inline void Client::send_closed_loop_orders(std::int64_t now) noexcept {
  for (auto& cp : connections_) {
    Connection& c = *cp;
    if (c.ring_size == 0 && c.next_send_ns <= now) {
      send_order(c, now, phase_of(now));
      c.next_send_ns = INT64_MAX;
    }
  }
}

// Spinning polls with a zero timeout; blocking sleeps in the kernel until a
// reply or the next due event (an order, a think time's end, the end of the
// measurement), at most 10 ms so time checks stay fresh.
[[gnu::always_inline]] inline long Client::poll_timeout_ns(const Measurement& m, std::int64_t now) const noexcept {
  if (o_.spin) return 0;
  std::int64_t wake = m.stopping ? m.drain_deadline : m.end_ns;
  if (o_.open_loop && !m.stopping) wake = std::min(wake, m.next_slot_ns);
  if (!o_.open_loop && !m.stopping)
    for (auto& cp : connections_)
      if (cp->ring_size == 0) wake = std::min(wake, cp->next_send_ns);
  return static_cast<long>(std::clamp<std::int64_t>(wake - now, 0, 10'000'000));
}

// Reads the replies that arrived; `direct` (one connection, spinning) reads its
// socket without epoll. False with a message when a connection failed.
[[gnu::always_inline]] inline bool Client::read_replies(const Measurement& m, std::int64_t now, bool direct,
                                                        bool& got_some, std::string& error) noexcept {
  if (direct) {
    const std::uint64_t reads_before = reads_with_data_;
    const bool ok = read(*connections_[0], now, error);
    got_some = reads_with_data_ != reads_before;
    return ok;
  }
  const timespec timeout{0, poll_timeout_ns(m, now)};
  const int n =
      ::epoll_pwait2(epoll_fd_, scratch_->events.data(), static_cast<int>(connections_.size()), &timeout, nullptr);
  got_some = n > 0;
  for (int i = 0; i < n; ++i)
    if (!read(*connections_[scratch_->events[static_cast<std::size_t>(i)].data.u32], now, error)) return false;
  return true;
}

[[gnu::always_inline]] inline void Client::count_poll(Measurement& m, bool got_some) noexcept {
  if (m.pass_counted) {
    ClientLoad& load = phases_[m.pass_phase].load;
    ++load.polls;
    if (!got_some) ++load.empty_polls;
  }
  m.pass_busy = m.pass_busy || got_some;
}

// Sends what the sockets did not take earlier. False with a message when a connection is lost.
[[gnu::always_inline]] inline bool Client::flush_all(std::string& error) noexcept {
  bool ok = true;
  for (auto& cp : connections_)
    if (cp->tx_head < cp->tx_tail && !flush(*cp)) {
      error = "send failed: connection lost";
      ok = false;
    }
  return ok;
}

[[gnu::always_inline]] inline void Client::report_complete_runs(Measurement& m, std::int64_t now) noexcept {
  while (run_done_ && m.reported < o_.runs && run_complete(m.reported + 1, now)) {
    ++m.reported;
    run_done_(run_done_ctx_, m.reported, o_.runs, phases_[m.reported]);
  }
}

// Once a second: a Heartbeat on each connection that sent nothing for HeartBtInt.
[[gnu::always_inline]] inline void Client::send_heartbeats(Measurement& m, std::int64_t now) noexcept {
  if (now < m.next_heartbeat_check) return;
  m.next_heartbeat_check = now + kSecond;
  for (auto& cp : connections_) {
    Connection& c = *cp;
    if (now - c.last_send_ns > static_cast<std::int64_t>(kHeartBtInt) * kSecond && c.tx_tail + kMaxMessage <= kTxSize) {
      c.tx_tail += write_heartbeat(c.writer, c.tx.get() + c.tx_tail, kMaxMessage, c.seq++, codec::utc_now_ns(), {});
      c.last_send_ns = now;
      flush(c);
    }
  }
}

// After the measurement: orders never answered, or due and never sent, are errors of their phase.
void Client::count_unanswered() noexcept {
  for (auto& cp : connections_) {
    Connection& c = *cp;
    for (; c.bl_size > 0; --c.bl_size, c.bl_head = (c.bl_head + 1) % kBacklog)
      ++phases_[phase_of(c.backlog[c.bl_head])].errors;
    while (c.ring_size > 0) {
      ++phases_[c.ring[c.ring_head].phase].errors;
      c.ring_head = (c.ring_head + 1) % c.ring_cap;
      --c.ring_size;
    }
  }
  in_flight_ = 0;
}

bool Client::measure(std::string& error) {
  std::int64_t now = clock_.now_ns();
  start_ns_ = start_at_ns_ > 0 ? start_at_ns_ : now;
  // From the shared start, so every thread of a cell cuts its runs at the same instants.
  warm_end_ns_ = start_ns_ + static_cast<std::int64_t>(o_.warmup_s * 1e9);
  run_ns_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(o_.duration_s * 1e9));
  Measurement m;
  m.end_ns = warm_end_ns_ + run_ns_ * o_.runs;
  m.interval_ns = o_.open_loop ? 1e9 / o_.rate : 0;
  m.next_slot_ns = start_ns_ + static_cast<std::int64_t>(o_.slot_offset * m.interval_ns);
  m.next_heartbeat_check = now + kSecond;
  for (auto& c : connections_) c->next_send_ns = start_ns_;
  const bool direct = connections_.size() == 1 && o_.spin;
  measuring_ = true;
  bool ok = true;
  while (ok) {
    now = clock_.now_ns();
    end_pass(m, now);
    if (!m.stopping && now >= m.end_ns) {
      // Slots that fell due while this thread was descheduled are still owed (and late).
      if (o_.open_loop) queue_due_slots(m, now);
      m.stopping = true;
      m.drain_deadline = now + static_cast<std::int64_t>(o_.drain_timeout_s * 1e9);
    }
    if (m.stopping && ((in_flight_ == 0 && !backlog_left()) || now >= m.drain_deadline)) break;
    begin_pass(m, now);

    const std::uint64_t sent_before = sent_total_;
    if (o_.open_loop) {
      if (!m.stopping) queue_due_slots(m, now);
      send_backlog();
      note_in_flight(now);
    } else if (!m.stopping) {
      send_closed_loop_orders(now);
      note_in_flight(now);
    }
    m.pass_busy = sent_total_ != sent_before;

    bool got_some = false;
    if (!read_replies(m, now, direct, got_some, error)) ok = false;
    count_poll(m, got_some);
    if (!flush_all(error)) ok = false;
    report_complete_runs(m, now);
    send_heartbeats(m, now);
  }
  measuring_ = false;
  count_unanswered();
  if (ok && run_done_)
    for (++m.reported; m.reported <= o_.runs; ++m.reported)
      run_done_(run_done_ctx_, m.reported, o_.runs, phases_[m.reported]);
  return ok;
}

void Client::logout() noexcept {
  for (auto& cp : connections_) {
    Connection& c = *cp;
    if (c.closed || c.fd < 0) continue;
    if (c.tx_tail + kMaxMessage <= kTxSize)
      c.tx_tail += write_logout(c.writer, c.tx.get() + c.tx_tail, kMaxMessage, c.seq++, codec::utc_now_ns());
    flush(c);
  }
  const std::int64_t deadline = Clock::monotonic_ns() + kSecond;
  std::string ignored;
  while (Clock::monotonic_ns() < deadline) {
    bool all = true;
    for (auto& cp : connections_) all = all && (cp->logged_out || cp->closed);
    if (all) break;
    const int n = ::epoll_wait(epoll_fd_, scratch_->events.data(), static_cast<int>(connections_.size()), 20);
    for (int i = 0; i < n; ++i) {
      Connection& c = *connections_[scratch_->events[static_cast<std::size_t>(i)].data.u32];
      if (!c.closed) read(c, 0, ignored);
      if (c.closed) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
    }
  }
  for (auto& cp : connections_) cp->close();
}

void merge_phase(Phase& into, const Phase& from) noexcept {
  into.service.merge(from.service);
  into.response.merge(from.response);
  into.lateness.merge(from.lateness);
  into.sent += from.sent;
  into.answered += from.answered;
  into.errors += from.errors;
  into.cap_hits += from.cap_hits;
  into.max_in_flight += from.max_in_flight;
  into.load.polls += from.load.polls;
  into.load.empty_polls += from.load.empty_polls;
  into.load.busy_s += from.load.busy_s;
  into.load.idle_s += from.load.idle_s;
}

bool measure_with_threads(const ClientOptions& o, unsigned threads, const std::vector<int>& cores, const Clock& clock,
                          Client::RunDone run_done, void* ctx, std::vector<Phase>& phases, std::string& error) {
  threads = std::max(1u, std::min(threads, o.sessions));
  std::vector<std::unique_ptr<Client>> clients;
  unsigned first = 0;
  for (unsigned k = 0; k < threads; ++k) {
    ClientOptions ok = o;
    ok.sessions = o.sessions / threads + (k < o.sessions % threads ? 1 : 0);
    ok.first_session = o.first_session + first;
    ok.rate = o.rate * ok.sessions / o.sessions;
    ok.slot_offset = static_cast<double>(k) / threads;
    first += ok.sessions;
    clients.push_back(std::make_unique<Client>(ok, clock));
    if (!clients.back()->connect(error)) return false;
  }
  if (run_done) clients[0]->on_run_done(run_done, ctx);
  bool ok = true;
  if (threads == 1) {
    ok = clients[0]->measure(error);
  } else {
    // Every schedule starts at one instant, after the threads have pinned themselves.
    const std::int64_t start = clock.now_ns() + 50'000'000;
    std::vector<std::string> errors(threads);
    std::vector<char> pinned(threads, 1);
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k) {
      clients[k]->start_at(start);
      pool.emplace_back([&, k] {
        name_this_thread("kite-client");
        if (!cores.empty() && !pin_this_thread(cores[k % cores.size()])) pinned[k] = 0;
        if (!clients[k]->measure(errors[k]) && errors[k].empty()) errors[k] = "measurement failed";
      });
    }
    for (auto& t : pool) t.join();
    for (unsigned k = 0; k < threads; ++k) {
      if (!pinned[k]) errors[k] = "cannot pin to core " + std::to_string(cores[k % cores.size()]);
      if (!errors[k].empty() && ok) {
        error = "client thread " + std::to_string(k) + ": " + errors[k];
        ok = false;
      }
    }
  }
  for (auto& c : clients) c->logout();
  phases = clients[0]->phases();
  for (unsigned k = 1; k < threads; ++k)
    for (std::size_t i = 0; i < phases.size(); ++i) merge_phase(phases[i], clients[k]->phases()[i]);
  return ok;
}

}  // namespace kite::bench
