// The load generator's core: N FIX.4.4 initiator sessions on the calling
// thread, written directly on the codec, kernel TCP sockets (with TLS from
// OpenSSL when `tls` is set: each handshake is done in connect(), then
// non-blocking SSL_read / SSL_write on the same loop).
//
// Closed loop: each session sends its next order when the reply to its
// previous one arrives (plus an optional think time). Open loop: orders are
// due on a fixed schedule for the aggregate rate, slot j going to session
// j mod N, and each due order is sent whether or not replies are
// outstanding, up to a per-session in-flight cap: a due order over the cap
// waits until a reply makes room (counted in cap_hits) and keeps its slot, so
// its response time includes the wait. Replies are matched to orders in
// FIFO order per session. Response time runs from the slot, service time
// from the send() call, both up to the recv() that brought the reply.
//
// The measurement is one continuous stream: a warm-up phase (measured,
// thrown away) then R runs back to back; an order belongs to the phase of
// its slot (open) or send time (closed). After the last run no more orders
// are sent and outstanding replies are drained (unanswered ones are errors).
// Everything measure() uses is allocated by connect(): it does not allocate.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kite/bench/clock.hpp"
#include "kite/bench/histogram.hpp"
#include "kite/bench/stats.hpp"
#include "kite/codec/framer.hpp"

namespace kite::transport {
class TlsContext;
}

namespace kite::bench {

struct ClientOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  bool open_loop = false;
  unsigned sessions = 1;
  double rate = 50000;  // aggregate orders/s, open loop
  double think_us = 0;  // closed loop
  double warmup_s = 1;
  double duration_s = 5;  // per run
  unsigned runs = 5;
  unsigned max_in_flight = 1000;  // per session, open loop
  bool spin = true;               // false: block in epoll until the next event
  int busy_poll_usecs = 0;        // SO_BUSY_POLL on each socket (0 = off)
  double connect_timeout_s = 5;
  double drain_timeout_s = 2;
  unsigned first_session = 0;  // CompID index of session 0 (BENCH<first_session + k>)
  // Open loop: the first slot is due this fraction of an interval after the
  // start, so that several client threads interleave their schedules.
  double slot_offset = 0;
  // The lab's tls transport: TLS over each connection, the server's
  // certificate checked against tls_ca (PEM trust anchors) and against
  // `host` (an IP address is matched against the certificate's IP names).
  bool tls = false;
  std::string tls_ca;
};

// Whether this build's client can speak TLS (OpenSSL found at build time).
bool client_tls_compiled_in() noexcept;

// What one phase (warm-up or run) measured.
struct Phase {
  Histogram service, response;  // response: open loop only
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;  // accepted replies that arrived during this phase (whichever order they answer)
  std::uint64_t errors = 0;
  std::uint64_t cap_hits = 0;       // due orders the in-flight cap held back
  std::uint64_t max_in_flight = 0;  // across all sessions
  ClientLoad load;                  // how busy the client thread was (runs only, not the drain)
  // Open loop: how late the client's own loop took up each slot (from the
  // slot's due time to the pass that queued it). It grows without bound when
  // the client cannot keep its schedule, whatever the server does.
  Histogram lateness;
};

// Adds `from` (another client thread's phase) into `into`: histograms and
// counts are summed; max_in_flight becomes the sum of the threads' maxima
// (an upper bound of the orders in flight at once).
void merge_phase(Phase& into, const Phase& from) noexcept;

class Client {
 public:
  Client(const ClientOptions& o, const Clock& clock);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Connects and logs on every session; false with a message on failure.
  bool connect(std::string& error);
  // Warm-up and runs. False with a message when a session failed (the
  // phases then hold what was measured up to the failure).
  bool measure(std::string& error);
  // Logs out every session (waits briefly for the answers) and closes.
  void logout() noexcept;
  // The schedule of the next measure() starts at this Clock time instead of
  // when measure() is called (several client threads start together).
  void start_at(std::int64_t ns) noexcept { start_at_ns_ = ns; }

