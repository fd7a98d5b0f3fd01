#include "kite/link/metrics.hpp"

#include <pthread.h>

#include <cstring>

namespace kite::link {

void SessionMetrics::count_disconnect(const char* cause) noexcept {
  if (cause == nullptr) cause = "unknown";
  for (std::size_t i = 0; i < kDisconnectCauses; ++i) {
    const char* c = disconnect_cause[i].load(std::memory_order_acquire);
    if (c == nullptr) {
      // Only the owning thread writes this session's slots.
      disconnect_cause[i].store(cause, std::memory_order_release);
      disconnects[i].add();
      return;
    }
    if (c == cause || std::strcmp(c, cause) == 0) {
      disconnects[i].add();
      return;
    }
  }
  disconnects[kDisconnectCauses].add();
}

void ThreadLatency::record(std::int64_t ns) noexcept {
  if (ns < 0) ns = 0;
  int b = 0;
  const auto u = static_cast<std::uint64_t>(ns) >> kFirstBucketLog2;
  if (u != 0) b = 64 - __builtin_clzll(u);
  if (b > kBuckets) b = kBuckets;
  buckets[b].add();
  count.add();
  sum_ns.add(static_cast<std::uint64_t>(ns));
}

Metrics::Metrics(std::size_t sessions)
    : n_(sessions),
      sessions_(new SessionMetrics[sessions == 0 ? 1 : sessions]),
      threads_(new ThreadLatency[kMaxThreads]) {}

ThreadLatency* Metrics::this_thread() noexcept {
  struct Cache {
    const Metrics* owner = nullptr;
    ThreadLatency* slot = nullptr;
  };
  thread_local Cache cache;
  if (cache.owner == this) return cache.slot;
  const std::size_t i = next_thread_.fetch_add(1, std::memory_order_acq_rel);
  ThreadLatency* t = nullptr;
  if (i < kMaxThreads) {
    t = &threads_[i];
    pthread_getname_np(pthread_self(), t->name, sizeof t->name);
    t->claimed.store(true, std::memory_order_release);
  }
  cache = {this, t};
  return t;
}

std::size_t reject_slot(bool present, std::uint64_t reason) noexcept {
  if (!present) return kRejectNone;
  return reason < kRejectOther ? static_cast<std::size_t>(reason) : kRejectOther;
}

std::string_view reject_slot_label(std::size_t slot) noexcept {
  static constexpr const char* kLabels[kRejectReasonSlots] = {"0",  "1",  "2",  "3",  "4",     "5",   "6",  "7",
                                                              "8",  "9",  "10", "11", "12",    "13",  "14", "15",
                                                              "16", "17", "18", "19", "other", "none"};
  return slot < kRejectReasonSlots ? kLabels[slot] : "other";
}

}  // namespace kite::link
