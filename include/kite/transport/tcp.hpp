// Kernel TCP sockets: set-up calls (listen, accept, connect, options) and the
// two hot-path calls (read_some, write_some). Everything is non-blocking once
// set up. Set-up errors are text built at set-up time; hot-path results are Io.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kite/transport/transport.hpp"

namespace kite::transport {

struct SocketOptions {
  bool nodelay = true;            // TCP_NODELAY: no Nagle delay on small replies
  bool quickack = false;          // TCP_QUICKACK: ack at once (re-armed after every read: a syscall and
                                  // a pure ACK packet per message; off by default, see docs/engine.md)
  int busy_poll_usecs = 0;        // SO_BUSY_POLL; 0 leaves the socket interrupt-driven
  bool prefer_busy_poll = false;  // SO_PREFER_BUSY_POLL (Linux >= 5.11)
  int rcvbuf = 0;                 // SO_RCVBUF bytes; 0 keeps the kernel's autotuning
  int sndbuf = 0;                 // SO_SNDBUF bytes; 0 keeps the kernel's autotuning
};

// What the kernel accepted. A refused option is reported, never fatal:
// SO_BUSY_POLL above net.core.busy_read needs CAP_NET_ADMIN, and
// SO_PREFER_BUSY_POLL does not exist before Linux 5.11.
struct OptionReport {
  bool nodelay = false;
  bool quickack = false;
  bool busy_poll = false;
  bool prefer_busy_poll = false;
  int busy_poll_errno = 0;
  int prefer_busy_poll_errno = 0;
  int busy_poll_usecs_read_back = 0;  // getsockopt(SO_BUSY_POLL) after setting
  std::string describe() const;  // one line, e.g. "nodelay quickack busy_poll=50us prefer_busy_poll=refused(EPERM)"
};

OptionReport apply_options(int fd, const SocketOptions& o) noexcept;

struct ListenResult {
  int fd = -1;             // non-blocking listening socket, or -1
  std::uint16_t port = 0;  // the port actually bound (useful with port 0)
  std::string error;       // set when fd == -1, e.g. "127.0.0.1:9000: port in use"
};
// SO_REUSEADDR always; SO_REUSEPORT when `reuseport`.
ListenResult listen_tcp(const std::string& address, std::uint16_t port, bool reuseport, int backlog = 128);

// Accepts one pending connection as a non-blocking socket: the fd, or -1 with
// errno EAGAIN when none is pending.
int accept_nonblocking(int listen_fd) noexcept;

struct ConnectResult {
  int fd = -1;
  std::string error;
};
// Connects (blocking, bounded by timeout_ms), then makes the socket non-blocking.
ConnectResult connect_tcp(const std::string& address, std::uint16_t port, int timeout_ms = 2000);

// Hot path. read_some: recv(MSG_DONTWAIT) into [p, p+n). write_some:
// send(MSG_DONTWAIT | MSG_NOSIGNAL). Both map EAGAIN to retry, 0-byte reads to
// closed, and other failures to error. Where recv and send are the C
// library's own (socket_calls_direct()), they enter the kernel directly
// (recvfrom/sendto, no cancellation point); where anything interposes them
// (an LD_PRELOAD kernel-bypass stack, a test's wrapper), they call it.
bool socket_calls_direct() noexcept;
IoResult read_some(int fd, char* p, std::size_t n) noexcept;
IoResult write_some(int fd, const char* p, std::size_t n) noexcept;
// Re-arms TCP_QUICKACK (the kernel clears it after it acks).
void quickack(int fd) noexcept;

// Bound local port of a socket (0 on error).
std::uint16_t local_port(int fd) noexcept;

}  // namespace kite::transport
