// Threads as agents (Aeron's aeron_agent.h): an agent's duty cycle
// do_work(now) does a bounded amount of work and says how much; an idle
// strategy decides what a cycle with no work costs; a runner owns the thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kite::engine {

class Agent {
 public:
  virtual ~Agent() = default;
  // One duty cycle: poll transports (bounded), process whole frames, run
  // timers. Returns the work done (0 means idle).
  virtual int do_work(std::int64_t now_ns) noexcept = 0;
  // The block idle strategy: wait for I/O up to timeout_us (epoll_wait,
  // io_uring wait, poll) and do the work that arrived. Returns work done.
  virtual int block(std::int64_t now_ns, int timeout_us) noexcept;
  // Called on the agent's thread once before the first cycle / after the last.
  virtual void on_start() noexcept {}
  virtual void on_close() noexcept {}
};

enum class IdleKind : std::uint8_t { busy_spin, spin_yield, block };
const char* to_string(IdleKind k) noexcept;
bool parse_idle(const std::string& s, IdleKind& out) noexcept;

struct IdleConfig {
  IdleKind kind = IdleKind::busy_spin;
  int spins = 1000;             // spin_yield: idle cycles spun before each sched_yield
  int block_timeout_us = 1000;  // block: longest wait
};

// Where a thread runs, as it reported it itself after pinning.
struct ThreadInfo {
  std::string name;              // as given to pthread_setname_np (<= 15 chars)
  int tid = 0;                   // gettid()
  std::vector<int> cores;        // cores asked for (empty: not pinned)
  std::vector<int> affinity;     // sched_getaffinity after pinning
  int cpu = -1;                  // sched_getcpu() after pinning
  std::string error;             // pinning failure, if any
  std::string describe() const;  // "kite-pool-0 tid=123 cpu=1 affinity=1"
};

// Told on each runner's own thread when it starts (named and pinned, before
// its first cycle) and when it ends (after the agent's on_close, so after the
// last connection's on_disconnected): where a language runtime attaches the
// thread once and detaches it.
class ThreadHooks {
 public:
  virtual ~ThreadHooks() = default;
  virtual void on_thread_start(const ThreadInfo&) noexcept {}
  virtual void on_thread_stop(const ThreadInfo&) noexcept {}
};

// Monotonic nanoseconds (CLOCK_MONOTONIC).
std::int64_t monotonic_ns() noexcept;
// Cores this process may use (sched_getaffinity of the process at start).
std::vector<int> allowed_cores();
// "" when every core in `cores` exists and is allowed, else a clear message.
std::string check_cores(const std::vector<int>& cores);

// What a runner's loop has done so far. A cycle is one do_work (or block)
// call; it is idle when it returned 0. busy_ns adds up the cycles that did
// work, each from its clock read to the next cycle's; total_ns all of them.
// With a spinning idle strategy, busy_ns / total_ns is how much of its time
// the thread had something to do (a blocking one counts its waits in the
// cycle that ends them).
struct AgentLoad {
  std::uint64_t cycles = 0;
  std::uint64_t idle_cycles = 0;
  std::int64_t busy_ns = 0;
  std::int64_t total_ns = 0;
};

// Runs one agent on its own thread: the thread names itself, then pins itself
// to its cores, records where it runs, and loops do_work + idle until stop().
class AgentRunner {
 public:
  using Clock = std::int64_t (*)() noexcept;
  AgentRunner(Agent& agent, std::string name, std::vector<int> cores, IdleConfig idle, Clock clock = &monotonic_ns);
  ~AgentRunner();
  AgentRunner(const AgentRunner&) = delete;
  AgentRunner& operator=(const AgentRunner&) = delete;

  // Hooks for the thread's start and end (set before start(); may be null).
  void set_hooks(ThreadHooks* hooks) noexcept { hooks_ = hooks; }
  // Starts the thread and waits until it has named and pinned itself.
  // False (thread stopped, `error` set) when pinning failed.
  bool start(std::string& error);
  // Asks the loop to end, joins, and runs on_close on the agent's thread.
  void stop() noexcept;
  bool running() const noexcept { return thread_.joinable(); }
  const ThreadInfo& info() const noexcept { return info_; }
  std::uint64_t cycles() const noexcept { return cycles_.load(std::memory_order_relaxed); }
  // Read at any time (relaxed: the four figures may be a cycle apart).
  AgentLoad load() const noexcept;

 private:
  void run() noexcept;

  Agent& agent_;
  IdleConfig idle_;
  Clock clock_;
  ThreadInfo info_;
  ThreadHooks* hooks_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> started_{0};  // 0 pending, 1 running, -1 failed
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<std::uint64_t> idle_cycles_{0};
  std::atomic<std::int64_t> busy_ns_{0}, total_ns_{0};
};

}  // namespace kite::engine
