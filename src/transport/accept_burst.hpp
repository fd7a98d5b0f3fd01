// The drivers' accept step, shared by the kernel and tls drivers.
#pragma once

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

}  // namespace kite::transport
