// The client core against an in-process loopback FIX server whose answers
// can be held back for 10 ms once: coordinated omission, allocation-free
// measurement, closed loop basics.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "client.hpp"
#include "kite/codec/codec.hpp"
#include "messages.hpp"
#include "server.hpp"

namespace {
thread_local bool t_counting = false;
std::atomic<long> g_allocations{0};
}  // namespace

// The replacements pair malloc with free; inlined at -O1 g++ sees new/free
// pairs and warns about a mismatch that is not one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  if (t_counting) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (t_counting) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace kite::bench {
namespace {

// A FIX server on one thread (blocking in poll): Logon -> Logon, Logout ->
// Logout, NewOrderSingle -> ExecutionReport; the answer to order number
// stall_at (counted over all sessions, from 1) is held back 10 ms, and with
// it everything queued behind it.
class StallServer {
 public:
  // exec_type: the ExecType of every ExecutionReport ('0': New, accepted).
  explicit StallServer(std::uint64_t stall_at, char exec_type = '0') : stall_at_(stall_at), exec_type_(exec_type) {
    std::string error;
    listener_ = listen_tcp("127.0.0.1", port_, false, error);
    EXPECT_GE(listener_, 0) << error;
    thread_ = std::thread([this] { run(); });
  }
  ~StallServer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  int port() const { return port_; }
  std::uint64_t orders() const { return orders_.load(); }

 private:
  struct Conn {
    int fd;
    std::string rx;
    std::unique_ptr<codec::HeaderTemplate> header;
    std::unique_ptr<codec::MessageWriter> writer;
    std::uint64_t seq = 1;
  };

  void answer(Conn& c) {
    codec::FieldIndex ix(128);
    codec::Header h;
    std::size_t at = 0;
    char out[1024];
    std::string reply;
    while (true) {
      const auto fr = codec::frame(std::string_view(c.rx).substr(at));
      if (fr.status != codec::FrameStatus::complete) break;
      ix.build(c.rx.data() + at, fr.size);
      codec::read_header(ix, h);
      if (!c.writer) {
        c.header = std::make_unique<codec::HeaderTemplate>(
            codec::HeaderFields{"FIX.4.4", "KITE", std::string(h.sender_comp_id), {}, {}, {}, {}});
        c.writer = std::make_unique<codec::MessageWriter>(*c.header);
      }
      const std::int64_t now = codec::utc_now_ns();
      std::size_t n = 0;
      if (h.msg_type == "A") {
        n = write_logon(*c.writer, out, sizeof out, c.seq++, now);
      } else if (h.msg_type == "5") {
        n = write_logout(*c.writer, out, sizeof out, c.seq++, now);
      } else if (h.msg_type == "D") {
        if (++orders_ == stall_at_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        OrderEcho e;
        ix.get(codec::tag::ClOrdID, e.cl_ord_id);
        e.symbol = "S";
        e.order_qty = "1";
        e.price = "1";
        if (exec_type_ == '0') {
          n = write_execution_report(*c.writer, out, sizeof out, c.seq++, now, e, orders_, orders_);
        } else {
          c.writer->begin(out, sizeof out, "8", c.seq++, now);
          c.writer->add_uint(codec::tag::OrderID, orders_);
          c.writer->add_string(codec::tag::ClOrdID, e.cl_ord_id);
          c.writer->add_uint(codec::tag::ExecID, orders_);
          c.writer->add_char(codec::tag::ExecType, exec_type_);
          c.writer->add_char(codec::tag::OrdStatus, exec_type_);
          n = c.writer->finish();
        }
      }
      reply.append(out, n);
      at += fr.size;
    }
    c.rx.erase(0, at);
    if (!reply.empty()) ::send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  }

  void run() {
    std::vector<Conn> conns;
    while (!stop_) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (auto& c : conns) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd >= 0) {
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns.push_back({fd, {}, nullptr, nullptr});
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        Conn& c = conns[i - 1];
        char buf[65536];
        const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n <= 0) continue;
        c.rx.append(buf, static_cast<std::size_t>(n));
        answer(c);
      }
    }
    for (auto& c : conns) ::close(c.fd);
  }

  std::uint64_t stall_at_;
  char exec_type_;
  int port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> orders_{0};
  std::thread thread_;
};

std::uint64_t count_over(const Histogram& h, std::int64_t ns) {
  return h.count() - static_cast<std::uint64_t>(
                         h.fraction_at_or_below(static_cast<std::uint64_t>(ns)) * static_cast<double>(h.count()) + 0.5);
}

