// Test protocols and a blocking test client for the engine's integration
// tests (target kite_engine_testing). The echo protocol and the pinger are
// the bench's (kite/bench/echo.hpp, what engine_cost measures).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "kite/bench/echo.hpp"
#include "kite/engine/engine.hpp"
#include "kite/engine/protocol.hpp"

namespace kite::engine::test {

using kite::bench::cat;
using kite::bench::EchoFactory;
using kite::bench::EchoProtocol;
using kite::bench::Pinger;
using kite::bench::PingerFactory;

// Polls `pred` every millisecond until it holds or `ms` pass.
template <class Pred>
bool eventually(Pred pred, int ms = 5000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

// A plain blocking-with-timeouts client, independent of the engine's code.
class Client {
 public:
  Client() = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() { close(); }

  bool connect(std::uint16_t port, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  }
  bool send_all(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Non-blocking send of as much as the socket takes; -1 on a broken stream.
  ssize_t send_some(const std::string& s) {
    const ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return n;
  }
  // The next '\n'-terminated record, waiting at most timeout_ms.
  bool read_line(std::string& line, int timeout_ms = 5000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const auto nl = buf_.find('\n');
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl + 1);
        buf_.erase(0, nl + 1);
        return true;
      }
      char tmp[4096];
      const std::optional<ssize_t> n = recv_by(deadline, tmp, sizeof tmp);
      if (!n || *n <= 0) return false;
      buf_.append(tmp, static_cast<std::size_t>(*n));
    }
  }
  // True when nothing is readable right now (no reply pending).
  bool nothing_to_read(int wait_ms) {
    if (!buf_.empty()) return false;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, wait_ms) == 0;
  }
  // Half-closes and waits for the server's orderly close (EOF).
  bool close_and_wait_eof(int timeout_ms = 5000) {
    ::shutdown(fd_, SHUT_WR);
    return wait_eof(timeout_ms);
  }
  bool wait_eof(int timeout_ms = 5000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      char tmp[4096];
      const std::optional<ssize_t> n = recv_by(deadline, tmp, sizeof tmp);
      if (!n) return false;
      if (*n == 0) return true;
      if (*n < 0) return errno == ECONNRESET;
    }
  }
  // One recv() once the socket is readable before `deadline`; nullopt when
  // the deadline comes first.
  std::optional<ssize_t> recv_by(std::chrono::steady_clock::time_point deadline, char* to, std::size_t cap) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    return ::recv(fd_, to, cap, 0);
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::string buf_;
};

}  // namespace kite::engine::test
