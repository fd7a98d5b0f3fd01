#include "kite/bench/clock.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace kite::bench {

bool Clock::invariant_tsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant = constant || w == "constant_tsc";
      nonstop = nonstop || w == "nonstop_tsc";
    }
    return constant && nonstop;
  }
  return false;
}

Clock::Clock(bool prefer_tsc) {
#if defined(__x86_64__) || defined(__i386__)
  if (!prefer_tsc || !invariant_tsc()) return;
  // Two (monotonic, tsc) pairs 20 ms apart; each pair is the one with the
  // tightest bracket of a few tries, so a preemption does not skew it.
  const auto pair = [](std::int64_t& ns, std::uint64_t& tsc) {
    std::int64_t best = INT64_MAX;
    for (int i = 0; i < 16; ++i) {
      const std::uint64_t a = __rdtsc();
      const std::int64_t t = monotonic_ns();
      const std::uint64_t b = __rdtsc();
      if (static_cast<std::int64_t>(b - a) < best) {
        best = static_cast<std::int64_t>(b - a);
        ns = t;
        tsc = a + (b - a) / 2;
      }
    }
  };
  std::int64_t n1 = 0, n2 = 0;
  std::uint64_t t1 = 0, t2 = 0;
  pair(n1, t1);
  const std::int64_t until = n1 + 20'000'000;
  while (monotonic_ns() < until) {}
  pair(n2, t2);
  if (t2 <= t1 || n2 <= n1) return;
  ns_per_tick_ = static_cast<double>(n2 - n1) / static_cast<double>(t2 - t1);
  tsc0_ = t2;
  ns0_ = n2;
  method_ = ClockMethod::tsc;
#else
  (void)prefer_tsc;
#endif
}

}  // namespace kite::bench
