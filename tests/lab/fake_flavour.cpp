// A test-only flavour server for check-flavour's test: the single model on
// kernel TCP, implementing the flavour contract (docs/flavours.md) just well
// enough to pass (its ExecutionReport is bench/roundtrip/messages.hpp's),
// with `--break WHAT` to break one thing:
//   thread-name     the server thread is named kite-singel
//   no-report       a NewOrderSingle gets no ExecutionReport
//   ignore-sigterm  SIGTERM is ignored
//   unpinned        the server thread is not pinned
//   busy-poll       SO_BUSY_POLL is never set on the session's socket
//   compile-once    a thread "fake-jit" (started before the ready file) spins
//                   for 0.8 s from check-flavour's first settling order
//                   (ClOrdID C000000005000): a JIT compiling what the checks'
//                   cold paths left, past the settling orders
// and `--order-us N` to make it a slow server of known capacity: orders are
// served one after another, N microseconds each, on the wall clock (an
// order's reply is due N us after the previous one's, or after its own
// arrival when the server was idle), so it answers at most 1,000,000 / N
// orders a second however often other work on the machine takes its core:
// replies that fell due meanwhile go out together (the sweep test finds
// its knee there). With `--slow-flag FILE` too, an order costs twice N while
// FILE exists (checked on every order): a host that drifts between a fast
// and a slow state, on a schedule a test controls.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>

#include "kite/codec/encoder.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/header.hpp"
#include "messages.hpp"

namespace {

namespace tag = kite::codec::tag;
using kite::codec::MessageWriter;

std::atomic<bool> g_stop{false};
std::atomic<bool> g_compile{false};  // compile-once: fake-jit's spin is due
extern "C" void on_term(int) { g_stop.store(true); }

struct Options {
  std::string model = "single", transport = "kernel", bind = "127.0.0.1", ready, broken;
  int port = 0, core = -1, busy_poll = 0;
  int order_us = 0;
  std::string slow_flag;
};

// One FIX session on one connection: enough of the session layer for the contract.
class Session {
 public:
  Session(int fd, const Options& o) : fd_(fd), o_(o) {}

  // Reads what is there and answers; false once the connection is done.
  bool serve() {
    release_due();
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    rx_.append(buf, static_cast<std::size_t>(n));
    while (!rx_.empty()) {
      const kite::codec::FrameResult r = kite::codec::frame(rx_);
      if (r.status == kite::codec::FrameStatus::incomplete) break;
      const std::string frame = rx_.substr(0, r.size);
      rx_.erase(0, r.size);
      if (r.status == kite::codec::FrameStatus::invalid) continue;  // garbled: ignored
      if (!on_message(frame)) return false;
    }
    return true;
  }

  void stop() {
    if (logged_on_) send("5", [](MessageWriter& w) { w.add_string(tag::Text, "server stopping"); });
    ::usleep(50000);
  }

 private:
  bool on_message(const std::string& frame) {
    kite::codec::FieldIndex ix(256);
    kite::codec::Header h;
    if (!ix.build(frame) || !kite::codec::read_header(ix, h)) return true;
    const std::string type(h.msg_type);
    if (type == "A") {
      peer_ = std::string(h.sender_comp_id);
      header_ = std::make_unique<kite::codec::HeaderTemplate>(
          kite::codec::HeaderFields{"FIX.4.4", "KITE", peer_, {}, {}, {}, {}});
      writer_ = std::make_unique<MessageWriter>(*header_, kite::codec::TimePrecision::micros);
      expected_ = h.msg_seq_num + 1;
      out_seq_ = 1;
      logged_on_ = true;
      send("A", [](MessageWriter& w) {
        w.add_uint(tag::EncryptMethod, 0);
        w.add_uint(tag::HeartBtInt, 30);
        w.add_char(tag::ResetSeqNumFlag, 'Y');
      });
      return true;
    }
    if (!logged_on_) return false;
    if (h.msg_seq_num > expected_ && type != "5") {
      send("2", [&](MessageWriter& w) {
        w.add_uint(tag::BeginSeqNo, expected_);
        w.add_uint(tag::EndSeqNo, 0);
      });
      return true;
    }
    if (h.msg_seq_num < expected_ && !h.poss_dup) {
      send("5", [](MessageWriter& w) { w.add_string(tag::Text, "MsgSeqNum too low"); });
      return false;
    }
    expected_ = h.msg_seq_num + 1;
    if (type == "0") return true;
    if (type == "1") {
      std::string_view id;
      ix.get(tag::TestReqID, id);
      send("0", [&](MessageWriter& w) { w.add_string(tag::TestReqID, id); });
    } else if (type == "5") {
      send("5", nullptr);
      return false;
    } else if (type == "D") {
      if (o_.broken == "no-report") return true;
      kite::bench::OrderEcho e;
      ix.get(tag::ClOrdID, e.cl_ord_id);
      if (o_.broken == "compile-once" && e.cl_ord_id == "C000000005000") g_compile.store(true);
      ix.get(tag::Symbol, e.symbol);
      std::string_view side;
      ix.get(tag::Side, side);
      if (!side.empty()) e.side = side.front();
      ix.get(tag::OrderQty, e.order_qty);
      ix.get(tag::Price, e.price);
      ++orders_;
      char buf[1024];
      const std::size_t n = kite::bench::write_execution_report(*writer_, buf, sizeof buf, out_seq_++,
                                                                kite::codec::utc_now_ns(), e, orders_, orders_);
      if (o_.order_us > 0) {
        const auto now = std::chrono::steady_clock::now();
        const bool slow = !o_.slow_flag.empty() && ::access(o_.slow_flag.c_str(), F_OK) == 0;
        busy_until_ = std::max(now, busy_until_) + std::chrono::microseconds(o_.order_us * (slow ? 2 : 1));
        due_.emplace_back(busy_until_, std::string(buf, n));
      } else {
        (void)::send(fd_, buf, n, MSG_NOSIGNAL);
      }
    } else {
      send("j", [&](MessageWriter& w) {
        w.add_uint(tag::RefSeqNum, h.msg_seq_num);
        w.add_string(tag::RefMsgType, h.msg_type);
        w.add_uint(tag::BusinessRejectReason, 3);
      });
    }
    return true;
  }

