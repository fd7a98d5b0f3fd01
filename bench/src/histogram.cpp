#include "kite/bench/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kite::bench {

Histogram::Histogram() : counts_(new std::uint64_t[kBuckets]()) {}

Histogram::Histogram(const Histogram& o) : Histogram() { *this = o; }

Histogram& Histogram::operator=(const Histogram& o) {
  if (this == &o) return *this;
  if (!counts_) counts_.reset(new std::uint64_t[kBuckets]());
  std::memcpy(counts_.get(), o.counts_.get(), kBuckets * sizeof(std::uint64_t));
  count_ = o.count_;
  overflow_ = o.overflow_;
  sum_ = o.sum_;
  min_ = o.min_;
  max_ = o.max_;
  return *this;
}

void Histogram::merge(const Histogram& o) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  overflow_ += o.overflow_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

void Histogram::reset() noexcept {
  std::memset(counts_.get(), 0, kBuckets * sizeof(std::uint64_t));
  count_ = overflow_ = sum_ = max_ = 0;
  min_ = ~std::uint64_t{0};
}

double Histogram::representative(std::size_t i) const noexcept {
  // The middle of the bucket halves the worst-case error; the exact extremes
  // are better still where they fall in it.
  const double mid = static_cast<double>(lowest_of(i)) + static_cast<double>(width_of(i) - 1) / 2.0;
  return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
}

double Histogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 100.0);
  // The small slack keeps 99.9% of 1000 at 999 despite rounding.
  auto target = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_) - 1e-9));
  target = std::clamp<std::uint64_t>(target, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= target) return representative(i);
  }
  return static_cast<double>(max_);
}

double Histogram::fraction_at_or_below(std::uint64_t ns) const noexcept {
  if (count_ == 0) return 0.0;
  const std::size_t last = index_of(std::min(ns, kMaxTrackable));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i <= last; ++i) seen += counts_[i];
  return static_cast<double>(seen) / static_cast<double>(count_);
}

std::vector<std::pair<double, double>> Histogram::cdf(std::size_t max_points) const {
  std::vector<std::pair<double, double>> out;
  if (count_ == 0 || max_points < 2) return out;
  // Levels x = -log10(1 - q) from 0 to log10(count): the last level reaches
  // the single highest sample. Each level maps to the bucket holding that
  // quantile; the point is that bucket's value and its cumulative fraction.
  const double total = static_cast<double>(count_);
  const double x_max = std::log10(total) + 0.3;
  const std::size_t steps = max_points - 1;
  std::vector<std::uint64_t> targets;
  targets.reserve(max_points);
  for (std::size_t s = 0; s < steps; ++s) {
    const double x = x_max * static_cast<double>(s) / static_cast<double>(steps);
    const double q = 1.0 - std::pow(10.0, -x);
    targets.push_back(std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q * total)), 1, count_));
  }
  targets.push_back(count_);
  std::uint64_t seen = 0;
  std::size_t t = 0;
  for (std::size_t i = 0; i < kBuckets && t < targets.size(); ++i) {
    if (counts_[i] == 0) continue;
    seen += counts_[i];
    if (seen < targets[t]) continue;
    const double v = seen == count_ ? static_cast<double>(max_) : representative(i);
    out.emplace_back(v, static_cast<double>(seen) / total);
    while (t < targets.size() && targets[t] <= seen) ++t;
  }
  if (!out.empty()) out.front().first = std::min(out.front().first, static_cast<double>(min()));
  return out;
}

}  // namespace kite::bench
