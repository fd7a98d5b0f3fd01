// A log-linear latency histogram (HdrHistogram-like), in nanoseconds.
//
// Values are kept with three significant digits: each power of two above
// 2048 ns is split into 1024 equal sub-buckets, so a recorded value is known
// to within 1/2048 of itself (below 2048 ns, to the nanosecond). It covers
// 0 to 2^34 ns (about 17 s, beyond the 100 ns .. 10 s the lab needs); larger
// values are clamped to the top bucket and counted in overflow().
//
// The counts are allocated once, at construction. record() is O(1), never
// allocates and never throws. Each thread keeps its own instance; merge()
// adds one into another at the end.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace kite::bench {

class Histogram {
 public:
  static constexpr int kSubBits = 11;  // 2048 sub-buckets per power of two
  static constexpr std::uint64_t kSubCount = std::uint64_t{1} << kSubBits;
  static constexpr std::uint64_t kHalf = kSubCount / 2;
  static constexpr int kTopBit = 34;  // values < 2^34 ns are exact to 1/2048
  static constexpr std::uint64_t kMaxTrackable = (std::uint64_t{1} << kTopBit) - 1;
  static constexpr std::size_t kBuckets = kSubCount + (kTopBit - kSubBits) * kHalf;

  Histogram();
  Histogram(const Histogram& o);
  Histogram& operator=(const Histogram& o);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;

  // Records one value in nanoseconds (negative values count as 0).
  void record(std::int64_t ns) noexcept {
    std::uint64_t v = ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
    if (v > kMaxTrackable) [[unlikely]] {
      ++overflow_;
      v = kMaxTrackable;
    }
    ++counts_[index_of(v)];
    ++count_;
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }

  // Adds o's counts into this one.
  void merge(const Histogram& o) noexcept;
  // Forgets everything (keeps the allocation).
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t overflow() const noexcept { return overflow_; }
  // Exact minimum and maximum of what was recorded (0 when empty).
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max() const noexcept { return max_; }
  // Exact mean of what was recorded (0 when empty).
  double mean() const noexcept { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }

  // The value at percentile p (0..100): the smallest recorded value v such
  // that at least p% of the values are <= v, within the histogram's
  // precision (the middle of v's bucket, clamped to the exact min and max).
  // 0 when empty.
  double percentile(double p) const noexcept;
  // Fraction of the values that are <= ns (at bucket precision).
  double fraction_at_or_below(std::uint64_t ns) const noexcept;

  // A cumulative distribution of at most max_points (value_ns, fraction)
  // pairs, non-decreasing in both. Points are spread evenly in
  // log(1 / (1 - fraction)), so the tail (p99, p99.9, ... max) is well
  // covered; the first point is the minimum and the last the maximum with
  // fraction 1. Empty when nothing was recorded. Set-up/report time only.
  std::vector<std::pair<double, double>> cdf(std::size_t max_points = 200) const;

  // Bucket arithmetic, public for tests.
  static std::size_t index_of(std::uint64_t v) noexcept {
    if (v < kSubCount) return static_cast<std::size_t>(v);
    const int shift = std::bit_width(v) - kSubBits;  // >= 1
    return static_cast<std::size_t>(kSubCount + static_cast<std::uint64_t>(shift - 1) * kHalf + ((v >> shift) - kHalf));
  }
  static std::uint64_t lowest_of(std::size_t i) noexcept {
    if (i < kSubCount) return i;
    const std::uint64_t k = i - kSubCount;
    const int shift = static_cast<int>(k / kHalf) + 1;
    return (kHalf + k % kHalf) << shift;
  }
  static std::uint64_t width_of(std::size_t i) noexcept {
    if (i < kSubCount) return 1;
    return std::uint64_t{1} << (static_cast<int>((i - kSubCount) / kHalf) + 1);
  }

 private:
  double representative(std::size_t i) const noexcept;

  std::unique_ptr<std::uint64_t[]> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t overflow_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
};

}  // namespace kite::bench
