// DirectDriver and EpollDriver: kernel sockets.
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "kite/transport/driver.hpp"
#include "listeners.hpp"

namespace kite::transport {
namespace {

// The driver's landing buffer: a connection whose rx is empty (nearly
// always) reads into it, so a thread's connections share its first lines
// instead of each bringing its own into the cache. Its bytes reach the sink
// outside c.rx (Sink::on_data with p), which keeps what they leave unconsumed.
constexpr std::size_t kLandingBytes = 64 * 1024;

// Reads c until EAGAIN, a full buffer or the per-poll bound; hands each read
// to the sink. Returns reads that brought bytes.
[[gnu::hot]] int read_conn(Conn& c, Sink& sink, const DriverConfig& cfg, bool pause_when_full, char* landing) noexcept {
  int n = 0;
  for (int i = 0; i < cfg.max_reads_per_conn && c.watching; ++i) {
    if (c.rx.empty()) {
      const std::size_t room = std::min(kLandingBytes, c.rx.capacity());
      const IoResult r = read_some(c.fd, landing, room);
      if (r.status == Io::ok) {
        if (cfg.socket.quickack) quickack(c.fd);
        ++n;
        sink.on_data(c, landing, r.bytes);
        if (r.bytes < room) break;  // drained (see below)
        continue;
      }
      if (r.status == Io::retry) break;
      c.watching = false;
      sink.on_closed(c, r.status, r.err);
      break;
    }
    // Keep at least a quarter of the buffer free for the next read; moving a
    // partial frame to the front is the only copy and happens rarely.
    c.rx.make_room(c.rx.capacity() / 4);
    if (c.rx.write_room() == 0) {  // the protocol is behind: TCP pushes back on the peer
      c.recv_paused = pause_when_full;
      break;
    }
    const std::size_t room = c.rx.write_room();
    const IoResult r = read_some(c.fd, c.rx.write_ptr(), room);
    if (r.status == Io::ok) {
      c.rx.produced(r.bytes);
      if (cfg.socket.quickack) quickack(c.fd);
      ++n;
      sink.on_data(c, nullptr, r.bytes);
      // A short read drained the socket (almost always): another recv would
      // be an EAGAIN syscall per message. Level-triggered epoll, or the next
      // direct pass, brings anything that arrived since.
      if (r.bytes < room) break;
      continue;
    }
    if (r.status == Io::retry) break;
    c.watching = false;
    sink.on_closed(c, r.status, r.err);
    break;
  }
  return n;
}

[[gnu::hot]] Io write_conn(Conn& c) noexcept {
  while (!c.tx.empty()) {
    const IoResult r = write_some(c.fd, c.tx.data(), c.tx.size());
    if (r.status == Io::ok) {
      c.tx.consume(r.bytes);
      c.bytes_sent += r.bytes;
      continue;
    }
    if (r.status == Io::retry) {
      c.write_blocked = true;
      return Io::retry;
    }
    return Io::error;
  }
  c.write_blocked = false;
  return Io::ok;
}

class DirectDriver final : public Driver {
 public:
  explicit DirectDriver(const DriverConfig& c) : cfg_(c) {}
  const char* name() const noexcept override { return "direct"; }

  bool listen(int fd, std::string&) override {
    listeners_.push_back(fd);
    return true;
  }
  bool add(Conn& c, std::string&) override {
    last_options_ = apply_options(c.fd, cfg_.socket);
    c.watching = true;
    c.write_blocked = false;
    conns_.push_back(&c);
    return true;
  }
  Io flush(Conn& c) noexcept override { return write_conn(c); }
  void remove(Conn& c) noexcept override {
    for (auto& p : conns_) {
      if (p == &c) p = nullptr;
    }
    dirty_ = true;
    c.watching = false;
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
  }

  int poll(Sink& sink, int timeout_us) noexcept override {
    if (timeout_us > 0) wait(timeout_us);
    int events = 0;
    for (const int lfd : listeners_) {
      events += accept_burst(lfd, 4, sink);
    }
    const std::size_t n = conns_.size();
    for (std::size_t i = 0; i < n; ++i) {
      Conn* c = conns_[i];
      if (c == nullptr) continue;
      if (c->write_blocked && write_conn(*c) == Io::ok) ++events;
      if (conns_[i] != nullptr) events += read_conn(*c, sink, cfg_, false, landing_.get());
    }
    if (dirty_) {
      std::erase(conns_, nullptr);
      dirty_ = false;
    }
    return events;
  }

