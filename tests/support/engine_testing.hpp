// Test protocols and a blocking test client for the engine's integration
// tests (target kite_engine_testing); bench/engine's engine_cost runs the
// same echo and pinger.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kite/engine/engine.hpp"
#include "kite/engine/protocol.hpp"

namespace kite::engine::test {

// Answers every '\n'-terminated record with the same bytes; consumes only
// what it could answer (back-pressure leaves the rest for later).
class EchoProtocol final : public Protocol {
 public:
  void on_connected(Outbound& out, std::int64_t) noexcept override { out_ = &out; }
  std::size_t on_data(const char* data, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (used < n) {
      const void* nl = std::memchr(data + used, '\n', n - used);
      if (nl == nullptr) break;
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - (data + used)) + 1;
      char* p = out_->claim(len);
      if (p == nullptr) break;
      std::memcpy(p, data + used, len);
      out_->commit(len);
      used += len;
      ++records;
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override { return 0; }
  void on_disconnected(const char* why, std::int64_t) noexcept override {
    reason = why;
    out_ = nullptr;
  }
  std::uint64_t records = 0;
  std::string reason;

 private:
  Outbound* out_ = nullptr;
};

// Hands out echo protocols and remembers how each connection ended.
class EchoFactory final : public ProtocolFactory {
 public:
  Protocol* open(int) noexcept override {
    std::lock_guard<std::mutex> g(mu);
    ++opened;
    return new EchoProtocol();
  }
  void release(Protocol* p) noexcept override {
    std::lock_guard<std::mutex> g(mu);
    auto* e = static_cast<EchoProtocol*>(p);
    ++reasons[e->reason];
    ++released;
    records += e->records;
    delete e;
  }
  int released_count() {
    std::lock_guard<std::mutex> g(mu);
    return released;
  }
  int reason_count(const std::string& r) {
    std::lock_guard<std::mutex> g(mu);
    return reasons[r];
  }
  std::mutex mu;
  int opened = 0;
  int released = 0;
  std::uint64_t records = 0;  // echoed by the released protocols
  std::map<std::string, int> reasons;
};

// Concatenation that sidesteps g++ 12's false -Wrestrict on "lit" + std::string.
inline void append_one(std::string& s, const std::string& v) { s.append(v); }
inline void append_one(std::string& s, const char* v) { s.append(v); }
inline void append_one(std::string& s, int v) { s.append(std::to_string(v)); }
template <class... A>
std::string cat(const A&... a) {
  std::string s;
  (append_one(s, a), ...);
  return s;
}

// Sends numbered records one at a time, each after the previous reply, then
// closes. Checks every reply is the record it sent. Records are padded with
// '.' to `record_size` bytes (newline included) when they are shorter.
class Pinger final : public Protocol {
 public:
  Pinger(int id, int count, std::size_t record_size = 0) : id_(id), count_(count), record_size_(record_size) {}
  void on_connected(Outbound& out, std::int64_t) noexcept override {
    out_ = &out;
    send_next();
  }
  std::size_t on_data(const char* d, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (const void* nl = std::memchr(d + used, '\n', n - used)) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - (d + used)) + 1;
      if (std::string_view(d + used, len) == expected_)
        ++answered;
      else
        ++wrong;
      used += len;
      if (answered + wrong == count_)
        out_->close("done", true);
      else
        send_next();
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override {
    ++timer_turns;
    return 0;
  }
  void on_disconnected(const char* why, std::int64_t) noexcept override { reason = why; }

  int answered = 0, wrong = 0;
  std::uint64_t timer_turns = 0;
  std::string reason;

 private:
  void send_next() {
    expected_ = cat("s", id_, "-", answered + wrong);
    if (expected_.size() + 1 < record_size_) expected_.append(record_size_ - 1 - expected_.size(), '.');
    expected_.push_back('\n');
    char* p = out_->claim(expected_.size());
    if (p == nullptr) return;
    std::memcpy(p, expected_.data(), expected_.size());
    out_->commit(expected_.size());
  }
  int id_, count_;
  std::size_t record_size_;
  Outbound* out_ = nullptr;
  std::string expected_;
};

// A Pinger for each connection, kept for the checks.
class PingerFactory final : public ProtocolFactory {
 public:
  explicit PingerFactory(int count, std::size_t record_size = 0) : count_(count), record_size_(record_size) {}
  Protocol* open(int id) noexcept override {
    all.push_back(std::make_unique<Pinger>(id, count_, record_size_));
    return all.back().get();
  }
  void release(Protocol*) noexcept override { ++released; }
  std::vector<std::unique_ptr<Pinger>> all;
  int released = 0;

 private:
  int count_;
  std::size_t record_size_;
};

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
