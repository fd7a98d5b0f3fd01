// Time for the session layer. Every decision that depends on time (heartbeats,
// test requests, logon and logout timeouts, SendingTime accuracy, schedules,
// reconnect back-off) reads a Clock, so tests drive a FakeClock and never sleep.
#pragma once

#include <cstdint>

namespace kite::session {

// Nanoseconds since the Unix epoch, UTC (the clock of SendingTime).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_ns() const noexcept = 0;
};

// CLOCK_REALTIME.
class SystemClock final : public Clock {
 public:
  std::int64_t now_ns() const noexcept override;
};

// A clock that moves only when told to.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::int64_t start_ns = 1'700'000'000'000'000'000) noexcept : now_(start_ns) {}
  std::int64_t now_ns() const noexcept override { return now_; }
  void set(std::int64_t ns) noexcept { now_ = ns; }
  void advance_ms(std::int64_t ms) noexcept { now_ += ms * 1'000'000; }
  void advance_s(std::int64_t s) noexcept { now_ += s * 1'000'000'000; }

 private:
  std::int64_t now_;
};

inline constexpr std::int64_t kNsPerMs = 1'000'000;
inline constexpr std::int64_t kNsPerSec = 1'000'000'000;

}  // namespace kite::session
