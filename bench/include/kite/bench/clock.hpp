// The benchmark's clock: the invariant TSC where the CPU has one
// (constant_tsc and nonstop_tsc in /proc/cpuinfo), calibrated against
// CLOCK_MONOTONIC at start, else clock_gettime(CLOCK_MONOTONIC).
//
// now_ns() is monotonic nanoseconds from an arbitrary origin; it is cheap
// (rdtsc and one multiply, or a vDSO call) and never allocates or throws.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace kite::bench {

enum class ClockMethod { tsc, clock_gettime };

class Clock {
 public:
  // Picks and calibrates the method (about 20 ms when the TSC is used).
  // prefer_tsc=false forces clock_gettime.
  explicit Clock(bool prefer_tsc = true);

  std::int64_t now_ns() const noexcept {
#if defined(__x86_64__) || defined(__i386__)
    if (method_ == ClockMethod::tsc) {
      const auto ticks = static_cast<std::int64_t>(__rdtsc() - tsc0_);
      return ns0_ + static_cast<std::int64_t>(static_cast<double>(ticks) * ns_per_tick_);
    }
#endif
    return monotonic_ns();
  }

  ClockMethod method() const noexcept { return method_; }
  const char* method_name() const noexcept { return method_ == ClockMethod::tsc ? "tsc" : "clock_gettime"; }
  // The calibrated TSC frequency in GHz (0 when the TSC is not used).
  double tsc_ghz() const noexcept { return method_ == ClockMethod::tsc ? 1.0 / ns_per_tick_ : 0.0; }

  static std::int64_t monotonic_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  // Whether /proc/cpuinfo lists both constant_tsc and nonstop_tsc.
  static bool invariant_tsc();

 private:
  ClockMethod method_ = ClockMethod::clock_gettime;
  std::uint64_t tsc0_ = 0;
  std::int64_t ns0_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace kite::bench