// Options every measuring test starts from: a blocking client (no spin on a
// shared test machine) against the test server's port.
ClientOptions blocking_options(int port, double warmup_s, double duration_s, unsigned runs) {
  ClientOptions o;
  o.port = port;
  o.warmup_s = warmup_s;
  o.duration_s = duration_s;
  o.runs = runs;
  o.spin = false;
  return o;
}

TEST(ClientTest, stallRaisesResponseTimeOfEveryOrderScheduledDuringItButNotServiceTime) {
  // 5000 orders/s, one in flight at most: while the server holds an answer
  // for 10 ms, the ~50 orders due meanwhile wait for the cap. They go out
  // late: their response time (from the slot) carries the wait, their
  // service time (from the send) does not.
  StallServer server(/*stall_at=*/1500);  // in the measured run (after 0.2 s of warm-up)
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.2, 0.5, 1);
  o.open_loop = true;
  o.rate = 5000;
  o.max_in_flight = 1;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  ASSERT_TRUE(client.measure(error)) << error;
  client.logout();
  ASSERT_GE(server.orders(), 1500u);
  const Phase& run = client.phases()[1];
  constexpr std::int64_t k5ms = 5'000'000;
  const std::uint64_t late_response = count_over(run.response, k5ms);
  const std::uint64_t late_service = count_over(run.service, k5ms);
  // Orders due in the first 5 ms of the stall: 25 at 5000/s. Only the one
  // in flight during the stall has a long service time; scheduling noise on
  // a loaded machine raises both figures alike, so compare them.
  EXPECT_GE(late_response, 24u);
  EXPECT_GE(late_response, late_service + 20) << "service " << late_service << " response " << late_response;
  EXPECT_GT(run.cap_hits, 0u);
  EXPECT_GE(run.response.max(), 9'000'000u);
}

TEST(ClientTest, stallWithoutCapRaisesResponseOfEveryOrderScheduledDuringIt) {
  // Without a cap every due order is sent on time: orders due during the
  // stall all wait for it, and the response time counts every one of them.
  StallServer server(/*stall_at=*/1500);
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.2, 0.5, 1);
  o.open_loop = true;
  o.rate = 5000;
  o.max_in_flight = 1000;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  ASSERT_TRUE(client.measure(error)) << error;
  client.logout();
  const Phase& run = client.phases()[1];
  EXPECT_GE(count_over(run.response, 5'000'000), 24u);
  EXPECT_EQ(run.cap_hits, 0u);
  EXPECT_GE(run.max_in_flight, 40u);
}

TEST(ClientTest, closedLoopAnswersEveryOrderOnEverySessionWithoutAllocating) {
  StallServer server(/*stall_at=*/0);
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.05, 0.1, 2);
  o.sessions = 3;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  g_allocations = 0;
  t_counting = true;
  const bool ok = client.measure(error);
  t_counting = false;
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(g_allocations.load(), 0) << "the measurement loop must not allocate";
  client.logout();
  ASSERT_EQ(client.phases().size(), 3u);
  for (std::size_t i = 1; i < 3; ++i) {
    const Phase& p = client.phases()[i];
    EXPECT_GT(p.service.count(), 0u);
    EXPECT_EQ(p.errors, 0u);
    EXPECT_EQ(p.response.count(), 0u) << "closed loop records service time only";
    EXPECT_LE(p.max_in_flight, 3u);
    EXPECT_GT(p.load.polls, 0u);
    EXPECT_LE(p.load.empty_polls, p.load.polls);
    EXPECT_GT(p.load.busy_s, 0.0);
    EXPECT_GE(p.load.idle_s, 0.0);
  }
}

TEST(ClientTest, openLoopRecordsLatenessOfEverySlotWithoutAllocating) {
  StallServer server(/*stall_at=*/0);
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.05, 0.1, 2);
  o.open_loop = true;
  o.rate = 4000;
  o.sessions = 2;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  g_allocations = 0;
  t_counting = true;
  const bool ok = client.measure(error);
  t_counting = false;
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(g_allocations.load(), 0) << "the open-loop measurement must not allocate";
  client.logout();
  for (std::size_t i = 1; i < 3; ++i) {
    const Phase& p = client.phases()[i];
    EXPECT_EQ(p.lateness.count(), p.sent) << "run " << i;
    EXPECT_GT(p.answered, 0u);
  }
}

TEST(ClientTest, connectFailsWithAMessageWhenNobodyListens) {
  int port = 0;
  std::string error;
  const int fd = listen_tcp("127.0.0.1", port, false, error);
  ASSERT_GE(fd, 0);
  ::close(fd);  // the port is now free and refuses
  const Clock clock;
  ClientOptions o;
  o.port = port;
  o.connect_timeout_s = 0.2;
  Client client(o, clock);
  EXPECT_FALSE(client.connect(error));
  EXPECT_NE(error.find("cannot connect"), std::string::npos) << error;
}

