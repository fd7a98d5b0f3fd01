#include "kite/lab/pairing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace kite::lab {

namespace {

// splitmix64: spreads nearby seeds (a seed and round 0, 1, 2...) into
// unrelated generator states.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Linear interpolation between the order statistics of a sorted sample.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// How far apart (in log) the two reference runs of a bracket are.
double log_move(double before, double after) { return std::abs(std::log(after / before)); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

}  // namespace

const char* to_string(PairVerdict v) {
  switch (v) {
    case PairVerdict::faster: return "faster";
    case PairVerdict::slower: return "slower";
    case PairVerdict::level: return "level";
  }
  return "?";
}

const char* to_string(PairingStop s) {
  switch (s) {
    case PairingStop::running: return "running";
    case PairingStop::target: return "target";
    case PairingStop::round_limit: return "round limit";
    case PairingStop::run_budget: return "run budget";
  }
  return "?";
}

double RatioInterval::relative_width() const {
  if (median <= 0) return 0;
  return std::max(high - median, median - low) / median;
}

std::vector<std::size_t> round_order(std::size_t members, std::uint64_t seed, std::size_t round) {
  std::vector<std::size_t> order(members);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 gen(mix(seed ^ mix(round + 1)));
  // Fisher-Yates by hand: std::shuffle's draws differ between standard libraries.
  for (std::size_t i = members; i > 1; --i) std::swap(order[i - 1], order[gen() % i]);
  return order;
}

std::vector<std::size_t> bracketed_order(std::size_t members, std::size_t reference, std::uint64_t seed,
                                         std::size_t round) {
  std::vector<std::size_t> others;
  for (std::size_t m = 0; m < members; ++m)
    if (m != reference) others.push_back(m);
  return bracketed_order(others, reference, seed, round);
}

std::vector<std::size_t> bracketed_order(const std::vector<std::size_t>& active, std::size_t reference,
                                         std::uint64_t seed, std::size_t round) {
  std::vector<std::size_t> runs{reference};
  for (std::size_t k : round_order(active.size(), seed, round)) {
    runs.push_back(active[k]);
    runs.push_back(reference);
  }
  return runs;
}

RatioInterval median_interval(const std::vector<double>& ratios, std::uint64_t seed, const PairingRule& rule) {
  RatioInterval r;
  if (ratios.empty()) return r;
  r.median = median_of(ratios);
  std::mt19937_64 gen(mix(seed));
  std::vector<double> medians(static_cast<std::size_t>(std::max(rule.resamples, 1)));
  std::vector<double> sample(ratios.size());
  for (double& m : medians) {
    for (double& s : sample) s = ratios[gen() % ratios.size()];
    m = median_of(sample);
  }
  std::sort(medians.begin(), medians.end());
  const double tail = (1 - rule.confidence) / 2;
  r.low = std::min(quantile(medians, tail), r.median);
  r.high = std::max(quantile(medians, 1 - tail), r.median);
  return r;
}

PairVerdict verdict_of(const RatioInterval& r, double resolution) {
  if (r.median <= 0) return PairVerdict::level;  // no ratio at all: nothing to rank
  if (r.high < 1 - resolution) return PairVerdict::faster;
  if (r.low > 1 + resolution) return PairVerdict::slower;
  return PairVerdict::level;
}

PairedGroup::PairedGroup(std::vector<std::string> members, std::size_t reference, PairingRule rule, std::uint64_t seed)
    : members_(std::move(members)), reference_(reference), rule_(rule), seed_(seed) {
  if (members_.size() < 2) throw std::invalid_argument("a paired group needs at least two members");
  if (reference_ >= members_.size()) throw std::invalid_argument("the reference is not a member of the group");
}

void PairedGroup::add_round(const std::vector<std::size_t>& runs, const std::vector<double>& p50) {
  if (runs.size() != p50.size()) throw std::invalid_argument("a round gives one p50 per run");
  std::vector<double> own(members_.size(), -1);
  double ref_log = 0;
  int ref_runs = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i] >= members_.size()) throw std::invalid_argument("a run names no member of the group");
    if (runs[i] == reference_ && p50[i] > 0) {
      ref_log += std::log(p50[i]);
      ++ref_runs;
    }
  }
  if (ref_runs > 0) own[reference_] = std::exp(ref_log / ref_runs);
  auto reference_at = [&](std::size_t i) { return runs[i] == reference_ && p50[i] > 0 ? p50[i] : -1.0; };
  std::vector<Bracket> brackets(members_.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i] == reference_ || p50[i] <= 0) continue;
    own[runs[i]] = p50[i];
    brackets[runs[i]] = {p50[i], i > 0 ? reference_at(i - 1) : -1, i + 1 < runs.size() ? reference_at(i + 1) : -1};
  }
  rounds_.push_back(std::move(own));
  brackets_.push_back(std::move(brackets));
  runs_ += static_cast<int>(runs.size());
}