 private:
  // Only for the block idle strategy: the hot path never gets here.
  void wait(int timeout_us) noexcept {
    pollfd fds[16];
    nfds_t k = 0;
    for (const int lfd : listeners_) {
      if (k < 16) fds[k++] = {lfd, POLLIN, 0};
    }
    for (Conn* c : conns_) {
      if (c != nullptr && k < 16) fds[k++] = {c->fd, static_cast<short>(POLLIN | (c->write_blocked ? POLLOUT : 0)), 0};
    }
    ::poll(fds, k, (timeout_us + 999) / 1000);
  }

  DriverConfig cfg_;
  std::vector<int> listeners_;
  std::vector<Conn*> conns_;
  bool dirty_ = false;
  std::unique_ptr<char[]> landing_{new char[kLandingBytes]};
};

class EpollDriver final : public Driver {
 public:
  EpollDriver(const DriverConfig& c, int ep) : cfg_(c), ep_(ep), events_(static_cast<std::size_t>(c.max_events)) {}
  ~EpollDriver() override { ::close(ep_); }
  const char* name() const noexcept override { return "epoll"; }

  bool listen(int fd, std::string& error) override { return epoll_add_listener(ep_, fd, error); }
  bool add(Conn& c, std::string& error) override {
    last_options_ = apply_options(c.fd, cfg_.socket);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = &c;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
      error = std::string("epoll_ctl(add): ") + std::strerror(errno);
      return false;
    }
    c.watching = true;
    c.write_blocked = false;
    c.recv_paused = false;
    return true;
  }
  [[gnu::hot]] Io flush(Conn& c) noexcept override {
    const bool was = c.write_blocked;
    const Io r = write_conn(c);
    if (was != c.write_blocked && c.fd >= 0) update(c);
    return r;
  }
  void remove(Conn& c) noexcept override {
    if (c.fd >= 0) {
      ::epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
      ::close(c.fd);
    }
    c.fd = -1;
    c.watching = false;
  }

  [[gnu::hot]] int poll(Sink& sink, int timeout_us) noexcept override {
    const int timeout_ms = timeout_us > 0 ? (timeout_us + 999) / 1000 : 0;
    const int n = ::epoll_wait(ep_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
    int work = 0;
    for (int i = 0; i < n; ++i) {
      const epoll_event& ev = events_[static_cast<std::size_t>(i)];
      if (is_listener(ev)) {
        work += accept_burst(listener_fd(ev), 16, sink);
        continue;
      }
      Conn& c = *static_cast<Conn*>(ev.data.ptr);
      if (!c.watching) continue;  // removed earlier in this batch
      if ((ev.events & EPOLLOUT) && c.write_blocked) {
        if (flush(c) == Io::ok) ++work;
      }
      if (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        work += read_conn(c, sink, cfg_, true, landing_.get());
        // A full receive buffer: stop watching input (level-triggered epoll
        // would report it on every cycle) until the owner calls resume().
        if (c.recv_paused && c.watching) update(c);
      }
    }
    return work;
  }

 public:
  void resume(Conn& c) noexcept override {
    if (!c.recv_paused || !c.watching) return;
    c.rx.make_room(c.rx.capacity() / 4);
    if (c.rx.write_room() == 0) return;
    c.recv_paused = false;
    update(c);
  }

 private:
  void update(Conn& c) noexcept {
    epoll_event ev{};
    ev.events = (c.recv_paused ? 0u : static_cast<unsigned>(EPOLLIN | EPOLLRDHUP)) | (c.write_blocked ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
  }

  DriverConfig cfg_;
  int ep_;
  std::vector<epoll_event> events_;
  std::unique_ptr<char[]> landing_{new char[kLandingBytes]};
};

}  // namespace

void Driver::discard(int fd) noexcept { ::close(fd); }

std::unique_ptr<Driver> make_direct_driver(const DriverConfig& c) { return std::make_unique<DirectDriver>(c); }

std::unique_ptr<Driver> make_epoll_driver(const DriverConfig& c, std::string& error) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    error = std::string("epoll_create1: ") + std::strerror(errno);
    return nullptr;
  }
  return std::make_unique<EpollDriver>(c, ep);
}

#ifndef KITE_HAVE_URING
std::unique_ptr<Driver> make_uring_driver(const DriverConfig&, std::string& error) {
  error = "io_uring transport not built (KITE_WITH_URING=OFF)";
  return nullptr;
}
#endif

}  // namespace kite::transport
