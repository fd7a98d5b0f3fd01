#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kite/bench/histogram.hpp"
#include "kite/bench/result.hpp"
#include "kite/bench/stats.hpp"

namespace kite::bench {
namespace {

TEST(HistogramTest, bucketHoldsItsValueWithThreeSignificantDigits) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t v = rng() % Histogram::kMaxTrackable;
    const std::size_t b = Histogram::index_of(v);
    ASSERT_LT(b, Histogram::kBuckets);
    const std::uint64_t lo = Histogram::lowest_of(b), w = Histogram::width_of(b);
    ASSERT_LE(lo, v);
    ASSERT_LT(v, lo + w);
    ASSERT_LE(w, std::max<std::uint64_t>(1, v / 1024)) << v;
  }
  EXPECT_EQ(Histogram::index_of(Histogram::kMaxTrackable), Histogram::kBuckets - 1);
}

TEST(HistogramTest, smallValuesAreExact) {
  Histogram h;
  for (int v = 1; v <= 1000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_DOUBLE_EQ(h.percentile(50), 500.0);
  EXPECT_DOUBLE_EQ(h.percentile(99), 990.0);
  EXPECT_DOUBLE_EQ(h.percentile(99.9), 999.0);
  EXPECT_DOUBLE_EQ(h.percentile(100), 1000.0);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_DOUBLE_EQ(h.mean(), 500.5);
}

TEST(HistogramTest, percentilesOfUniformDistributionWithinPrecision) {
  Histogram h;
  // 10 us .. 10 ms in 1 ns steps of 10: uniform.
  for (std::int64_t v = 10'000; v < 10'000'000; v += 10) h.record(v);
  for (double p : {10.0, 50.0, 90.0, 99.0, 99.9}) {
    const double expected = 10'000 + (10'000'000 - 10'000) * p / 100.0;
    EXPECT_NEAR(h.percentile(p), expected, expected / 1000.0) << p;
  }
}

TEST(HistogramTest, percentilesOfExponentialDistributionWithinPrecision) {
  Histogram h;
  const double mean = 20'000;  // 20 us
  const int n = 1'000'000;
  for (int i = 0; i < n; ++i) h.record(static_cast<std::int64_t>(-mean * std::log(1.0 - (i + 0.5) / n)));
  for (double p : {50.0, 90.0, 99.0, 99.9, 99.99}) {
    const double expected = -mean * std::log(1.0 - p / 100.0);
    EXPECT_NEAR(h.percentile(p), expected, expected / 1000.0 + 1.0) << p;
  }
  EXPECT_NEAR(h.mean(), mean, mean / 100.0);
}

TEST(HistogramTest, mergeEqualsRecordingEverythingInOne) {
  Histogram all, a, b;
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(10.0, 1.0);
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::int64_t>(d(rng));
    all.record(v);
    (i % 3 ? a : b).record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (double p : {1.0, 50.0, 99.0, 99.99}) EXPECT_DOUBLE_EQ(a.percentile(p), all.percentile(p));
}

TEST(HistogramTest, valuesBeyondRangeAreClampedAndCounted) {
  Histogram h;
  h.record(20'000'000'000);  // 20 s
  h.record(-5);
  EXPECT_EQ(h.overflow(), 1u);
  EXPECT_EQ(h.max(), Histogram::kMaxTrackable);
  EXPECT_EQ(h.min(), 0u);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0.0);
}

TEST(HistogramTest, cdfIsMonotoneBoundedAndReachesTheTail) {
  Histogram h;
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> d(1.0 / 15000.0);
  for (int i = 0; i < 1'000'000; ++i) h.record(static_cast<std::int64_t>(d(rng)) + 5000);
  const auto cdf = h.cdf(200);
  ASSERT_GE(cdf.size(), 50u);
  EXPECT_LE(cdf.size(), 200u);
  EXPECT_DOUBLE_EQ(cdf.front().first, static_cast<double>(h.min()));
  EXPECT_DOUBLE_EQ(cdf.back().first, static_cast<double>(h.max()));
  EXPECT_DOUBLE_EQ(cdf.back().second, 1.0);
  int tail = 0;
  for (std::size_t i = 1; i < cdf.size(); ++i) {
    EXPECT_GT(cdf[i].first, cdf[i - 1].first);
    EXPECT_GT(cdf[i].second, cdf[i - 1].second);
    if (cdf[i].second > 0.999) ++tail;
  }
  EXPECT_GE(tail, 20) << "the tail beyond p99.9 must be well covered";
}

TEST(StatsTest, medianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(StatsTest, coefficientOfVariationIsSampleStdevOverMean) {
  EXPECT_DOUBLE_EQ(coefficient_of_variation({10, 10, 10}), 0.0);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({1, 2, 3}), 0.5);
  EXPECT_DOUBLE_EQ(coefficient_of_variation({5}), 0.0);
}

RunFigures run(double p50, double p99, double max, bool open = false, double resp_p50 = 0) {
  RunFigures r;
  r.count = 1000;
  r.achieved_rate = 1000;
  r.service.p50 = p50;
  r.service.p99 = p99;
  r.service.max = max;
  if (open) {
    r.response = r.service;
    r.response->p50 = resp_p50;
  }
  return r;
}

TEST(StatsTest, cellSummaryTakesMediansTrueMaxAndMeanOfMaxima) {
  const std::vector<RunFigures> runs = {run(10, 30, 100), run(12, 20, 300), run(11, 40, 200)};
  const CellSummary s = summarize(runs);
  EXPECT_DOUBLE_EQ(s.service.p50, 11);
  EXPECT_DOUBLE_EQ(s.service.p99, 30);
  EXPECT_DOUBLE_EQ(s.service.max, 300);
  EXPECT_DOUBLE_EQ(s.service.mean_max, 200);
  EXPECT_EQ(s.count, 3000u);
  EXPECT_FALSE(s.response.has_value());
  EXPECT_DOUBLE_EQ(s.cv_p50, coefficient_of_variation({10, 12, 11}));
}

TEST(StatsTest, openLoopCvIsTakenOnResponseTime) {
  const std::vector<RunFigures> runs = {run(10, 30, 100, true, 10), run(10, 30, 100, true, 20)};
  const CellSummary s = summarize(runs);
  ASSERT_TRUE(s.response.has_value());
  EXPECT_DOUBLE_EQ(s.response->p50, 15);
  EXPECT_GT(s.cv_p50, 0.4);
}

TEST(VerdictTest, okWhenCompleteAndStable) {
  const std::vector<RunFigures> runs = {run(10, 30, 100), run(10.2, 30.5, 100), run(9.9, 29, 100)};
  const VerdictResult v = judge(runs, summarize(runs), 0, Thresholds{});
  EXPECT_EQ(v.verdict, Verdict::ok);
  EXPECT_TRUE(v.reasons.empty());
}

TEST(VerdictTest, partialWhenP50VariesTooMuch) {
  const std::vector<RunFigures> runs = {run(10, 30, 100), run(14, 30, 100), run(10, 30, 100)};
  const VerdictResult v = judge(runs, summarize(runs), 0, Thresholds{});
  EXPECT_EQ(v.verdict, Verdict::partial);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("p50"), std::string::npos);
}

