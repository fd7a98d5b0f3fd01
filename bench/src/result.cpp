#include "kite/bench/result.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kite::bench {
namespace {

using nlohmann::json;

json latency_json(const Latency& l) {
  return {{"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"p999", l.p999}, {"max", l.max}, {"mean", l.mean}};
}

json cell_latency_json(const CellLatency& l) {
  return {{"p50", l.p50}, {"p90", l.p90}, {"p99", l.p99}, {"p999", l.p999}, {"max", l.max}, {"mean_max", l.mean_max}};
}

json client_json(const RunFigures& r) {
  json j = {{"polls", r.client.polls},
            {"empty_polls", r.client.empty_polls},
            {"empty_share", r.client.empty_share()},
            {"busy_s", r.client.busy_s},
            {"idle_s", r.client.idle_s},
            {"busy_share", r.client.busy_share()},
            {"busy_us_per_order", r.busy_us_per_order()}};
  if (r.lateness) j["lateness"] = latency_json(*r.lateness);
  return j;
}

Latency latency_from(const json& j) {
  return {j.at("p50").get<double>(),  j.at("p90").get<double>(), j.at("p99").get<double>(),
          j.at("p999").get<double>(), j.at("max").get<double>(), j.at("mean").get<double>()};
}

RunFigures run_from(const json& x) {
  RunFigures run;
  run.count = x.at("count").get<std::uint64_t>();
  run.errors = x.at("errors").get<std::uint64_t>();
  run.achieved_rate = x.at("achieved_rate").get<double>();
  run.max_in_flight = x.at("max_in_flight").get<std::uint64_t>();
  run.cap_hits = x.at("cap_hits").get<std::uint64_t>();
  run.complete = x.at("complete").get<bool>();
  run.service = latency_from(x.at("service"));
  if (x.contains("response")) run.response = latency_from(x.at("response"));
  const json& c = x.at("client");
  run.client.polls = c.at("polls").get<std::uint64_t>();
  run.client.empty_polls = c.at("empty_polls").get<std::uint64_t>();
  run.client.busy_s = c.at("busy_s").get<double>();
  run.client.idle_s = c.at("idle_s").get<double>();
  if (c.contains("lateness")) run.lateness = latency_from(c.at("lateness"));
  return run;
}

}  // namespace

CellResult cell_result_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    CellResult r;
    const json& cell = j.at("cell");
    r.flavour = cell.at("flavour").get<std::string>();
    r.transport = cell.at("transport").get<std::string>();
    r.model = cell.at("model").get<std::string>();
    r.loop = cell.at("loop").get<std::string>();
    r.sessions = j.at("sessions").get<unsigned>();
    r.rate = j.at("rate").get<double>();
    r.think_us = j.at("think_us").get<double>();
    r.warmup_s = j.at("warmup_s").get<double>();
    r.duration_s = j.at("duration_s").get<double>();
    r.clock_method = j.at("clock").at("method").get<std::string>();
    r.tsc_ghz = j.at("clock").at("tsc_ghz").get<double>();
    r.idle = j.at("idle").get<std::string>();
    r.client_threads = j.at("client_threads").get<unsigned>();
    r.orders_total = j.at("orders_total").get<std::uint64_t>();
    for (const auto& x : j.at("runs")) r.runs.push_back(run_from(x));
    r.summary = summarize(r.runs);
    const json& t = j.at("thresholds");
    r.thresholds = {t.at("cv_p50").get<double>(), t.at("cv_p99").get<double>(), t.at("rate_fraction").get<double>(),
                    t.at("response_over_service").get<double>()};
    r.verdict = judge(r.runs, r.summary, r.rate, r.thresholds);
    for (const auto& p : j.at("cdf")) r.cdf.emplace_back(p.at(0).get<double>(), p.at(1).get<double>());
    const json& st = j.at("stamp");
    r.stamp = {st.at("binary").get<std::string>(), st.at("build_flags").get<std::string>(),
               st.at("compiler").get<std::string>(), st.at("git").get<std::string>(),
               st.value("codec_level", std::string())};
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("bench_roundtrip result: ") + e.what());
  }
}

