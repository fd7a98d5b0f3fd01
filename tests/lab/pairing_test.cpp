// Paired groups: round orders, the bootstrap interval of the median ratio,
// verdicts, the stopping rule, and (DriftingHost) why pairing exists: on a
// host that flips between a fast and a slow state, members measured one after
// another can come out in the wrong order, members measured in rounds do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "kite/lab/pairing.hpp"

using namespace kite::lab;

namespace {

std::vector<double> lognormal(std::size_t n, double center, double sigma, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<double> v(n);
  for (double& x : v) x = center * std::exp(noise(gen));
  return v;
}

TEST(PairingTest, roundOrderIsAPermutationFixedBySeedAndRound) {
  std::set<std::size_t> firsts;
  for (std::size_t round = 0; round < 40; ++round) {
    const auto order = round_order(5, 42, round);
    std::vector<std::size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(order, round_order(5, 42, round)) << "the same seed and round give the same order";
    firsts.insert(order.front());
  }
  EXPECT_EQ(firsts.size(), 5u) << "over 40 rounds every member goes first at least once";
  bool differs = false;
  for (std::size_t round = 0; round < 10; ++round) differs |= round_order(5, 42, round) != round_order(5, 43, round);
  EXPECT_TRUE(differs) << "another seed draws other orders";
}

TEST(PairingTest, constantRatiosGiveAPointInterval) {
  const RatioInterval r = median_interval(std::vector<double>(10, 1.2), 1, PairingRule{});
  EXPECT_DOUBLE_EQ(r.median, 1.2);
  EXPECT_DOUBLE_EQ(r.low, 1.2);
  EXPECT_DOUBLE_EQ(r.high, 1.2);
  EXPECT_EQ(verdict_of(r), PairVerdict::slower);
  EXPECT_EQ(verdict_of(median_interval(std::vector<double>(10, 0.8), 1, PairingRule{})), PairVerdict::faster);
}

TEST(PairingTest, aDifferenceWithinTheResolutionIsLevel) {
  const RatioInterval r{0.99, 0.95, 0.998};  // an A/A pair measured here: 1% apart, a tight interval
  EXPECT_EQ(verdict_of(r, 0.02), PairVerdict::level);
  EXPECT_EQ(verdict_of(r, 0.0), PairVerdict::faster);
  EXPECT_EQ(verdict_of({1.05, 1.03, 1.07}, 0.02), PairVerdict::slower);
  EXPECT_EQ(verdict_of({1.05, 1.01, 1.07}, 0.02), PairVerdict::level);
}

TEST(PairingTest, intervalHoldsTheMedianAndIsFixedBySeed) {
  const auto ratios = lognormal(20, 1.1, 0.05, 7);
  const RatioInterval a = median_interval(ratios, 9, PairingRule{});
  const RatioInterval b = median_interval(ratios, 9, PairingRule{});
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LE(a.low, a.median);
  EXPECT_GE(a.high, a.median);
  EXPECT_LT(a.low, a.high);
  EXPECT_EQ(verdict_of(a), PairVerdict::slower) << a.low << " .. " << a.high;
}

TEST(PairingTest, intervalNarrowsWithMoreRounds) {
  const auto many = lognormal(60, 1.0, 0.05, 3);
  const std::vector<double> few(many.begin(), many.begin() + 8);
  const double w_few = median_interval(few, 5, PairingRule{}).relative_width();
  const double w_many = median_interval(many, 5, PairingRule{}).relative_width();
  EXPECT_LT(w_many, w_few);
}

TEST(PairingTest, theSameEngineTwiceComesOutLevel) {
  // A/A: both members draw from one distribution; the ratio's interval holds 1.
  PairedGroup g({"cpp", "cpp-again"}, 0, PairingRule{}, 11);
  const auto a = lognormal(30, 10.0, 0.03, 21), b = lognormal(30, 10.0, 0.03, 22);
  for (std::size_t i = 0; i < a.size() && !g.done(); ++i) g.add_round({a[i], b[i]});
  const auto s = g.summary();
  EXPECT_EQ(s[1].verdict, PairVerdict::level) << s[1].interval.low << " .. " << s[1].interval.high;
  EXPECT_TRUE(s[0].reference);
}

TEST(PairingTest, stopsAtTheTargetNotBeforeTheMinimumRounds) {
  PairingRule rule;
  PairedGroup g({"cpp", "rust-pure"}, 0, rule, 1);
  for (int i = 0; i < rule.min_rounds - 1; ++i) {
    g.add_round({10.0, 11.0});
    EXPECT_EQ(g.stop(), PairingStop::running) << "round " << i + 1;
  }
  g.add_round({10.0, 11.0});
  EXPECT_EQ(g.stop(), PairingStop::target);
  EXPECT_EQ(g.rounds(), rule.min_rounds);
  EXPECT_DOUBLE_EQ(g.width_reached(), 0);
}

TEST(PairingTest, aNoisyGroupStopsAtTheRoundLimit) {
  PairingRule rule;
  rule.max_rounds = 12;
  PairedGroup g({"cpp", "java-pure"}, 0, rule, 1);
  const auto noisy = lognormal(40, 1.0, 0.5, 4);
  for (std::size_t i = 0; !g.done(); ++i) g.add_round({10.0, 10.0 * noisy[i]});
  EXPECT_EQ(g.stop(), PairingStop::round_limit);
  EXPECT_EQ(g.rounds(), 12);
  EXPECT_GT(g.width_reached(), rule.target);
}

TEST(PairingTest, aFailedRunLeavesItsRatioOut) {
  PairedGroup g({"cpp", "raw", "quickfix"}, 0, PairingRule{}, 1);
  g.add_round({10, 9, 20});
  g.add_round({10, -1, 20});  // raw's run failed
  g.add_round({-1, 9, 20});   // the reference's run failed: no ratio this round
  const auto s = g.summary();
  EXPECT_EQ(s[1].ratios.size(), 1u);
  EXPECT_EQ(s[2].ratios.size(), 2u);
}

// The host flips state between a member's two reference runs in round 3:
// the geometric mean of a slow and a fast run matches neither state, so that
// bracket gives no ratio; the reference's ordinary spread (about 2%) keeps the rest.
TEST(PairingTest, anUnsteadyBracketGivesNoRatio) {
  PairedGroup g({"cpp", "rust-pure"}, 0, PairingRule{}, 1);
  const std::vector<std::size_t> runs = {0, 1, 0};
  for (int r = 0; r < 8; ++r) {
    const double wobble = r % 2 ? 1.02 : 0.99;
    if (r == 2)
      g.add_round(runs, {19.0, 12.5, 10.0});  // slow, then the member and the reference fast
    else
      g.add_round(runs, {10.0, 12.5 * wobble, 10.0 * wobble});
  }
  const auto s = g.summary();
  EXPECT_EQ(s[1].ratios.size(), 7u);
  EXPECT_EQ(s[1].unsteady_rounds, std::vector<std::size_t>{3});
  EXPECT_GT(s[1].interval.low, 1.2);
  EXPECT_EQ(s[1].verdict, PairVerdict::slower);
}

// A group whose reference moves 30% between every two runs: no bracket
// stands out against that spread, so none is unsteady.
TEST(PairingTest, aWideButSteadySpreadDropsNoBracket) {
  PairedGroup g({"cpp", "raw"}, 0, PairingRule{}, 1);
  for (int r = 0; r < 10; ++r) {
    const double a = r % 2 ? 10.0 : 13.0, b = r % 2 ? 13.0 : 10.0;
    g.add_round({0, 1, 0}, {a, 11.0, b});
  }
  const auto s = g.summary();
  EXPECT_EQ(s[1].ratios.size(), 10u);
  EXPECT_TRUE(s[1].unsteady_rounds.empty());
}

TEST(PairingTest, refusesAGroupOfOne) {
  EXPECT_THROW(PairedGroup({"cpp"}, 0, PairingRule{}, 1), std::invalid_argument);
  EXPECT_THROW(PairedGroup({"cpp", "raw"}, 2, PairingRule{}, 1), std::invalid_argument);
}

// A host that flips between a fast and a slow state (x1.5) every `period`
// seconds, from a phase the seed draws; a run takes one second and reports
// its member's cost in the state at its middle, with 1% noise.
struct DriftingHost {
  double period = 12;
  double phase;
  std::mt19937_64 noise_gen;
  double now = 0;

