// Starting an acceptor (Engine) or a set of initiator sessions (Initiator).
//
// Acceptor models (DESIGN.md):
//   single  one session on one thread `kite-single`, which reads its socket
//           directly in its duty cycle (non-blocking recv, no poll/epoll on
//           the hot path). It accepts the next connection when the session
//           ends; connections arriving meanwhile wait in the listen backlog.
//   mono    every session on one thread `kite-mono`, one readiness set
//           (epoll_wait with timeout 0 when spinning, or one io_uring).
//   pool    a front door `kite-front` accepts and hands each connection to
//           one of `workers` threads `kite-pool-N` through a bounded SPSC
//           queue; a worker holds at most `max_connections` sessions; when
//           all are full the front door keeps the connection in hand, logs
//           that it waits, and hands it over when a session ends.
//   shard   `workers` threads `kite-shard-N`, each with its own SO_REUSEPORT
//           listener on the same port; the kernel spreads connections.
//
// Threading contract for the ProtocolFactory: open() and release() are called
// from engine threads but never concurrently (the engine serialises them);
// each Protocol is then called only from the thread that owns its connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kite/engine/agent.hpp"
#include "kite/engine/protocol.hpp"
#include "kite/transport/tls.hpp"
#include "kite/transport/transport.hpp"

namespace kite::engine {

enum class Model : std::uint8_t { single, mono, pool, shard };
const char* to_string(Model m) noexcept;
bool parse_model(const std::string& s, Model& out) noexcept;

// Whether `transport` can run `model` (the lab marks the other cells nopool /
// noshard). kernel and uring run all four; onload runs all four (it is the
// kernel backend under the launcher); vma has no shard (no SO_REUSEPORT
// spreading); tcpdirect and socketxtreme run single and mono only; tls (kernel
// TCP with OpenSSL) runs all four.
bool supports(transport::Kind transport, Model model) noexcept;

// What to do when a connection's send buffer is full.
enum class SendFullPolicy : std::uint8_t {
  wait,        // back-pressure only: claim() returns nullptr, the protocol retries
  disconnect,  // as wait, but a connection that stays full (no byte drained)
               // for send_full_limit_ms is closed as a slow consumer
};

struct EngineConfig {
  Model model = Model::mono;
  transport::Kind transport = transport::Kind::kernel;
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;     // 0: the kernel picks; Engine::port() tells which
  int workers = 1;            // pool and shard threads
  std::vector<int> cores;     // server threads' cores: thread i gets cores[i % size]; empty: unpinned
  int coordinator_core = -1;  // pool front door core; -1: unpinned
  IdleConfig idle{};
  // The front door shares a core with a worker in the lab's pool cells: each
  // wake preempts that worker, so it waits long (stop() wakes it at once).
  IdleConfig front_idle{IdleKind::block, 0, 100000};
  int busy_poll_usecs = 0;
  bool prefer_busy_poll = false;
  bool nodelay = true;
  bool quickack = false;  // re-arm TCP_QUICKACK after every read (costs ~1.7 us p50 on loopback ping-pong)
  int socket_rcvbuf = 0;  // SO_RCVBUF / SO_SNDBUF; 0: kernel autotuning
  int socket_sndbuf = 0;
  std::size_t recv_buffer = 64 * 1024;   // per connection
  std::size_t send_buffer = 256 * 1024;  // per connection, never grows
  SendFullPolicy send_full = SendFullPolicy::disconnect;
  int send_full_limit_ms = 1000;
  int max_connections = 32;  // per server thread (single: 1)
  int backlog = 128;
  // Protocol::on_timer turns come at most once per this interval (0: every
  // duty cycle). Session timers are milliseconds apart; checking them on
  // every spin costs a virtual call and a clock read per connection.
  int timer_interval_us = 100;
  // io_uring
  bool uring_sqpoll = false;  // needs a spare core; poor choice on 2 cores
  int uring_sqpoll_cpu = -1;
  unsigned uring_entries = 512;
  bool log = true;                        // one-line notes on stderr at set-up and when the front door waits
  ThreadHooks* thread_hooks = nullptr;    // every engine thread's start and end (outlives the engine)
  transport::TlsConfig tls;               // transport tls: the acceptor's certificate, key and client checks
  transport::EventLog* events = nullptr;  // a connection's transport failures (TLS); nullptr: stderr
};

// Counters, updated by engine threads with relaxed atomics; read at any time.
struct EngineStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;  // factory said no, or table full
  std::uint64_t closed = 0;
  std::uint64_t slow_consumers = 0;    // closed by SendFullPolicy::disconnect
  std::uint64_t send_full_events = 0;  // claim() returned nullptr
  std::uint64_t front_door_waits = 0;  // times the pool front door found every worker full
  std::uint64_t rx_compactions = 0;
  std::uint64_t tx_high_water = 0;  // most bytes pending in one send buffer
  int active = 0;
  std::vector<int> per_thread_accepted;    // per server thread
  std::vector<AgentLoad> per_thread_load;  // per server thread, same order (pool: the workers)
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Starts the acceptor: listeners bound, threads running, named and pinned.
  // nullptr with `error` set (e.g. "core 9 does not exist (allowed: 0-1)",
  // "127.0.0.1:9000: port in use", "uring: noshard").
  static std::unique_ptr<Engine> start(const EngineConfig& config, ProtocolFactory& factory, std::string& error);
  virtual std::uint16_t port() const noexcept = 0;
  // Stops the threads; open connections get on_disconnected("engine stopped").
  virtual void stop() noexcept = 0;
  virtual std::vector<ThreadInfo> threads() const = 0;
  virtual EngineStats stats() const = 0;
  // The socket options as the kernel took them on the last connection.
  virtual std::string socket_report() const = 0;
  // Every connection gets a timer turn on its thread's next timer pass,
  // whatever its Protocol::timer_quiet_ns() said (any thread; for requests
  // that a turn serves, such as an operator's command).
  virtual void wake_timers() noexcept = 0;
};

