// What the link counts for the operators (kite-admin, the Prometheus text):
// per session, messages and bytes each way, rejects by SessionRejectReason,
// resends, disconnects by cause, and the session's published state; per
// engine thread, a histogram of inbound-to-reply time.
//
// Threading: a session's counters are written only by the thread that owns
// its connection (sessions move between threads only through
// Session::try_bind, whose acquire/release orders the writes) and read by any
// thread. Writes are a relaxed load and store (no locked instruction); reads
// may see a value a few messages old, never a torn one. Nothing here
// allocates after Metrics is constructed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace kite::link {

class Counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

// Slots of SessionMetrics::rejects_out: SessionRejectReason 0..kRejectReasonSlots-3,
// then "other" (99 and anything larger), then "none" (a Reject without 373,
// as FIX.4.0 and 4.1 send).
inline constexpr std::size_t kRejectReasonSlots = 22;
inline constexpr std::size_t kRejectOther = kRejectReasonSlots - 2;
inline constexpr std::size_t kRejectNone = kRejectReasonSlots - 1;

// Disconnect causes are the runtime's and the link's static reason strings
// ("peer closed", "logon timeout", ...): the first kDisconnectCauses distinct
// ones get a counter each, the rest count under "other".
inline constexpr std::size_t kDisconnectCauses = 16;

struct SessionMetrics {
  Counter messages_in, messages_out, bytes_in, bytes_out;
  Counter rejects_out[kRejectReasonSlots];
  Counter business_rejects_out;
  Counter rejects_in;  // Rejects (35=3) and BusinessMessageRejects (35=j) received
  Counter resend_requests_in, resend_requests_out;
  Counter sequence_resets_in, sequence_resets_out;  // 35=4, gap fills included
  Counter garbled_in;
  Counter logons, refused_logons;
  Counter disconnects[kDisconnectCauses + 1];  // the last: other
  std::atomic<const char*> disconnect_cause[kDisconnectCauses] = {};
  std::atomic<const char*> last_refusal{nullptr};  // why the last Logon for it was refused
  // Published by the owning thread after each message and timer turn.
  std::atomic<std::uint64_t> next_in{0}, next_out{0};
  std::atomic<std::uint8_t> state{0};  // session::SessionState
  std::atomic<bool> in_gap{false};
  // Monotonic (CLOCK_MONOTONIC) time of the last message out, or of the last
  // inbound read: readers convert it to UTC (one clock read fewer per order).
  std::atomic<std::int64_t> last_activity_mono_ns{0};
  std::atomic<bool> message_log{false};  // switched by the admin channel

  void count_disconnect(const char* cause) noexcept;
};

// Inbound-to-reply time of one engine thread: from the runtime handing bytes
// to the link to the first reply committed for them. Buckets are powers of
// two of nanoseconds: bucket b counts times < 2^(b + kFirstBucketLog2).
struct ThreadLatency {
  static constexpr int kFirstBucketLog2 = 8;  // 256 ns
  static constexpr int kBuckets = 20;         // up to 2^27 ns (134 ms), then +Inf
  Counter buckets[kBuckets + 1];
  Counter count, sum_ns;
  std::atomic<bool> claimed{false};
  char name[16] = {};  // the thread's name when it claimed the slot

  void record(std::int64_t ns) noexcept;
  static std::int64_t bucket_bound_ns(int b) noexcept { return std::int64_t{1} << (b + kFirstBucketLog2); }
};

class Metrics {
 public:
  static constexpr std::size_t kMaxThreads = 64;
  explicit Metrics(std::size_t sessions);
  std::size_t sessions() const noexcept { return n_; }
  SessionMetrics& session(std::size_t i) noexcept { return sessions_[i]; }
  const SessionMetrics& session(std::size_t i) const noexcept { return sessions_[i]; }
  // The calling thread's histogram (claimed on its first call; nullptr when
  // kMaxThreads threads have claimed one).
  ThreadLatency* this_thread() noexcept;
  const ThreadLatency& thread(std::size_t i) const noexcept { return threads_[i]; }

 private:
  std::size_t n_;
  std::unique_ptr<SessionMetrics[]> sessions_;
  std::unique_ptr<ThreadLatency[]> threads_;
  std::atomic<std::size_t> next_thread_{0};
};

// The slot of a SessionRejectReason value (absent: kRejectNone).
std::size_t reject_slot(bool present, std::uint64_t reason) noexcept;
// The label of a slot ("0".."19", "other", "none").
std::string_view reject_slot_label(std::size_t slot) noexcept;

}  // namespace kite::link