TEST(ClientTest, executionReportThatIsNotNewCountsAsAnErrorAndTheLoopGoesOn) {
  StallServer server(/*stall_at=*/0, /*exec_type=*/'4');
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.02, 0.05, 1);
  o.sessions = 2;
  Client client(o, clock);
  std::string error;
  ASSERT_TRUE(client.connect(error)) << error;
  ASSERT_TRUE(client.measure(error)) << error;
  client.logout();
  const Phase& run = client.phases()[1];
  EXPECT_EQ(run.service.count(), 0u) << "no order was accepted";
  EXPECT_GT(run.errors, 1u) << "each answer is an error and the next order still goes out";
  EXPECT_EQ(run.errors, run.sent);
}

TEST(ClientTest, mergingPhasesSumsHistogramsCountsAndLoad) {
  Phase a, b;
  a.service.record(1000);
  a.response.record(2000);
  a.lateness.record(10);
  a.sent = 3;
  a.errors = 1;
  a.cap_hits = 2;
  a.max_in_flight = 4;
  a.load.polls = 10;
  a.load.busy_s = 0.5;
  b.service.record(3000);
  b.service.record(5000);
  b.response.record(6000);
  b.lateness.record(20);
  b.sent = 5;
  b.max_in_flight = 7;
  b.load.polls = 1;
  b.load.idle_s = 0.25;
  merge_phase(a, b);
  EXPECT_EQ(a.service.count(), 3u);
  EXPECT_EQ(a.service.max(), 5000u);
  EXPECT_EQ(a.response.count(), 2u);
  EXPECT_EQ(a.lateness.count(), 2u);
  EXPECT_EQ(a.sent, 8u);
  EXPECT_EQ(a.errors, 1u);
  EXPECT_EQ(a.cap_hits, 2u);
  EXPECT_EQ(a.max_in_flight, 11u) << "the threads' maxima summed: an upper bound";
  EXPECT_EQ(a.load.polls, 11u);
  EXPECT_DOUBLE_EQ(a.load.busy_s + a.load.idle_s, 0.75);
}

TEST(ClientTest, threeClientThreadsKeepTheAggregateScheduleAndTheirPhasesAreMerged) {
  // 3000 orders/s over three threads of one session each: 1000/s per thread,
  // their slots interleaved. Every slot of a run is sent, answered and taken
  // up once, whichever thread owns it.
  StallServer server(/*stall_at=*/0);
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.1, 0.3, 2);
  o.open_loop = true;
  o.rate = 3000;
  o.sessions = 3;
  std::vector<Phase> phases;
  std::string error;
  ASSERT_TRUE(measure_with_threads(o, 3, {}, clock, nullptr, nullptr, phases, error)) << error;
  ASSERT_EQ(phases.size(), 3u);
  std::uint64_t answered = 0;
  for (const Phase& p : phases) answered += p.service.count();
  EXPECT_EQ(answered, server.orders()) << "every order the server answered is in the merged phases";
  std::uint64_t in_runs = 0;
  for (const Phase& p : phases) in_runs += p.answered;
  EXPECT_LE(in_runs, answered) << "replies are counted in a run only when they arrive within it";
  for (std::size_t i = 1; i < 3; ++i) {
    const Phase& p = phases[i];
    EXPECT_GE(p.sent, 897u) << "run " << i << ": 900 slots in 0.3 s at 3000/s";
    EXPECT_LE(p.sent, 903u) << "run " << i;
    EXPECT_EQ(p.errors, 0u);
    EXPECT_EQ(p.service.count(), p.sent);
    EXPECT_EQ(p.response.count(), p.sent);
    EXPECT_EQ(p.lateness.count(), p.sent) << "each slot's lateness is recorded once";
    EXPECT_GT(p.answered, 0u) << "replies arrive in every run";
    EXPECT_LE(p.max_in_flight, 3u * 1000u);
  }
}

TEST(ClientTest, moreThreadsThanSessionsRunOneThreadPerSession) {
  StallServer server(/*stall_at=*/0);
  const Clock clock;
  ClientOptions o = blocking_options(server.port(), 0.05, 0.1, 1);
  o.open_loop = true;
  o.rate = 2000;
  o.sessions = 2;
  std::vector<Phase> phases;
  std::string error;
  ASSERT_TRUE(measure_with_threads(o, 8, {}, clock, nullptr, nullptr, phases, error)) << error;
  EXPECT_GE(phases[1].sent, 198u);
  EXPECT_LE(phases[1].sent, 202u);
  EXPECT_EQ(phases[1].errors, 0u);
}

}  // namespace
}  // namespace kite::bench
