#include "kite/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kite::bench {

Latency latency_of(const Histogram& h) {
  constexpr double us = 1e-3;
  return {h.percentile(50) * us,
          h.percentile(90) * us,
          h.percentile(99) * us,
          h.percentile(99.9) * us,
          static_cast<double>(h.max()) * us,
          h.mean() * us};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double coefficient_of_variation(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double sum = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  if (mean == 0.0) return 0.0;
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size() - 1)) / mean;
}

namespace {

template <class Get>
CellLatency cell_latency(const std::vector<RunFigures>& runs, Get get) {
  std::vector<double> p50, p90, p99, p999, max;
  for (const auto& r : runs) {
    const Latency& l = get(r);
    p50.push_back(l.p50);
    p90.push_back(l.p90);
    p99.push_back(l.p99);
    p999.push_back(l.p999);
    max.push_back(l.max);
  }
  CellLatency c;
  c.p50 = median(p50);
  c.p90 = median(p90);
  c.p99 = median(p99);
  c.p999 = median(p999);
  c.max = max.empty() ? 0.0 : *std::max_element(max.begin(), max.end());
  double sum = 0;
  for (double m : max) sum += m;
  c.mean_max = max.empty() ? 0.0 : sum / static_cast<double>(max.size());
  return c;
}

template <class... A>
std::string format(const char* fmt, A... a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, fmt, a...);
  return buf;
}

}  // namespace

CellSummary summarize(const std::vector<RunFigures>& runs) {
  CellSummary s;
  s.service = cell_latency(runs, [](const RunFigures& r) -> const Latency& { return r.service; });
  const bool open = !runs.empty() &&
                    std::all_of(runs.begin(), runs.end(), [](const RunFigures& r) { return r.response.has_value(); });
  if (open) s.response = cell_latency(runs, [](const RunFigures& r) -> const Latency& { return *r.response; });
  const bool late = !runs.empty() &&
                    std::all_of(runs.begin(), runs.end(), [](const RunFigures& r) { return r.lateness.has_value(); });
  if (late) s.lateness = cell_latency(runs, [](const RunFigures& r) -> const Latency& { return *r.lateness; });
  std::vector<double> p50, p99, rate, empty, busy, busy_per_order;
  for (const auto& r : runs) {
    empty.push_back(r.client.empty_share());
    busy.push_back(r.client.busy_share());
    busy_per_order.push_back(r.busy_us_per_order());
    const Latency& view = open ? *r.response : r.service;
    p50.push_back(view.p50);
    p99.push_back(view.p99);
    rate.push_back(r.achieved_rate);
    s.count += r.count;
    s.errors += r.errors;
    s.cap_hits += r.cap_hits;
    s.max_in_flight = std::max(s.max_in_flight, r.max_in_flight);
  }
  s.cv_p50 = coefficient_of_variation(p50);
  s.cv_p99 = coefficient_of_variation(p99);
  s.achieved_rate = median(rate);
  s.client_empty_share = median(empty);
  s.client_busy_share = median(busy);
  s.client_busy_us_per_order = median(busy_per_order);
  return s;
}

const char* to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::partial: return "partial";
    case Verdict::saturated: return "saturated";
  }
  return "?";
}

VerdictResult judge(const std::vector<RunFigures>& runs, const CellSummary& s, double open_loop_rate,
                    const Thresholds& t) {
  VerdictResult v;
  if (open_loop_rate > 0) {
    if (s.achieved_rate < t.rate_fraction * open_loop_rate)
      v.reasons.push_back(format("achieved rate %.0f/s under %.2f of the target (%.0f/s)", s.achieved_rate,
                                 t.rate_fraction, open_loop_rate));
    if (s.cap_hits > 0)
      v.reasons.push_back(format("in-flight cap hit %llu times", static_cast<unsigned long long>(s.cap_hits)));
    if (s.response && s.response->p50 > t.response_over_service * s.service.p50)
      v.reasons.push_back(format("response p50 %.2f us over %.1fx service p50 (%.2f us)", s.response->p50,
                                 t.response_over_service, s.service.p50));
    if (!v.reasons.empty()) {
      v.verdict = Verdict::saturated;
      return v;
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (!runs[i].complete || runs[i].count == 0) v.reasons.push_back(format("run %zu incomplete", i + 1));
  if (runs.empty()) v.reasons.push_back("no runs");
  if (s.cv_p50 > t.cv_p50) v.reasons.push_back(format("CV of p50 %.3f over %.3f", s.cv_p50, t.cv_p50));
  if (s.cv_p99 > t.cv_p99) v.reasons.push_back(format("CV of p99 %.3f over %.3f", s.cv_p99, t.cv_p99));
  if (!v.reasons.empty()) v.verdict = Verdict::partial;
  return v;
}

}  // namespace kite::bench
