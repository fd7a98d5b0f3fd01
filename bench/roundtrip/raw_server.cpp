#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>

#include "kite/bench/acceptor_file.hpp"
#include "kite/bench/thread.hpp"
#include "kite/codec/codec.hpp"
#include "messages.hpp"
#include "server.hpp"

namespace kite::bench {

bool write_ready_file(const std::string& path, int port) {
  return path.empty() || write_file_atomically(path, std::to_string(port) + "\n");
}

int listen_tcp(const std::string& bind, int& port, bool reuse_port, std::string& error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, bind.c_str(), &a.sin_addr) != 1) {
    error = "bad bind address " + bind;
    ::close(fd);
    return -1;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1024) != 0) {
    error = "cannot listen on " + bind + ":" + std::to_string(port) + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

void print_server_load(const char* thread, std::uint64_t polls, std::uint64_t empty_polls, double busy_s,
                       double total_s, std::uint64_t orders) {
  std::fprintf(stderr, "server load: %s polls=%llu empty=%.1f%% busy=%.1f%% busy/order=%.2f us orders=%llu\n", thread,
               static_cast<unsigned long long>(polls),
               polls ? 100.0 * static_cast<double>(empty_polls) / static_cast<double>(polls) : 0.0,
               total_s > 0 ? 100.0 * busy_s / total_s : 0.0, orders ? busy_s * 1e6 / static_cast<double>(orders) : 0.0,
               static_cast<unsigned long long>(orders));
}

std::int64_t LoopLoad::mono_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void LoopLoad::start() noexcept {
  mono0_ = mono_ns();
  tsc0_ = last_ = ticks();
}

void LoopLoad::report(const char* thread, std::uint64_t orders) const {
  const double total_s = static_cast<double>(mono_ns() - mono0_) * 1e-9;
  const std::uint64_t total_ticks = ticks() - tsc0_;
  const double s_per_tick = total_ticks ? total_s / static_cast<double>(total_ticks) : 0.0;
  print_server_load(thread, polls_, empty_, static_cast<double>(busy_) * s_per_tick, total_s, orders);
}

namespace {

constexpr std::size_t kRx = 256 * 1024;
constexpr std::size_t kTx = 1024 * 1024;

// The replies, rendered once, of the cpp flavour's size: its session's
// millisecond timestamps, a 7-digit MsgSeqNum and 16-digit IDs (kite-acceptor's
// IDs count from the start time in microseconds).
struct Canned {
  std::string logon, logout, exec_report;
  Canned() {
    codec::HeaderTemplate h(codec::HeaderFields{"FIX.4.4", std::string(kServerCompID), "BENCH0", {}, {}, {}, {}});
    codec::MessageWriter w(h);
    char buf[1024];
    const std::int64_t now = codec::utc_now_ns();
    logon.assign(buf, write_logon(w, buf, sizeof buf, 1, now));
    logout.assign(buf, write_logout(w, buf, sizeof buf, 2, now));
    const OrderEcho echo{"C000000000001", "KITE.XPAR", '1', "100", "101.25"};
    constexpr std::uint64_t id = 1'000'000'000'000'000;
    exec_report.assign(buf, write_execution_report(w, buf, sizeof buf, 1000000, now, echo, id, id));
  }
};

void tune_socket(int fd, int busy_poll) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (busy_poll > 0) ::setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &busy_poll, sizeof busy_poll);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

struct Conn {
  explicit Conn(int f) : fd(f), rx(new char[kRx]), tx(new char[kTx]) {}
  ~Conn() { ::close(fd); }
  int fd;
  std::unique_ptr<char[]> rx, tx;
  std::size_t rx_len = 0, tx_head = 0, tx_tail = 0;
  bool closing = false;
};

// Pushes the unsent bytes; false when the connection is dead.
bool flush(Conn& c) {
  while (c.tx_head < c.tx_tail) {
    const ssize_t n = ::send(c.fd, c.tx.get() + c.tx_head, c.tx_tail - c.tx_head, MSG_NOSIGNAL);
    if (n > 0) {
      c.tx_head += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return true;
    } else {
      return false;
    }
  }
  c.tx_head = c.tx_tail = 0;
  return !c.closing;
}

void append(Conn& c, const std::string& m) {
  if (c.tx_tail + m.size() > kTx) {
    std::memmove(c.tx.get(), c.tx.get() + c.tx_head, c.tx_tail - c.tx_head);
    c.tx_tail -= c.tx_head;
    c.tx_head = 0;
    if (c.tx_tail + m.size() > kTx) return;  // the peer does not read: drop (it will count errors)
  }
  std::memcpy(c.tx.get() + c.tx_tail, m.data(), m.size());
  c.tx_tail += m.size();
}

// Reads what is there and answers each complete frame. The only look at the
// bytes: where a frame ends ("<SOH>10=ddd<SOH>") and its MsgType's first
// character. False when the connection is done.
bool serve_readable(Conn& c, const Canned& canned, std::uint64_t& orders) {
  while (true) {
    const ssize_t n = ::recv(c.fd, c.rx.get() + c.rx_len, kRx - c.rx_len, 0);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    c.rx_len += static_cast<std::size_t>(n);
    const char* p = c.rx.get();
    std::size_t at = 0;
    while (true) {
      const char* begin = p + at;
      const std::size_t left = c.rx_len - at;
      const void* t = ::memmem(begin, left, "\00110=", 4);
      if (t == nullptr) break;
      const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(t) - begin) + 8;
      if (end > left) break;
      const char* soh1 = static_cast<const char*>(std::memchr(begin, codec::kSoh, end));
      const char* soh2 =
          soh1 ? static_cast<const char*>(std::memchr(soh1 + 1, codec::kSoh, end - (soh1 + 1 - begin))) : nullptr;
      const char type = soh2 != nullptr && soh2 + 4 < begin + end ? soh2[4] : '?';
      switch (type) {
        case 'A': append(c, canned.logon); break;
        case '5':
          append(c, canned.logout);
          c.closing = true;
          break;
        case '0':
        case '1': break;
        default:
          append(c, canned.exec_report);
          ++orders;
          break;
      }
      at += end;
    }
    if (at > 0) {
      std::memmove(c.rx.get(), c.rx.get() + at, c.rx_len - at);
      c.rx_len -= at;
    }
    if (c.rx_len == kRx) return false;
    if (static_cast<std::size_t>(n) < kRx / 2) break;
  }
  return flush(c);
}