  explicit DriftingHost(std::uint64_t seed) : phase(0), noise_gen(seed) {
    phase = std::uniform_real_distribution<double>(0, 2 * period)(noise_gen);
  }
  double run(double cost) {
    const double mid = now + 0.5;
    now += 1.0;
    const bool slow = std::fmod(mid + phase, 2 * period) >= period;
    return cost * (slow ? 1.5 : 1.0) * std::exp(std::normal_distribution<double>(0, 0.01)(noise_gen));
  }
};

const std::vector<double> kCosts = {10.0, 11.0, 12.1};  // us: each member 10% slower than the one before

bool sequential_orders_right(std::uint64_t seed) {
  DriftingHost host(seed);
  std::vector<double> p50;
  for (double cost : kCosts) {
    std::vector<double> runs;
    for (int r = 0; r < 5; ++r) runs.push_back(host.run(cost));
    std::sort(runs.begin(), runs.end());
    p50.push_back(runs[2]);
  }
  return p50[0] < p50[1] && p50[1] < p50[2];
}

// A bracketed round on `host`: every run of next_order() in turn.
void run_round(PairedGroup& g, DriftingHost& host, const std::vector<double>& costs) {
  const std::vector<std::size_t> runs = g.next_order();
  std::vector<double> p50;
  for (std::size_t m : runs) p50.push_back(host.run(costs[m]));
  g.add_round(runs, p50);
}

bool paired_orders_right(std::uint64_t seed) {
  DriftingHost host(seed);
  PairedGroup g({"a", "b", "c"}, 0, PairingRule{}, seed);
  while (!g.done()) run_round(g, host, kCosts);
  const auto s = g.summary();
  return s[1].verdict == PairVerdict::slower && s[2].verdict == PairVerdict::slower &&
         s[2].interval.low > s[1].interval.high;
}

TEST(PairingTest, roundsOrderMembersRightOnADriftingHostWhereSequentialRunsDoNot) {
  int sequential_wrong = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    sequential_wrong += !sequential_orders_right(seed);
    EXPECT_TRUE(paired_orders_right(seed)) << "seed " << seed;
  }
  EXPECT_GE(sequential_wrong, 1) << "the drifting host should fool sequential runs for at least one seed";
}

