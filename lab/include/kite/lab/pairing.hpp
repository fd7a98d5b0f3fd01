// Paired groups: the cells of one group differ in one dimension (the flavour
// by default) and are measured in interleaved rounds, each member once per
// round in a seeded random order, so that a host that drifts between fast and
// slow states moves every member of a round alike. A round is bracketed: the
// reference runs before the first member, between every two and after the
// last, and each member is divided by the reference runs beside it, because
// this host's state holds for a second or two and not for a whole round; a
// bracket whose two reference runs disagree far beyond the group's usual
// spread saw the host change state and gives no ratio.
// Members are judged by those per-round ratios: their median, its
// percentile-bootstrap interval, and a verdict.
//
// Everything here is a pure function of its inputs and a seed: the same
// rounds and seed give the same order, interval and verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kite::lab {

/// A member against the reference: `faster` and `slower` when the ratio's
/// interval lies wholly below or above 1 and clear of the lab's resolution
/// around it (PairingRule::resolution), `level` otherwise.
enum class PairVerdict { faster, slower, level };

/// "faster", "slower" or "level".
const char* to_string(PairVerdict v);

/// When a group stops, and how its intervals are drawn.
struct PairingRule {
  int min_rounds = 8;   ///< no group stops before this many rounds
  int max_rounds = 30;  ///< the round limit
  /// The group spends at most the runs of this many full rounds (0: max_rounds).
  /// A settled member leaves the rounds, so later rounds are shorter and more
  /// of them fit in the same runs.
  int budget_rounds = 0;
  /// A ratio is settled when both ends of its interval lie within this
  /// fraction of its median: high <= median * (1 + target) and
  /// low >= median * (1 - target).
  double target = 0.05;
  double confidence = 0.95;  ///< of the percentile-bootstrap interval
  int resamples = 2000;      ///< bootstrap resamples per interval
  /// Differences within +-resolution of 1 are `level`: an interval must lie
  /// wholly below 1 - resolution (or above 1 + resolution) to rank. One
  /// binary under two names measured 1% apart here (set-up, not engine).
  double resolution = 0.02;
  /// A member with fewer ratios than this (rounds the audit refused or that
  /// failed) is `level`: a bootstrap over so few says nothing.
  int min_ratios = 5;
  /// A member's bracket is unsteady, and gives no ratio that round, when the
  /// two reference runs beside it differ (in log) by more than
  /// `unsteady_factor` times the group's median difference between
  /// neighbouring reference runs, and by more than `unsteady_floor`: the host
  /// changed state inside the bracket, and a geometric mean of two states
  /// matches neither.
  double unsteady_factor = 4;
  double unsteady_floor = 0.10;
};

/// The median of per-round ratios and its interval.
struct RatioInterval {
  double median = 0, low = 0, high = 0;
  /// The larger distance of an end from the median, over the median
  /// (0.05 reads "+-5%"); 0 for an empty interval.
  double relative_width() const;
};

/// The order of round `round` (from 0): a permutation of 0..members-1 drawn
/// from a generator seeded by `seed` and `round` alone.
std::vector<std::size_t> round_order(std::size_t members, std::uint64_t seed, std::size_t round);

/// The runs of bracketed round `round`: the members other than `reference`
/// in round_order() over them, with `reference` before the first, between
/// every two and after the last (R m1 R m2 ... mk R: 2k+1 runs).
std::vector<std::size_t> bracketed_order(std::size_t members, std::size_t reference, std::uint64_t seed,
                                         std::size_t round);

/// The same over `active` alone (members other than `reference`, in any
/// order): R a1 R a2 ... R, the `active` members drawn by round_order().
std::vector<std::size_t> bracketed_order(const std::vector<std::size_t>& active, std::size_t reference,
                                         std::uint64_t seed, std::size_t round);

/// The median of `ratios` with its percentile-bootstrap interval at
/// `rule.confidence` over `rule.resamples` resamples drawn from `seed`.
/// An empty input gives a zero interval.
RatioInterval median_interval(const std::vector<double>& ratios, std::uint64_t seed, const PairingRule& rule);

/// The verdict an interval gives (see PairVerdict).
PairVerdict verdict_of(const RatioInterval& r, double resolution = 0.02);