  // [0] is the warm-up, [1..runs] the runs.
  const std::vector<Phase>& phases() const noexcept { return phases_; }

  // Called from measure() once per run, in order, as soon as the run is
  // complete: its time is over and every order of it is answered (or, at the
  // end, counted as an error). Runs are back to back, so this happens early
  // in the next run, on the measuring thread: keep it short (a progress line).
  using RunDone = void (*)(void* ctx, std::size_t run, std::size_t runs, const Phase& phase);
  void on_run_done(RunDone fn, void* ctx) noexcept {
    run_done_ = fn;
    run_done_ctx_ = ctx;
  }
  const ClientOptions& options() const noexcept { return o_; }

 private:
  struct Connection;
  bool send_order(Connection& c, std::int64_t slot_ns, std::uint32_t phase) noexcept;
  bool flush(Connection& c) noexcept;
  bool read(Connection& c, std::int64_t now, std::string& error) noexcept;
  ssize_t receive(Connection& c) noexcept;
  static bool tls_pending(const Connection& c) noexcept;
  bool on_message(Connection& c, const char* frame, const codec::FrameResult& fr, std::int64_t now,
                  std::string& error) noexcept;
  void on_execution_report(Connection& c, bool accepted, std::int64_t now) noexcept;
  std::uint32_t phase_of(std::int64_t t) const noexcept;
  bool backlog_left() const noexcept;
  void note_in_flight(std::int64_t now) noexcept;
  bool run_complete(std::uint32_t run, std::int64_t now) const noexcept;

  // measure()'s steps, inlined into its loop (client.cpp).
  struct Measurement;
  void end_pass(Measurement& m, std::int64_t now) noexcept;
  void begin_pass(Measurement& m, std::int64_t now) noexcept;
  void queue_due_slots(Measurement& m, std::int64_t now) noexcept;
  void send_backlog() noexcept;
  void send_closed_loop_orders(std::int64_t now) noexcept;
  long poll_timeout_ns(const Measurement& m, std::int64_t now) const noexcept;
  bool read_replies(const Measurement& m, std::int64_t now, bool direct, bool& got_some, std::string& error) noexcept;
  void count_poll(Measurement& m, bool got_some) noexcept;
  bool flush_all(std::string& error) noexcept;
  void report_complete_runs(Measurement& m, std::int64_t now) noexcept;
  void send_heartbeats(Measurement& m, std::int64_t now) noexcept;
  void count_unanswered() noexcept;

  ClientOptions o_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Phase> phases_;
  int epoll_fd_ = -1;
  std::int64_t start_ns_ = 0, warm_end_ns_ = 0, run_ns_ = 0;
  std::int64_t start_at_ns_ = 0;
  std::uint64_t in_flight_ = 0;
  std::uint64_t reads_with_data_ = 0;  // recv() calls that brought bytes
  std::uint64_t sent_total_ = 0;       // orders sent, all phases
  bool measuring_ = false;
  RunDone run_done_ = nullptr;
  void* run_done_ctx_ = nullptr;
  struct Scratch;
  std::unique_ptr<Scratch> scratch_;
  std::shared_ptr<transport::TlsContext> tls_;
};

// Measures with o.sessions sessions spread over `threads` client threads,
// each its own Client pinned to cores[k % cores.size()] (none when empty):
// thread k takes a contiguous share of the sessions and the same share of
// the aggregate rate, the schedules interleaved and started together.
// `phases` receives the merged phases ([0] warm-up, [1..runs] runs);
// run_done (may be null) is called for thread 0's runs. One thread measures
// on the calling thread. False with a message when a thread failed.
bool measure_with_threads(const ClientOptions& o, unsigned threads, const std::vector<int>& cores, const Clock& clock,
                          Client::RunDone run_done, void* ctx, std::vector<Phase>& phases, std::string& error);

}  // namespace kite::bench
