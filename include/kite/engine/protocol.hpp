// The seam between the engine runtime (threads, transports, acceptor models)
// and what runs over one connection (kite_link's FIX session, or a test echo).
//
// The runtime owns sockets and buffers. For each connection it holds one
// Protocol: it hands it received bytes, gives it a turn for timers (each
// timer interval, or when the protocol said its timers are next due), and
// lends it an Outbound to write replies straight into the connection's send
// buffer (claim, write, commit: no copy, no allocation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kite::engine {

// The send side of one connection.
class Outbound {
 public:
  virtual ~Outbound() = default;
  // Contiguous room for at least `min` bytes at the tail of the send buffer,
  // or nullptr when the buffer cannot take that much now (back-pressure: the
  // caller keeps its state and tries again later; it is not an error).
  virtual char* claim(std::size_t min) noexcept = 0;
  // Publishes n bytes written at the last claim()'s pointer (n <= room).
  virtual void commit(std::size_t n) noexcept = 0;
  // Bytes claimed-and-committed but not yet accepted by the socket.
  virtual std::size_t pending() const noexcept = 0;
  // Asks the runtime to close the connection once what is committed has been
  // flushed (or at once when `flush` is false; or when the socket has taken
  // nothing for send_full_limit_ms: a dead peer is not waited for). `reason`
  // is a static string.
  virtual void close(const char* reason, bool flush = true) noexcept = 0;
};

// What runs over one connection. Called only from the thread that owns the
// connection.
class Protocol {
 public:
  virtual ~Protocol() = default;
  // The connection is up; `out` stays valid until on_disconnected().
  virtual void on_connected(Outbound& out, std::int64_t now_ns) noexcept = 0;
  // Received bytes [data, data + n). Returns how many were consumed: whole
  // frames only; the runtime keeps the rest and presents it again, followed
  // by newer bytes.
  virtual std::size_t on_data(const char* data, std::size_t n, std::int64_t now_ns) noexcept = 0;
  // A turn for timers (heartbeats, timeouts, resends): at most once per
  // EngineConfig::timer_interval_us, and on the next duty cycle again while
  // the last turn returned work; not before timer_quiet_ns() allows. Returns
  // work done.
  virtual int on_timer(std::int64_t now_ns) noexcept = 0;
  // How long from now (ns, never negative) this connection needs no timer
  // turn: asked after each turn (the next one comes no sooner, unless the
  // engine is woken) and
  // after each on_data (a shorter answer brings the next turn forward; a
  // longer one does not put it off). 0, the default, asks for a turn every
  // timer interval. A protocol whose turns also serve requests from other
  // threads answers 0 or has them call Engine::wake_timers().
  virtual std::int64_t timer_quiet_ns() noexcept { return 0; }
  // The connection is gone (peer closed, error, or close() asked for it).
  virtual void on_disconnected(const char* reason, std::int64_t now_ns) noexcept = 0;
};

// Makes (or lends) the Protocol for a new connection. Accepting is set-up
// time, not the hot path; a factory may pool its objects.
class ProtocolFactory {
 public:
  virtual ~ProtocolFactory() = default;
  // nullptr refuses the connection (e.g. the maximum number of connections).
  virtual Protocol* open(int connection_id) noexcept = 0;
  // open() for a connection from `peer`, its remote address as text
  // ("192.0.2.7", "2001:db8::1"; empty when the transport cannot tell). The
  // engine calls this one; the default forgets the address.
  virtual Protocol* open_from(int connection_id, std::string_view peer) noexcept {
    (void)peer;
    return open(connection_id);
  }
  // The engine refused a connection without asking open() (`reason`, static
  // text: no free slot on its thread). The factory logs it.
  virtual void refused(int connection_id, std::string_view peer, const char* reason) noexcept {
    (void)connection_id, (void)peer, (void)reason;
  }
  // The runtime is done with p (after on_disconnected()).
  virtual void release(Protocol* p) noexcept = 0;
};

}  // namespace kite::engine