TEST(PairingTest, aBracketedRoundRunsTheReferenceBesideEveryMember) {
  for (std::size_t ref = 0; ref < 4; ++ref) {
    const auto runs = bracketed_order(4, ref, 7, 2);
    ASSERT_EQ(runs.size(), 7u);
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (i % 2 == 0) {
        EXPECT_EQ(runs[i], ref) << "run " << i;
      } else {
        EXPECT_NE(runs[i], ref) << "run " << i;
        others.push_back(runs[i]);
      }
    }
    std::sort(others.begin(), others.end());
    EXPECT_EQ(std::adjacent_find(others.begin(), others.end()), others.end()) << "a member twice in a round";
  }
  EXPECT_EQ(bracketed_order(4, 1, 7, 2), bracketed_order(4, 1, 7, 2));
  EXPECT_NE(bracketed_order(6, 0, 7, 2), bracketed_order(6, 0, 7, 3));
}

TEST(PairingTest, aBracketedRatioDividesByTheReferenceRunsBesideIt) {
  PairedGroup g({"cpp", "raw", "quickfix"}, 0, PairingRule{}, 1);
  g.add_round({0, 1, 0, 2, 0}, {10, 12, 20, 30, 40});  // raw over sqrt(10*20), quickfix over sqrt(20*40)
  g.add_round({0, 2, 0, 1, 0}, {10, 30, -1, 9, 10});   // the middle reference failed: each its one neighbour
  g.add_round({0, 1, 0, 2, 0}, {-1, 12, -1, 30, 40});  // raw has no reference beside it
  const auto s = g.summary();
  ASSERT_EQ(s[1].ratios.size(), 2u);
  EXPECT_DOUBLE_EQ(s[1].ratios[0], 12 / std::sqrt(200.0));
  EXPECT_DOUBLE_EQ(s[1].ratios[1], 0.9);
  ASSERT_EQ(s[2].ratios.size(), 3u);
  EXPECT_DOUBLE_EQ(s[2].ratios[0], 30 / std::sqrt(800.0));
  EXPECT_DOUBLE_EQ(s[2].ratios[1], 3.0);
  EXPECT_DOUBLE_EQ(s[2].ratios[2], 0.75);
  EXPECT_DOUBLE_EQ(g.p50s()[0][0], std::cbrt(10.0 * 20 * 40)) << "the reference's p50 of a round";
  EXPECT_THROW(g.add_round({0, 1}, {10}), std::invalid_argument);
  EXPECT_THROW(g.add_round({0, 3}, {10, 10}), std::invalid_argument);
}