/// Why a group stopped.
enum class PairingStop {
  running,      ///< neither the target nor the round limit reached yet
  target,       ///< every member's interval settled, each over at least min_rounds ratios
  round_limit,  ///< max_rounds run, some interval still wider than the target
  run_budget,   ///< the next round would spend more runs than budget_rounds full rounds
};

/// "running", "target", "round limit" or "run budget".
const char* to_string(PairingStop s);

/// One paired group while it is measured: the rounds so far and what they give.
class PairedGroup {
 public:
  /// `members` names the cells (flavours, or values of the one server
  /// setting that differs); `reference` indexes the one the others are
  /// divided by. Throws std::invalid_argument for fewer than two members or
  /// a reference out of range.
  PairedGroup(std::vector<std::string> members, std::size_t reference, PairingRule rule, std::uint64_t seed);

  /// The runs of the next round, bracketed, over the members not yet
  /// settled (indexes into members()).
  std::vector<std::size_t> next_order() const { return bracketed_order(active(), reference_, seed_, rounds_.size()); }

  /// A member is settled, and leaves the rounds, once it has min_rounds
  /// ratios and its interval lies within the target.
  bool settled(std::size_t member) const;
  /// The members other than the reference that are not settled.
  std::vector<std::size_t> active() const;
  /// Runs recorded so far, and the most the group may spend.
  int runs() const { return runs_; }
  int budget_runs() const;

  /// Records a bracketed round: `runs` as next_order() gave it and the judged
  /// p50 of each run (<= 0: the run failed). A member's ratio is its p50 over
  /// the geometric mean of the reference runs on either side of it, or over
  /// the one of them that succeeded; with neither, its own run failed, or an
  /// unsteady bracket (PairingRule::unsteady_factor), it has no ratio that
  /// round. The reference's p50 of the round is the geometric mean of its
  /// runs that succeeded. Throws std::invalid_argument when the sizes differ
  /// or a run names no member.
  void add_round(const std::vector<std::size_t>& runs, const std::vector<double>& p50);

  /// Records an unbracketed round: each member ran once, in members() order
  /// of `p50`, and is divided by the reference's one run. A value <= 0 marks
  /// a failed run: its ratio is left out, a failed reference leaves the round
  /// out for all.
  void add_round(const std::vector<double>& p50);

  int rounds() const { return static_cast<int>(rounds_.size()); }
  PairingStop stop() const;
  bool done() const { return stop() != PairingStop::running; }

  struct Member {
    std::string name;
    bool reference = false;
    std::vector<double> ratios;  ///< one per round it and the reference both ran
    std::vector<std::size_t> unsteady_rounds;  ///< rounds (from 1) its bracket was unsteady: no ratio
    RatioInterval interval;      ///< zero for the reference
    PairVerdict verdict = PairVerdict::level;
  };
  /// Every member with its ratios, interval and verdict (the reference's is `level`).
  std::vector<Member> summary() const;
  /// The widest relative_width() among the non-reference members.
  double width_reached() const;

  const std::vector<std::string>& members() const { return members_; }
  std::size_t reference() const { return reference_; }
  std::uint64_t seed() const { return seed_; }
  const PairingRule& rule() const { return rule_; }
  /// Each round's p50 per member, in members() order (<= 0: none that round).
  const std::vector<std::vector<double>>& p50s() const { return rounds_; }

 private:
  // A member's p50 in a round and the reference runs beside it (<= 0: none).
  struct Bracket {
    double own = -1, before = -1, after = -1;
    bool closed() const { return before > 0 && after > 0; }  // both reference runs measured
  };
  double unsteady_limit() const;
  std::vector<double> ratios_of(std::size_t member, std::vector<std::size_t>* unsteady = nullptr) const;
  RatioInterval interval_of(std::size_t member) const;

  std::vector<std::string> members_;
  std::size_t reference_;
  PairingRule rule_;
  std::uint64_t seed_;
  std::vector<std::vector<double>> rounds_;  ///< p50 per member per round
  std::vector<std::vector<Bracket>> brackets_;  ///< per member per round
  int runs_ = 0;
};

}  // namespace kite::lab
