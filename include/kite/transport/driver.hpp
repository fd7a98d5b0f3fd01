// A Driver is one thread's I/O multiplexer for one transport: it watches that
// thread's listeners and connections, reads into their receive buffers and
// writes their send buffers. Drivers are not thread-safe: each belongs to
// exactly one agent thread.
//
// Drivers:
//   DirectDriver  kernel sockets read directly, one non-blocking recv per
//                 connection per poll, no poll/epoll call on the hot path
//                 (the `single` model);
//   EpollDriver   kernel sockets behind one epoll readiness set (`mono`,
//                 `pool` workers, `shard` threads);
//   UringDriver   io_uring: multishot accept; one recv in flight per
//                 connection into a provided-buffer ring registered with the
//                 kernel (armed only while rx can take a whole buffer: the
//                 back-pressure that kernel sockets get from rx room); sends
//                 straight from the send buffer.
//
// Bytes are handed to the Sink: either already appended to c.rx, or (io_uring)
// at a pointer outside c.rx valid only during the call; the sink consumes the
// whole frames and copies only a partial tail into c.rx.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kite/transport/buffers.hpp"
#include "kite/transport/tcp.hpp"
#include "kite/transport/transport.hpp"

namespace kite::transport {

// One connection's transport state. Owned by the agent; lent to its driver.
// The flags and counters come first, then the buffers' positions: an
// engine's pass over its connections reads two or three lines of each.
struct Conn {
  int fd = -1;
  std::uint32_t slot = 0;        // index in the owner's table
  std::uint32_t gen = 0;         // bumped on each reuse (stale io_uring completions are told apart)
  bool watching = false;         // the driver is reading it
  bool write_blocked = false;    // kernel: last write saw EAGAIN
  bool send_in_flight = false;   // io_uring: a send SQE reads tx
  bool recv_paused = false;      // io_uring: no receive armed until rx has room again
  int ops_in_flight = 0;         // io_uring: SQEs whose completion is still due
  std::uint64_t bytes_sent = 0;  // bytes the socket accepted from tx (progress marker)
  RecvBuffer rx;
  SendBuffer tx;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // New bytes for c. p == nullptr: they were appended to c.rx. Otherwise they
  // are [p, p+n), outside c.rx and valid during this call only.
  virtual void on_data(Conn& c, const char* p, std::size_t n) noexcept = 0;
  // The stream ended (peer closed: Io::closed; broken: Io::error). The driver
  // has stopped reading c; the sink calls Driver::remove().
  virtual void on_closed(Conn& c, Io why, int err) noexcept = 0;
  // A listener watched by the driver produced a connected socket.
  virtual void on_accepted(int fd) noexcept = 0;
};

// Where a driver reports what went wrong with one connection below the
// protocol (a TLS handshake refused, a peer's certificate rejected): one line
// per event naming the peer ("client 10.0.0.7:51234: TLS handshake failed:
// ..."), on the driver's thread, never on the per-message path.
class EventLog {
 public:
  virtual ~EventLog() = default;
  virtual void event(const char* line) noexcept = 0;
};

struct DriverConfig {
  SocketOptions socket;
  EventLog* events = nullptr;  // nullptr: lines go to stderr        // applied to each accepted/added socket
  int max_reads_per_conn = 4;  // bound on reads per connection per poll
  int max_events = 64;         // epoll_wait / CQE batch
  // io_uring only
  unsigned uring_entries = 256;
  bool uring_sqpoll = false;  // a kernel thread polls the SQ: needs a spare core
  int uring_sqpoll_cpu = -1;
  unsigned uring_buffers = 256;  // provided buffers (power of two)
  unsigned uring_buffer_size = 4096;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char* name() const noexcept = 0;
  // Watches a listening socket; accepted fds are reported to Sink::on_accepted.
  virtual bool listen(int listen_fd, std::string& error) = 0;
  // Starts reading c (c.fd is connected and non-blocking). Applies options.
  virtual bool add(Conn& c, std::string& error) = 0;
  // Pushes c.tx toward the socket. Io::retry when the socket is full (the
  // driver resumes by itself when it drains), Io::error when broken.
  virtual Io flush(Conn& c) noexcept = 0;
  // Stops watching c and closes its fd. c can be reused once idle(c).
  virtual void remove(Conn& c) noexcept = 0;
  virtual bool idle(const Conn& c) const noexcept { return c.ops_in_flight == 0; }
  // Closes a connection that was accepted but will not be served (refused).
  virtual void discard(int fd) noexcept;
  // Reading stopped because c.rx could not take another buffer (io_uring):
  // called by the owner once the protocol has consumed, to read again.
  virtual void resume(Conn&) noexcept {}
  // One bounded pass over ready work, waiting up to timeout_us (0: never
  // wait; the hot path). Returns the number of events handled.
  virtual int poll(Sink& sink, int timeout_us) noexcept = 0;
  // The option report of the last socket added (for the thread's report).
  const OptionReport& last_options() const noexcept { return last_options_; }

 protected:
  OptionReport last_options_{};
};

std::unique_ptr<Driver> make_direct_driver(const DriverConfig& c);
std::unique_ptr<Driver> make_epoll_driver(const DriverConfig& c, std::string& error);
// nullptr with `error` set when io_uring is not compiled in or cannot be set up.
std::unique_ptr<Driver> make_uring_driver(const DriverConfig& c, std::string& error);

}  // namespace kite::transport