struct InitiatorConfig {
  transport::Kind transport = transport::Kind::kernel;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  int sessions = 1;
  int threads = 1;         // sessions are dealt round-robin; threads == sessions: one per session
  std::vector<int> cores;  // thread i gets cores[i % size]
  IdleConfig idle{};
  int busy_poll_usecs = 0;
  bool prefer_busy_poll = false;
  bool nodelay = true;
  bool quickack = false;  // as EngineConfig::quickack
  int socket_rcvbuf = 0;
  int socket_sndbuf = 0;
  std::size_t recv_buffer = 64 * 1024;
  std::size_t send_buffer = 256 * 1024;
  SendFullPolicy send_full = SendFullPolicy::wait;
  int send_full_limit_ms = 1000;
  int connect_timeout_ms = 2000;
  // false: start() connects nothing; the caller connects each session's
  // socket when it chooses (reconnects, back-off) and hands it over with
  // Initiator::hand().
  bool connect_at_start = true;
  int timer_interval_us = 100;  // as EngineConfig::timer_interval_us
  unsigned uring_entries = 512;
  bool uring_sqpoll = false;
  ThreadHooks* thread_hooks = nullptr;  // as EngineConfig::thread_hooks
  // transport tls: trust anchors, the server name checked (server_name, else
  // `host`), an optional client certificate.
  transport::TlsConfig tls;
  transport::EventLog* events = nullptr;  // as EngineConfig::events
};

// Connects every session (at set-up, before the threads start), then runs
// them on threads `kite-init-N`. A thread with one session reads it directly
// (no epoll); a thread with several uses one readiness set.
class Initiator {
 public:
  virtual ~Initiator() = default;
  static std::unique_ptr<Initiator> start(const InitiatorConfig& config, ProtocolFactory& factory, std::string& error);
  virtual void stop() noexcept = 0;
  // Gives thread `thread` (0 .. threads - 1) a connected socket to run a
  // session on; the thread calls the factory's open() for it. Sessions are
  // dealt as at start: session i on thread i % threads. One caller thread
  // only; false (socket not taken) when the thread already holds as many as
  // its share of sessions.
  virtual bool hand(int thread, int fd) noexcept = 0;
  // Sessions still connected.
  virtual int active() const noexcept = 0;
  // Waits (bounded) until every session has disconnected. True if they did.
  virtual bool wait_closed(int timeout_ms) noexcept = 0;
  virtual std::vector<ThreadInfo> threads() const = 0;
  virtual EngineStats stats() const = 0;
};

}  // namespace kite::engine