std::string to_json(const CellResult& r) {
  json j;
  j["schema"] = 1;
  j["cell"] = {{"flavour", r.flavour}, {"transport", r.transport}, {"model", r.model}, {"loop", r.loop}};
  j["sessions"] = r.sessions;
  j["rate"] = r.rate;
  j["think_us"] = r.think_us;
  j["warmup_s"] = r.warmup_s;
  j["duration_s"] = r.duration_s;
  j["clock"] = {{"method", r.clock_method}, {"tsc_ghz", r.tsc_ghz}};
  j["idle"] = r.idle;
  j["client_threads"] = r.client_threads;
  j["orders_total"] = r.orders_total;
  json runs = json::array();
  for (const auto& run : r.runs) {
    json x = {{"count", run.count},
              {"errors", run.errors},
              {"achieved_rate", run.achieved_rate},
              {"max_in_flight", run.max_in_flight},
              {"cap_hits", run.cap_hits},
              {"complete", run.complete},
              {"service", latency_json(run.service)},
              {"client", client_json(run)}};
    if (run.response) x["response"] = latency_json(*run.response);
    runs.push_back(std::move(x));
  }
  j["runs"] = std::move(runs);
  json s = {{"service", cell_latency_json(r.summary.service)},
            {"cv", {{"p50", r.summary.cv_p50}, {"p99", r.summary.cv_p99}}},
            {"achieved_rate", r.summary.achieved_rate},
            {"count", r.summary.count},
            {"errors", r.summary.errors},
            {"max_in_flight", r.summary.max_in_flight},
            {"cap_hits", r.summary.cap_hits},
            {"client",
             {{"empty_share", r.summary.client_empty_share},
              {"busy_share", r.summary.client_busy_share},
              {"busy_us_per_order", r.summary.client_busy_us_per_order}}}};
  if (r.summary.response) s["response"] = cell_latency_json(*r.summary.response);
  if (r.summary.lateness) s["client"]["lateness"] = cell_latency_json(*r.summary.lateness);
  j["summary"] = std::move(s);
  j["verdict"] = to_string(r.verdict.verdict);
  j["verdict_reasons"] = r.verdict.reasons;
  j["thresholds"] = {{"cv_p50", r.thresholds.cv_p50},
                     {"cv_p99", r.thresholds.cv_p99},
                     {"rate_fraction", r.thresholds.rate_fraction},
                     {"response_over_service", r.thresholds.response_over_service}};
  json cdf = json::array();
  for (const auto& [v, f] : r.cdf) cdf.push_back(json::array({v, f}));
  j["cdf"] = std::move(cdf);
  j["stamp"] = {{"binary", r.stamp.binary},
                {"build_flags", r.stamp.build_flags},
                {"compiler", r.stamp.compiler},
                {"git", r.stamp.git},
                {"codec_level", r.stamp.codec_level}};
  return j.dump(1);
}

void print_summary(std::FILE* out, const CellResult& r) {
  std::fprintf(out, "cell %s/%s/%s/%s  sessions=%u", r.flavour.c_str(), r.transport.c_str(), r.model.c_str(),
               r.loop.c_str(), r.sessions);
  if (r.rate > 0) std::fprintf(out, "  rate=%.0f/s", r.rate);
  if (r.think_us > 0) std::fprintf(out, "  think=%.1f us", r.think_us);
  std::fprintf(out, "  idle=%s  clock=%s", r.idle.c_str(), r.clock_method.c_str());
  if (r.tsc_ghz > 0) std::fprintf(out, " (%.3f GHz)", r.tsc_ghz);
  std::fprintf(out, "\n");
  const auto row = [out](const char* label, const Latency& l) {
    std::fprintf(out, "  %-9s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", label, l.p50, l.p90, l.p99, l.p999, l.max,
                 l.mean);
  };
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const RunFigures& run = r.runs[i];
    std::fprintf(out, "run %zu/%zu: count=%llu errors=%llu rate=%.0f/s max_in_flight=%llu cap_hits=%llu%s\n", i + 1,
                 r.runs.size(), static_cast<unsigned long long>(run.count), static_cast<unsigned long long>(run.errors),
                 run.achieved_rate, static_cast<unsigned long long>(run.max_in_flight),
                 static_cast<unsigned long long>(run.cap_hits), run.complete ? "" : " INCOMPLETE");
    std::fprintf(out, "  %-9s %10s %10s %10s %10s %10s %10s   (us)\n", "", "p50", "p90", "p99", "p99.9", "max", "mean");
    row("service", run.service);
    if (run.response) row("response", *run.response);
    std::fprintf(out, "  client: polls=%llu empty=%.1f%% busy=%.1f%% busy/order=%.2f us\n",
                 static_cast<unsigned long long>(run.client.polls), 100 * run.client.empty_share(),
                 100 * run.client.busy_share(), run.busy_us_per_order());
  }
  const CellSummary& s = r.summary;
  std::fprintf(out, "summary (medians of %zu runs; max = true max, mean_max = mean of run maxima):\n", r.runs.size());
  std::fprintf(out, "  %-9s %10s %10s %10s %10s %10s %10s   (us)\n", "", "p50", "p90", "p99", "p99.9", "max",
               "mean_max");
  const auto cell_row = [out](const char* label, const CellLatency& l) {
    std::fprintf(out, "  %-9s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", label, l.p50, l.p90, l.p99, l.p999, l.max,
                 l.mean_max);
  };
  cell_row("service", s.service);
  if (s.response) cell_row("response", *s.response);
  std::fprintf(out, "  rate=%.0f/s count=%llu errors=%llu max_in_flight=%llu cv(p50)=%.3f cv(p99)=%.3f\n",
               s.achieved_rate, static_cast<unsigned long long>(s.count), static_cast<unsigned long long>(s.errors),
               static_cast<unsigned long long>(s.max_in_flight), s.cv_p50, s.cv_p99);
  std::fprintf(out, "  client (medians): empty polls %.1f%%, busy %.1f%%, busy time per order %.2f us\n",
               100 * s.client_empty_share, 100 * s.client_busy_share, s.client_busy_us_per_order);
  if (s.lateness)
    std::fprintf(out, "  client lateness taking up its slots (us): p50 %.2f p99 %.2f max %.2f (%u thread%s)\n",
                 s.lateness->p50, s.lateness->p99, s.lateness->max, r.client_threads, r.client_threads == 1 ? "" : "s");
  std::fprintf(out, "verdict: %s", to_string(r.verdict.verdict));
  for (const auto& why : r.verdict.reasons) std::fprintf(out, "; %s", why.c_str());
  std::fprintf(out, "\n");
}

}  // namespace kite::bench