TEST(VerdictTest, partialWhenP99VariesTooMuchButLimitIsAnOption) {
  const std::vector<RunFigures> runs = {run(10, 30, 100), run(10, 60, 100), run(10, 30, 100)};
  EXPECT_EQ(judge(runs, summarize(runs), 0, Thresholds{}).verdict, Verdict::partial);
  Thresholds loose;
  loose.cv_p99 = 1.0;
  EXPECT_EQ(judge(runs, summarize(runs), 0, loose).verdict, Verdict::ok);
}

TEST(VerdictTest, partialWhenARunIsIncomplete) {
  std::vector<RunFigures> runs = {run(10, 30, 100), run(10, 30, 100)};
  runs[1].complete = false;
  EXPECT_EQ(judge(runs, summarize(runs), 0, Thresholds{}).verdict, Verdict::partial);
}

TEST(VerdictTest, rateWithinFractionOfTargetIsNotSaturated) {
  const std::vector<RunFigures> runs = {run(10, 30, 100, true, 11), run(10, 30, 100, true, 11)};
  const CellSummary s = summarize(runs);  // 1000/s achieved
  EXPECT_EQ(judge(runs, s, 1000, Thresholds{}).verdict, Verdict::ok);
  EXPECT_EQ(judge(runs, s, 1010, Thresholds{}).verdict, Verdict::ok);  // 99.0%
}

TEST(VerdictTest, saturatedWhenRateFractionMissed) {
  const std::vector<RunFigures> runs = {run(10, 30, 100, true, 11), run(10, 30, 100, true, 11)};
  const VerdictResult v = judge(runs, summarize(runs), 1020, Thresholds{});
  EXPECT_EQ(v.verdict, Verdict::saturated);
  EXPECT_NE(v.reasons.at(0).find("rate"), std::string::npos);
}

TEST(VerdictTest, saturatedWhenInFlightCapHit) {
  std::vector<RunFigures> runs = {run(10, 30, 100, true, 11), run(10, 30, 100, true, 11)};
  runs[0].cap_hits = 1;
  EXPECT_EQ(judge(runs, summarize(runs), 1000, Thresholds{}).verdict, Verdict::saturated);
}

TEST(VerdictTest, saturatedWhenResponseFarAboveService) {
  const std::vector<RunFigures> runs = {run(10, 30, 100, true, 25), run(10, 30, 100, true, 25)};
  EXPECT_EQ(judge(runs, summarize(runs), 1000, Thresholds{}).verdict, Verdict::saturated);
  Thresholds t;
  t.response_over_service = 3.0;
  EXPECT_EQ(judge(runs, summarize(runs), 1000, t).verdict, Verdict::ok);
}

TEST(VerdictTest, closedLoopIsNeverSaturated) {
  std::vector<RunFigures> runs = {run(10, 30, 100), run(10, 30, 100)};
  runs[0].achieved_rate = 1;
  EXPECT_EQ(judge(runs, summarize(runs), 0, Thresholds{}).verdict, Verdict::ok);
}

TEST(ResultTest, readsBackWhatItWrites) {
  CellResult r;
  r.flavour = "cpp";
  r.transport = "kernel";
  r.model = "mono";
  r.loop = "open";
  r.sessions = 32;
  r.rate = 1000;
  r.warmup_s = 0.5;
  r.duration_s = 1;
  r.clock_method = "tsc";
  r.tsc_ghz = 3.4;
  r.idle = "spin";
  r.orders_total = 4000;
  r.runs = {run(10, 30, 100, true, 11), run(12, 40, 100, true, 13)};
  r.runs[1].lateness = Latency{1, 2, 3, 4, 5, 1.5};
  r.runs[1].client.polls = 77;
  r.summary = summarize(r.runs);
  r.verdict = judge(r.runs, r.summary, r.rate, r.thresholds);
  r.cdf = {{10, 0.5}, {30, 1.0}};
  r.stamp.git = "abc";
  const std::string text = to_json(r);
  const CellResult back = cell_result_from_json(text);
  EXPECT_EQ(to_json(back), text);
  EXPECT_EQ(back.runs.at(1).client.polls, 77u);
  EXPECT_THROW(cell_result_from_json("{\"cell\": {}}"), std::runtime_error);
}

}  // namespace
}  // namespace kite::bench
