#include "kite/engine/agent.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace kite::engine {
namespace {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::string join_cores(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(v[i]));
  }
  return s.empty() ? "-" : s;
}

}  // namespace

int Agent::block(std::int64_t now_ns, int timeout_us) noexcept {
  const int w = do_work(now_ns);
  if (w == 0 && timeout_us > 0) {
    timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
    ::nanosleep(&ts, nullptr);
  }
  return w;
}

const char* to_string(IdleKind k) noexcept {
  switch (k) {
    case IdleKind::busy_spin: return "busy-spin";
    case IdleKind::spin_yield: return "spin-yield";
    case IdleKind::block: return "block";
  }
  return "?";
}

bool parse_idle(const std::string& s, IdleKind& out) noexcept {
  if (s == "busy-spin" || s == "busy_spin" || s == "spin")
    out = IdleKind::busy_spin;
  else if (s == "spin-yield" || s == "spin_yield" || s == "yield")
    out = IdleKind::spin_yield;
  else if (s == "block")
    out = IdleKind::block;
  else
    return false;
  return true;
}

std::string ThreadInfo::describe() const {
  std::string s = name + " tid=" + std::to_string(tid) + " cpu=" + std::to_string(cpu) +
                  " affinity=" + join_cores(affinity) + " asked=" + join_cores(cores);
  if (!error.empty()) s += " error=" + error;
  return s;
}

std::int64_t monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::vector<int> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

std::string check_cores(const std::vector<int>& cores) {
  const std::vector<int> ok = allowed_cores();
  const long online = ::sysconf(_SC_NPROCESSORS_CONF);
  for (const int c : cores) {
    if (c < 0 || c >= online) {
      return "core " + std::to_string(c) + " does not exist (this machine has cores 0-" + std::to_string(online - 1) +
             ")";
    }
    bool allowed = false;
    for (const int a : ok) allowed = allowed || a == c;
    if (!allowed) return "core " + std::to_string(c) + " is not in this process's affinity (" + join_cores(ok) + ")";
  }
  return {};
}

AgentRunner::AgentRunner(Agent& agent, std::string name, std::vector<int> cores, IdleConfig idle, Clock clock)
    : agent_(agent), idle_(idle), clock_(clock) {
  if (name.size() > 15) name.resize(15);  // the kernel's comm limit
  info_.name = std::move(name);
  info_.cores = std::move(cores);
}

AgentRunner::~AgentRunner() { stop(); }

bool AgentRunner::start(std::string& error) {
  if (thread_.joinable()) return true;
  const std::string bad = check_cores(info_.cores);
  if (!bad.empty()) {
    error = info_.name + ": " + bad;
    return false;
  }
  stop_.store(false);
  started_.store(0);
  thread_ = std::thread([this] { run(); });
  started_.wait(0, std::memory_order_acquire);
  if (started_.load(std::memory_order_acquire) < 0) {
    thread_.join();
    error = info_.name + ": " + info_.error;
    return false;
  }
  return true;
}

void AgentRunner::stop() noexcept {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  thread_.join();
}

AgentLoad AgentRunner::load() const noexcept {
  AgentLoad l;
  l.cycles = cycles_.load(std::memory_order_relaxed);
  l.idle_cycles = idle_cycles_.load(std::memory_order_relaxed);
  l.busy_ns = busy_ns_.load(std::memory_order_relaxed);
  l.total_ns = total_ns_.load(std::memory_order_relaxed);
  return l;
}

void AgentRunner::run() noexcept {
  // Named first, then pinned by the thread itself: a thread never runs
  // unnamed on a core it was not given for longer than these two calls.
  ::pthread_setname_np(::pthread_self(), info_.name.c_str());
  info_.tid = static_cast<int>(::gettid());
  if (!info_.cores.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : info_.cores) CPU_SET(c, &set);
    const int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
    if (rc != 0) {
      info_.error = std::string("pthread_setaffinity_np: ") + std::strerror(rc);
      started_.store(-1, std::memory_order_release);
      started_.notify_all();
      return;
    }
  }
  cpu_set_t got;
  CPU_ZERO(&got);
  if (::sched_getaffinity(0, sizeof got, &got) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &got)) info_.affinity.push_back(c);
    }
  }
  info_.cpu = ::sched_getcpu();
  if (hooks_ != nullptr) hooks_->on_thread_start(info_);
  agent_.on_start();
  started_.store(1, std::memory_order_release);
  started_.notify_all();

  int idle_cycles = 0;
  std::uint64_t cycles = 0, idle_total = 0;
  std::int64_t busy_ns = 0, total_ns = 0, last = 0;
  bool last_busy = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    // The one clock read of the cycle also times the previous cycle.
    const std::int64_t now = clock_();
    if (last != 0) {
      const std::int64_t d = now - last;
      total_ns += d;
      if (last_busy) busy_ns += d;
      total_ns_.store(total_ns, std::memory_order_relaxed);  // plain stores: no RMW on the hot path
      busy_ns_.store(busy_ns, std::memory_order_relaxed);
    }
    last = now;
    int work;
    if (idle_.kind == IdleKind::block && idle_cycles > 0) {
      work = agent_.block(now, idle_.block_timeout_us);
    } else {
      work = agent_.do_work(now);
    }
    cycles_.store(++cycles, std::memory_order_relaxed);
    last_busy = work > 0;
    if (work > 0) {
      idle_cycles = 0;
      continue;
    }
    idle_cycles_.store(++idle_total, std::memory_order_relaxed);
    ++idle_cycles;
    if (idle_.kind == IdleKind::spin_yield && idle_cycles > idle_.spins) {
      ::sched_yield();
      idle_cycles = 0;
    } else if (idle_.kind != IdleKind::block) {
      cpu_relax();
    }
  }
  agent_.on_close();
  if (hooks_ != nullptr) hooks_->on_thread_stop(info_);
}

}  // namespace kite::engine
