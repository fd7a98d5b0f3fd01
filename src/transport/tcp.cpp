#include "kite/transport/tcp.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string_view>

#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif

namespace kite::transport {
namespace {

bool set_int(int fd, int level, int opt, int v) noexcept { return ::setsockopt(fd, level, opt, &v, sizeof v) == 0; }

bool resolve(const std::string& address, std::uint16_t port, sockaddr_in& sa, std::string& error) {
  std::memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  const std::string host = address.empty() ? "0.0.0.0" : address;
  if (::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    error = "cannot resolve address '" + host + "'";
    return false;
  }
  sa.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return true;
}

std::string endpoint(const std::string& address, std::uint16_t port) {
  return (address.empty() ? std::string("0.0.0.0") : address) + ":" + std::to_string(port);
}

}  // namespace

std::string OptionReport::describe() const {
  std::string s;
  s += nodelay ? "nodelay" : "no-nodelay";
  s += quickack ? " quickack" : " no-quickack";
  if (busy_poll) {
    s += " busy_poll=" + std::to_string(busy_poll_usecs_read_back) + "us";
  } else if (busy_poll_errno) {
    s += std::string(" busy_poll=refused(") + ::strerrorname_np(busy_poll_errno) + ")";
  }
  if (prefer_busy_poll) {
    s += " prefer_busy_poll";
  } else if (prefer_busy_poll_errno) {
    s += std::string(" prefer_busy_poll=refused(") + ::strerrorname_np(prefer_busy_poll_errno) + ")";
  }
  return s;
}

OptionReport apply_options(int fd, const SocketOptions& o) noexcept {
  OptionReport r;
  if (o.nodelay) r.nodelay = set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
  if (o.quickack) r.quickack = set_int(fd, IPPROTO_TCP, TCP_QUICKACK, 1);
  if (o.rcvbuf > 0) set_int(fd, SOL_SOCKET, SO_RCVBUF, o.rcvbuf);
  if (o.sndbuf > 0) set_int(fd, SOL_SOCKET, SO_SNDBUF, o.sndbuf);
  if (o.busy_poll_usecs > 0) {
    r.busy_poll = set_int(fd, SOL_SOCKET, SO_BUSY_POLL, o.busy_poll_usecs);
    if (!r.busy_poll) {
      r.busy_poll_errno = errno;
    } else {
      int v = 0;
      socklen_t len = sizeof v;
      if (::getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, &len) == 0) r.busy_poll_usecs_read_back = v;
    }
  }
  if (o.prefer_busy_poll) {
    r.prefer_busy_poll = set_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, 1);
    if (!r.prefer_busy_poll) r.prefer_busy_poll_errno = errno;
  }
  return r;
}

ListenResult listen_tcp(const std::string& address, std::uint16_t port, bool reuseport, int backlog) {
  ListenResult r;
  sockaddr_in sa;
  if (!resolve(address, port, sa, r.error)) return r;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    r.error = std::string("socket: ") + std::strerror(errno);
    return r;
  }
  set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
  if (reuseport && !set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1)) {
    r.error = endpoint(address, port) + ": SO_REUSEPORT refused: " + std::strerror(errno);
    ::close(fd);
    return r;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    const int e = errno;
    r.error =
        endpoint(address, port) + (e == EADDRINUSE ? ": port in use" : std::string(": bind: ") + std::strerror(e));
    ::close(fd);
    return r;
  }
  if (::listen(fd, backlog) != 0) {
    r.error = endpoint(address, port) + ": listen: " + std::strerror(errno);
    ::close(fd);
    return r;
  }
  r.fd = fd;
  r.port = local_port(fd);
  return r;
}

int accept_nonblocking(int listen_fd) noexcept {
  return ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

ConnectResult connect_tcp(const std::string& address, std::uint16_t port, int timeout_ms) {
  ConnectResult r;
  sockaddr_in sa;
  if (!resolve(address, port, sa, r.error)) return r;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    r.error = std::string("socket: ") + std::strerror(errno);
    return r;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    if (errno != EINPROGRESS) {
      r.error = "connect " + endpoint(address, port) + ": " + std::strerror(errno);
      ::close(fd);
      return r;
    }
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (n <= 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
      r.error =
          "connect " + endpoint(address, port) + ": " + (n == 0 ? "timed out" : std::strerror(soerr ? soerr : errno));
      ::close(fd);
      return r;
    }
  }
  r.fd = fd;
  return r;
}

namespace {

// The C library's own symbol? (Not one an LD_PRELOAD stack such as Onload or
// VMA, or the program itself, puts in front of it.)
bool from_libc(const char* name) noexcept {
  void* const f = ::dlsym(RTLD_DEFAULT, name);
  Dl_info info{};
  if (f == nullptr || ::dladdr(f, &info) == 0 || info.dli_fname == nullptr) return false;
  const std::string_view file(info.dli_fname);
  const std::size_t slash = file.rfind('/');
  return file.substr(slash == std::string_view::npos ? 0 : slash + 1).starts_with("libc.so");
}

// Decided once, when the library loads: libc's recv and send are cancellation
// points whose bookkeeping (two atomic updates a call) Kite's threads, never
// cancelled, do not need.
const bool g_direct = from_libc("recv") && from_libc("send");

}  // namespace

bool socket_calls_direct() noexcept { return g_direct; }

[[gnu::hot]] IoResult read_some(int fd, char* p, std::size_t n) noexcept {
  const ssize_t got =
      g_direct ? ::syscall(SYS_recvfrom, fd, p, n, MSG_DONTWAIT, nullptr, nullptr) : ::recv(fd, p, n, MSG_DONTWAIT);
  if (got > 0) return {Io::ok, static_cast<std::size_t>(got), 0};
  if (got == 0) return {Io::closed, 0, 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {Io::retry, 0, 0};
  return {Io::error, 0, errno};
}

[[gnu::hot]] IoResult write_some(int fd, const char* p, std::size_t n) noexcept {
  constexpr int kFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
  const ssize_t put = g_direct ? ::syscall(SYS_sendto, fd, p, n, kFlags, nullptr, 0) : ::send(fd, p, n, kFlags);
  if (put >= 0) return {put > 0 ? Io::ok : Io::retry, static_cast<std::size_t>(put), 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {Io::retry, 0, 0};
  return {Io::error, 0, errno};
}

void quickack(int fd) noexcept { set_int(fd, IPPROTO_TCP, TCP_QUICKACK, 1); }

std::uint16_t local_port(int fd) noexcept {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return 0;
  return ntohs(sa.sin_port);
}

}  // namespace kite::transport