// single: one connection at a time, read directly (no readiness call).
void single_loop(const ServerOptions& o, int listener, const std::atomic<bool>& stop, const Canned& canned,
                 std::atomic<unsigned>& up) {
  name_this_thread("kite-single");
  pin_this_thread(o.cores.empty() ? -1 : o.cores[0]);
  up.fetch_add(1);
  while (!stop.load(std::memory_order_relaxed)) {
    pollfd pl{listener, POLLIN, 0};
    if (::poll(&pl, 1, 100) <= 0) continue;
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    tune_socket(fd, o.busy_poll_usecs);
    Conn c(fd);
    std::uint64_t orders = 0;
    LoopLoad load;
    load.start();
    while (!stop.load(std::memory_order_relaxed)) {
      if (!o.spin) {
        pollfd pf{fd, POLLIN, 0};
        if (::poll(&pf, 1, 100) <= 0) continue;
      }
      const std::uint64_t before = orders;
      if (!serve_readable(c, canned, orders)) break;
      if (c.tx_head < c.tx_tail && !flush(c)) break;
      load.pass(orders != before);
    }
    load.report("kite-single", orders);
  }
}

// The duty cycle of mono, shard and pool workers: one epoll set.
class EpollWorker {
 public:
  EpollWorker(const ServerOptions& o, const Canned& canned, int listener)
      : o_(o), canned_(canned), listener_(listener), ep_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (listener_ >= 0) add(listener_, kListener);
  }
  ~EpollWorker() { ::close(ep_); }

  // From the coordinator (pool): a new connection for this worker.
  void hand_over(int fd) {
    std::lock_guard<std::mutex> g(mu_);
    inbox_.push_back(fd);
    has_inbox_.store(true, std::memory_order_release);
    load_.fetch_add(1, std::memory_order_relaxed);
  }
  unsigned load() const noexcept { return load_.load(std::memory_order_relaxed); }

  void run(const char* name, int core, const std::atomic<bool>& stop, std::atomic<unsigned>& up) {
    name_this_thread(name);
    pin_this_thread(core);
    up.fetch_add(1);
    epoll_event ev[64];
    std::uint64_t orders = 0;
    LoopLoad load;
    load.start();
    while (!stop.load(std::memory_order_relaxed)) {
      if (has_inbox_.load(std::memory_order_acquire)) take_inbox();
      const int n = ::epoll_wait(ep_, ev, 64, o_.spin ? 0 : 100);
      for (int i = 0; i < n; ++i) {
        const std::uint32_t id = ev[i].data.u32;
        if (id == kListener) {
          accept_all();
          continue;
        }
        Conn* c = conns_[id].get();
        if (c == nullptr) continue;
        if (!serve_readable(*c, canned_, orders)) drop(id);
      }
      for (std::size_t id = 0; id < conns_.size(); ++id)
        if (conns_[id] && conns_[id]->tx_head < conns_[id]->tx_tail && !flush(*conns_[id])) drop(id);
      load.pass(n > 0);
    }
    load.report(name, orders);
  }

 private:
  static constexpr std::uint32_t kListener = 0xFFFFFFFFu;

  void add(int fd, std::uint32_t id) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u32 = id;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &e);
  }
  void adopt(int fd) {
    tune_socket(fd, o_.busy_poll_usecs);
    std::size_t id = 0;
    while (id < conns_.size() && conns_[id]) ++id;
    if (id == conns_.size()) conns_.emplace_back();
    conns_[id] = std::make_unique<Conn>(fd);
    add(fd, static_cast<std::uint32_t>(id));
  }
  void accept_all() {
    while (true) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      adopt(fd);
    }
  }
  void take_inbox() {
    std::vector<int> fds;
    {
      std::lock_guard<std::mutex> g(mu_);
      fds.swap(inbox_);
      has_inbox_.store(false, std::memory_order_relaxed);
    }
    for (int fd : fds) adopt(fd);
  }
  void drop(std::size_t id) {
    ::epoll_ctl(ep_, EPOLL_CTL_DEL, conns_[id]->fd, nullptr);
    conns_[id].reset();
    if (listener_ < 0) load_.fetch_sub(1, std::memory_order_relaxed);
  }

  const ServerOptions& o_;
  const Canned& canned_;
  int listener_;
  int ep_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::mutex mu_;
  std::vector<int> inbox_;
  std::atomic<bool> has_inbox_{false};
  std::atomic<unsigned> load_{0};
};

