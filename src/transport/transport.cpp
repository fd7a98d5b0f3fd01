#include "kite/transport/transport.hpp"

#ifdef KITE_HAVE_URING
#include <liburing.h>
#endif

namespace kite::transport {

const char* to_string(Kind k) noexcept {
  switch (k) {
    case Kind::kernel: return "kernel";
    case Kind::uring: return "uring";
    case Kind::onload: return "onload";
    case Kind::vma: return "vma";
    case Kind::tcpdirect: return "tcpdirect";
    case Kind::socketxtreme: return "socketxtreme";
    case Kind::tls: return "tls";
  }
  return "?";
}

bool parse_kind(std::string_view s, Kind& out) noexcept {
  for (Kind k : {Kind::kernel, Kind::uring, Kind::onload, Kind::vma, Kind::tcpdirect, Kind::socketxtreme, Kind::tls}) {
    if (s == to_string(k)) {
      out = k;
      return true;
    }
  }
  return false;
}

bool compiled_in(Kind k) noexcept {
  switch (k) {
    case Kind::kernel:
    case Kind::onload:
    case Kind::vma: return true;
    case Kind::uring:
#ifdef KITE_HAVE_URING
      return true;
#else
      return false;
#endif
    case Kind::tcpdirect:
#ifdef KITE_HAVE_TCPDIRECT
      return true;
#else
      return false;
#endif
    case Kind::socketxtreme:
#ifdef KITE_HAVE_SOCKETXTREME
      return true;
#else
      return false;
#endif
    case Kind::tls:
#ifdef KITE_HAVE_TLS
      return true;
#else
      return false;
#endif
  }
  return false;
}

bool uring_available(const char** why) noexcept {
#ifdef KITE_HAVE_URING
  io_uring ring;
  const int rc = io_uring_queue_init(8, &ring, 0);
  if (rc < 0) {
    if (why) *why = "io_uring_queue_init failed (kernel without io_uring, or io_uring_disabled / seccomp)";
    return false;
  }
  io_uring_queue_exit(&ring);
  return true;
#else
  if (why) *why = "built with KITE_WITH_URING=OFF";
  return false;
#endif
}

}  // namespace kite::transport
