// A FIX counterparty over real TCP for tests of a running acceptor: a
// blocking client that writes the scripted Peer's messages and reads whole
// frames back (Kite's codec on both sides).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kite/codec/framer.hpp"
#include "support/session_testing.hpp"

namespace kite::test {

using session::test::decode_all;
using session::test::Peer;
using session::test::Sent;

// A counterparty: a blocking TCP client that writes Peer's messages and reads
// whole frames back.
class Counterparty {
 public:
  // `from`: the local address to connect from (any 127.x.y.z is loopback);
  // empty: the kernel's choice.
  Counterparty(const session::Clock& clock, std::string comp_id, std::uint16_t port, const char* from = nullptr)
      : peer(clock, "FIX.4.4", comp_id, "KITE") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (from != nullptr) {
      sockaddr_in l{};
      l.sin_family = AF_INET;
      ::inet_pton(AF_INET, from, &l.sin_addr);
      bound = ::bind(fd_, reinterpret_cast<sockaddr*>(&l), sizeof l) == 0;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Counterparty() { ::close(fd_); }
  int fd() const noexcept { return fd_; }
  void send(const std::string& m) { ASSERT_EQ(::write(fd_, m.data(), m.size()), static_cast<ssize_t>(m.size())); }
  // Reads until `n` messages arrived, the peer closed, or 3 s passed.
  std::vector<Sent> read(std::size_t n) {
    std::vector<Sent> got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char b[8192];
      const ssize_t k = ::read(fd_, b, sizeof b);
      if (k <= 0) {
        closed = true;
        break;
      }
      buf_.append(b, static_cast<std::size_t>(k));
      // Whole frames only.
      std::size_t used = 0;
      for (;;) {
        const codec::FrameResult fr = codec::frame(std::string_view(buf_).substr(used));
        if (fr.status != codec::FrameStatus::complete) break;
        for (auto& s : decode_all(std::string_view(buf_).substr(used, fr.size))) got.push_back(std::move(s));
        used += fr.size;
      }
      buf_.erase(0, used);
    }
    return got;
  }
  // Whether the acceptor closed the connection within 3 s.
  bool wait_closed() {
    read(1000000);
    return closed;
  }
  Peer peer;
  bool bound = true;
  bool connected = false;
  bool closed = false;

 private:
  int fd_ = -1;
  std::string buf_;
};

}  // namespace kite::test