void PairedGroup::add_round(const std::vector<double>& p50) {
  if (p50.size() != members_.size()) throw std::invalid_argument("a round gives one p50 per member");
  std::vector<Bracket> brackets(members_.size());
  const double ref = p50[reference_];
  for (std::size_t m = 0; m < members_.size(); ++m)
    if (m != reference_ && p50[m] > 0) brackets[m] = {p50[m], ref, -1};
  rounds_.push_back(p50);
  brackets_.push_back(std::move(brackets));
  runs_ += static_cast<int>(p50.size());
}

// The log difference beyond which two reference runs are not one host state.
double PairedGroup::unsteady_limit() const {
  std::vector<double> moves;
  for (const auto& round : brackets_)
    for (const Bracket& b : round)
      if (b.closed()) moves.push_back(log_move(b.before, b.after));
  if (moves.empty()) return HUGE_VAL;
  return std::max(std::log1p(rule_.unsteady_floor), rule_.unsteady_factor * median_of(std::move(moves)));
}

std::vector<double> PairedGroup::ratios_of(std::size_t member, std::vector<std::size_t>* unsteady) const {
  const double limit = unsteady_limit();
  std::vector<double> out;
  for (std::size_t r = 0; r < brackets_.size(); ++r) {
    const Bracket& b = brackets_[r][member];
    if (b.own <= 0) continue;
    if (b.closed() && log_move(b.before, b.after) > limit) {
      if (unsteady) unsteady->push_back(r + 1);
      continue;
    }
    const double ref = b.closed() ? std::sqrt(b.before * b.after) : std::max(b.before, b.after);
    if (ref > 0) out.push_back(b.own / ref);
  }
  return out;
}

RatioInterval PairedGroup::interval_of(std::size_t member) const {
  // Each member its own resampling stream, so adding a member leaves the others' intervals as they were.
  return median_interval(ratios_of(member), seed_ ^ mix(member + 0x51ed), rule_);
}

bool PairedGroup::settled(std::size_t member) const {
  if (member == reference_ || static_cast<int>(ratios_of(member).size()) < rule_.min_rounds) return false;
  const RatioInterval r = interval_of(member);
  return r.median > 0 && r.relative_width() <= rule_.target;
}

std::vector<std::size_t> PairedGroup::active() const {
  std::vector<std::size_t> out;
  for (std::size_t m = 0; m < members_.size(); ++m)
    if (m != reference_ && !settled(m)) out.push_back(m);
  return out;
}

int PairedGroup::budget_runs() const {
  const int rounds = rule_.budget_rounds > 0 ? rule_.budget_rounds : rule_.max_rounds;
  return rounds * (2 * static_cast<int>(members_.size()) - 1);
}

PairingStop PairedGroup::stop() const {
  if (rounds() < rule_.min_rounds) return PairingStop::running;
  const std::vector<std::size_t> left = active();
  if (left.empty()) return PairingStop::target;
  if (rounds() >= rule_.max_rounds) return PairingStop::round_limit;
  return runs_ + 2 * static_cast<int>(left.size()) + 1 > budget_runs() ? PairingStop::run_budget
                                                                       : PairingStop::running;
}

std::vector<PairedGroup::Member> PairedGroup::summary() const {
  std::vector<Member> out;
  for (std::size_t m = 0; m < members_.size(); ++m) {
    Member s;
    s.name = members_[m];
    s.reference = m == reference_;
    if (!s.reference) {
      s.ratios = ratios_of(m, &s.unsteady_rounds);
      s.interval = interval_of(m);
      s.verdict = static_cast<int>(s.ratios.size()) < rule_.min_ratios ? PairVerdict::level
                                                                       : verdict_of(s.interval, rule_.resolution);
    }
    out.push_back(std::move(s));
  }
  return out;
}

double PairedGroup::width_reached() const {
  double w = 0;
  for (std::size_t m = 0; m < members_.size(); ++m)
    if (m != reference_) w = std::max(w, interval_of(m).relative_width());
  return w;
}

}  // namespace kite::lab