TEST(PairingTest, bracketingNarrowsTheIntervalWhenTheHostDriftsWithinARound) {
  // The host changes state every 4 runs, faster than an unbracketed round of
  // six members: the reference run far from a member says little about it.
  const std::vector<double> costs = {10, 10.5, 11, 11.5, 12, 12.5};
  std::vector<std::string> names = {"a", "b", "c", "d", "e", "f"};
  PairingRule rule;
  rule.min_rounds = rule.max_rounds = 12;
  double plain = 0, bracketed = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    DriftingHost h1(seed), h2(seed);
    h1.period = h2.period = 4;
    PairedGroup a(names, 0, rule, seed), b(names, 0, rule, seed);
    while (!a.done()) {
      std::vector<double> p50(costs.size());
      for (std::size_t m : round_order(costs.size(), seed, a.rounds())) p50[m] = h1.run(costs[m]);
      a.add_round(p50);
    }
    while (!b.done()) run_round(b, h2, costs);
    plain += a.width_reached();
    bracketed += b.width_reached();
  }
  EXPECT_LT(bracketed, plain / 2) << "over five seeds" << "bracketed " << bracketed / 5 << ", plain " << plain / 5 << " (mean widths)";
}

TEST(PairingTest, aMemberWithFewRatiosNeitherSettlesNorRanks) {
  PairingRule rule;
  rule.max_rounds = 12;
  PairedGroup g({"cpp", "raw", "quickfix"}, 0, rule, 1);
  for (int i = 0; i < rule.max_rounds; ++i) g.add_round({10, i < rule.min_ratios - 1 ? 5.0 : -1.0, 20});
  EXPECT_EQ(g.stop(), PairingStop::round_limit) << "raw's four ratios cannot settle the group";
  const auto s = g.summary();
  EXPECT_EQ(s[1].ratios.size(), static_cast<std::size_t>(rule.min_ratios - 1));
  EXPECT_DOUBLE_EQ(s[1].interval.relative_width(), 0) << "four equal ratios: a zero-width interval";
  EXPECT_EQ(s[1].verdict, PairVerdict::level) << "too few ratios to rank";
  EXPECT_EQ(s[2].verdict, PairVerdict::slower);
}

TEST(PairingTest, aSettledMemberLeavesAndTheOthersGoOnWithinTheRunBudget) {
  PairingRule rule;
  rule.max_rounds = 20;
  rule.budget_rounds = 10;  // 10 full rounds of three members: 50 runs
  PairedGroup g({"cpp", "raw", "quickfix"}, 0, rule, 3);
  while (!g.done()) {
    const std::vector<std::size_t> runs = g.next_order();
    std::vector<double> p50;
    for (std::size_t m : runs)  // raw a steady 0.8; quickfix 1.5 or 2.5 by round: never within +-5%
      p50.push_back(m == 0 ? 10.0 : m == 1 ? 8.0 : (g.rounds() % 2 ? 15.0 : 25.0));
    if (g.rounds() >= rule.min_rounds) {
      EXPECT_EQ(runs.size(), 3u) << "round " << g.rounds() << ": raw settled, only quickfix runs beside cpp";
      EXPECT_EQ(std::count(runs.begin(), runs.end(), std::size_t{1}), 0) << "round " << g.rounds();
    }
    g.add_round(runs, p50);
  }
  // 8 full rounds (40 runs), then rounds of 3 runs while 50 allows: 43, 46, 49.
  EXPECT_EQ(g.rounds(), 11);
  EXPECT_EQ(g.runs(), 49);
  EXPECT_EQ(g.budget_runs(), 50);
  EXPECT_EQ(g.stop(), PairingStop::run_budget);
  EXPECT_STREQ(to_string(g.stop()), "run budget");
  const auto s = g.summary();
  EXPECT_EQ(s[1].ratios.size(), 8u);
  EXPECT_DOUBLE_EQ(s[1].interval.median, 0.8);
  EXPECT_EQ(s[2].ratios.size(), 11u);
  EXPECT_TRUE(g.settled(1));
  EXPECT_FALSE(g.settled(2));
  EXPECT_EQ(g.active(), std::vector<std::size_t>{2});
}

TEST(PairingTest, aGroupWhoseMembersAllSettleStopsOnTarget) {
  PairingRule rule;
  rule.max_rounds = 20;
  PairedGroup g({"cpp", "raw", "quickfix"}, 0, rule, 3);
  while (!g.done()) {
    const std::vector<std::size_t> runs = g.next_order();
    std::vector<double> p50;
    for (std::size_t m : runs) p50.push_back(m == 0 ? 10.0 : m == 1 ? 8.0 : 20.0);
    g.add_round(runs, p50);
  }
  EXPECT_EQ(g.stop(), PairingStop::target);
  EXPECT_EQ(g.rounds(), rule.min_rounds);
  EXPECT_TRUE(g.active().empty());
}

}  // namespace