  template <class Body>
  void send(std::string_view type, Body body) {
    char buf[1024];
    writer_->begin(buf, sizeof buf, type, out_seq_++, kite::codec::utc_now_ns());
    if constexpr (!std::is_same_v<Body, std::nullptr_t>) body(*writer_);
    const std::size_t n = writer_->finish();
    (void)::send(fd_, buf, n, MSG_NOSIGNAL);
  }

  // --order-us: sends the replies whose time has come, oldest first.
  void release_due() {
    const auto now = std::chrono::steady_clock::now();
    while (!due_.empty() && due_.front().first <= now) {
      (void)::send(fd_, due_.front().second.data(), due_.front().second.size(), MSG_NOSIGNAL);
      due_.pop_front();
    }
  }

  int fd_;
  const Options& o_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::string>> due_;
  std::chrono::steady_clock::time_point busy_until_{};
  std::string rx_, peer_;
  std::unique_ptr<kite::codec::HeaderTemplate> header_;
  std::unique_ptr<MessageWriter> writer_;
  std::uint64_t expected_ = 1, out_seq_ = 1, orders_ = 0;
  bool logged_on_ = false;

 public:
  std::uint64_t orders() const { return orders_; }
};

void serve(const Options& o, int listener, std::atomic<bool>& up) {
  pthread_setname_np(pthread_self(), o.broken == "thread-name" ? "kite-singel" : "kite-single");
  if (o.core >= 0 && o.broken != "unpinned") {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.core, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  up.store(true);
  std::uint64_t orders = 0, polls = 0;
  while (!g_stop.load()) {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (o.busy_poll > 0 && o.broken != "busy-poll")
      ::setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o.busy_poll, sizeof o.busy_poll);
    Session s(fd, o);
    bool open = true;
    while (open && !g_stop.load()) {  // read directly: no readiness call
      open = s.serve();
      ++polls;
    }
    if (open) s.stop();
    orders += s.orders();
    ::close(fd);
  }
  std::fprintf(stderr, "server load: kite-single polls=%llu empty=0.0%% busy=0.0%% busy/order=0.00 us orders=%llu\n",
               static_cast<unsigned long long>(polls), static_cast<unsigned long long>(orders));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--version") {  // a sitting asks every server binary
    std::printf("lab_fake_flavour (tests/lab)\n");
    return 0;
  }
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model")
      o.model = v;
    else if (k == "--transport")
      o.transport = v;
    else if (k == "--bind")
      o.bind = v;
    else if (k == "--port")
      o.port = std::atoi(v.c_str());
    else if (k == "--cores")
      o.core = std::atoi(v.c_str());  // the first of the list
    else if (k == "--busy-poll-usecs")
      o.busy_poll = std::atoi(v.c_str());
    else if (k == "--ready-file")
      o.ready = v;
    else if (k == "--break")
      o.broken = v;
    else if (k == "--order-us")
      o.order_us = std::atoi(v.c_str());
    else if (k == "--slow-flag")
      o.slow_flag = v;
  }
  if (o.model != "single" || o.transport != "kernel") {
    std::fprintf(stderr, "unsupported: the fake flavour serves single on kernel only\n");
    return 3;
  }
  std::signal(SIGTERM, o.broken == "ignore-sigterm" ? SIG_IGN : on_term);
  std::signal(SIGPIPE, SIG_IGN);
  const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(o.port));
  ::inet_pton(AF_INET, o.bind.c_str(), &a.sin_addr);
  if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 16) != 0) {
    std::perror("fake flavour: listen");
    return 1;
  }
  socklen_t len = sizeof a;
  ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
  std::atomic<bool> up{false};
  std::thread jit;
  if (o.broken == "compile-once")
    jit = std::thread([] {
      pthread_setname_np(pthread_self(), "fake-jit");
      while (!g_stop.load() && !g_compile.load()) ::usleep(5000);
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
      while (!g_stop.load() && std::chrono::steady_clock::now() < end) {}
      while (!g_stop.load()) ::usleep(5000);  // lives on: a thread that exits fails thread-stable
    });
  std::thread t([&] { serve(o, l, up); });
  while (!up.load()) ::usleep(1000);
  const std::string tmp = o.ready + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  std::fprintf(f, "%d\n", ntohs(a.sin_port));
  std::fclose(f);
  std::rename(tmp.c_str(), o.ready.c_str());
  t.join();
  if (jit.joinable()) jit.join();
  return 0;
}
