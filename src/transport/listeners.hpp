// Listeners as the kernel and tls drivers hold them: in an epoll set under
// a tag, and accepted a bounded burst at a time.
#pragma once

#include <sys/epoll.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "kite/transport/driver.hpp"
#include "kite/transport/tcp.hpp"

namespace kite::transport {

// Accepts up to `most` pending connections on listen_fd, each handed to the
// sink as it comes (a bound per poll, so that a connection storm cannot
// starve the sessions already served). Returns how many.
inline int accept_burst(int listen_fd, int most, Sink& sink) noexcept {
  int n = 0;
  for (; n < most; ++n) {
    const int fd = accept_nonblocking(listen_fd);
    if (fd < 0) break;
    sink.on_accepted(fd);
  }
  return n;
}

// An epoll event whose data has this bit holds a listener's fd in its low 32
// bits; any other holds a Conn*.
constexpr std::uint64_t kListenerTag = 1ull << 63;

inline bool is_listener(const epoll_event& ev) noexcept { return (ev.data.u64 & kListenerTag) != 0; }
inline int listener_fd(const epoll_event& ev) noexcept { return static_cast<int>(ev.data.u64 & 0xffffffffu); }

// Adds a listening socket to the epoll set `ep` under the tag.
inline bool epoll_add_listener(int ep, int fd, std::string& error) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerTag | static_cast<std::uint32_t>(fd);
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
    error = std::string("epoll_ctl(listener): ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace kite::transport