int core_at(const std::vector<int>& cores, std::size_t i) { return cores.empty() ? -1 : cores[i % cores.size()]; }

}  // namespace

int run_raw_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error) {
  const Canned canned;
  int port = o.port;
  const bool shard = o.model == "shard";
  const unsigned k = std::max(1u, o.workers);
  std::vector<int> listeners;
  listeners.push_back(listen_tcp(o.bind, port, shard, error));
  if (listeners[0] < 0) return 1;
  if (shard)
    for (unsigned i = 1; i < k; ++i) {
      listeners.push_back(listen_tcp(o.bind, port, true, error));
      if (listeners.back() < 0) return 1;
    }
  std::vector<std::unique_ptr<EpollWorker>> workers;
  std::vector<std::thread> threads;
  std::atomic<unsigned> up{0};  // threads named and pinned
  if (o.model == "single") {
    threads.emplace_back([&] { single_loop(o, listeners[0], stop, canned, up); });
  } else if (o.model == "mono") {
    workers.push_back(std::make_unique<EpollWorker>(o, canned, listeners[0]));
    threads.emplace_back([&, w = workers[0].get()] { w->run("kite-mono", core_at(o.cores, 0), stop, up); });
  } else if (shard) {
    for (unsigned i = 0; i < k; ++i) workers.push_back(std::make_unique<EpollWorker>(o, canned, listeners[i]));
    for (unsigned i = 0; i < k; ++i) {
      threads.emplace_back(
          [&, i, n = "kite-shard-" + std::to_string(i)] { workers[i]->run(n.c_str(), core_at(o.cores, i), stop, up); });
    }
  } else {  // pool: the front door accepts and hands each session to the least loaded worker
    for (unsigned i = 0; i < k; ++i) workers.push_back(std::make_unique<EpollWorker>(o, canned, -1));
    for (unsigned i = 0; i < k; ++i) {
      threads.emplace_back(
          [&, i, n = "kite-pool-" + std::to_string(i)] { workers[i]->run(n.c_str(), core_at(o.cores, i), stop, up); });
    }
    const unsigned room = (std::max(1u, o.sessions) + k - 1) / k;
    threads.emplace_back([&, room] {
      name_this_thread("kite-front");
      pin_this_thread(o.coordinator_core);
      up.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
        pollfd pl{listeners[0], POLLIN, 0};
        if (::poll(&pl, 1, 100) <= 0) continue;
        EpollWorker* best = nullptr;
        for (auto& w : workers)
          if (w->load() < room && (best == nullptr || w->load() < best->load())) best = w.get();
        if (best == nullptr) {  // every worker full: wait for room rather than refuse
          ::usleep(1000);
          continue;
        }
        const int fd = ::accept4(listeners[0], nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) best->hand_over(fd);
      }
    });
  }
  // Ready once every thread runs named and pinned (the audit may start at once);
  // connections wait in the listeners' backlog meanwhile.
  while (up.load() < threads.size()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!write_ready_file(o.ready_file, port)) {
    error = "cannot write the ready file " + o.ready_file;
    const_cast<std::atomic<bool>&>(stop).store(true);
  }
  for (auto& t : threads) t.join();
  for (int fd : listeners) ::close(fd);
  return error.empty() ? 0 : 1;
}

}  // namespace kite::bench
