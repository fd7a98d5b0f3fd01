#include "kite/lab/sweep.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "kite/lab/method.hpp"
#include "kite/lab/util.hpp"

#include "result_schema.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

const std::vector<std::string> kSweepSeries = {"rate", "sessions"};

namespace {

const std::vector<int> kSessionCounts = {1, 8, 32, 128, 512, 1000};
// Descriptors each process keeps besides one per session (listener, epoll, files, the runtime's own).
constexpr long kSpareDescriptors = 64;

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// How a step's load was judged, for choosing the next step.
enum class Judged { unsaturated, saturated, unknown };

// A refused step publishes no figures, but the client's withheld verdict
// still says which side of the knee it was on.
Judged judge_step(const StepResult& s) {
  if (s.outcome.state == CellState::measured)
    return s.outcome.verdict == "saturated" ? Judged::saturated : Judged::unsaturated;
  if (s.outcome.state == CellState::refused && s.result.contains("withheld")) {
    const std::string v = s.result["withheld"].value("client_verdict", "");
    if (!v.empty()) return v == "saturated" ? Judged::saturated : Judged::unsaturated;
  }
  return Judged::unknown;
}

// One flavour's series as it is planned: which step comes next.
struct Job {
  std::string flavour, series;
  std::vector<int> counts;  // sessions series: the counts to run
  std::size_t issued = 0;
  // rate series: the highest unsaturated and the lowest saturated rate so far
  int lo = -1, hi = -1, halvings = 0, bisected = 0;

  // The next step's rate or session count after the last one was judged `j`; nullopt: the series is done.
  std::optional<int> next(const SweepOptions& o, std::optional<std::pair<int, Judged>> last) {
    if (series == "sessions") {
      if (last && last->second == Judged::unknown) return std::nullopt;
      if (issued >= counts.size()) return std::nullopt;
      return counts[issued];
    }
    if (!last) return o.start_rate;
    const auto [r, j] = *last;
    if (j == Judged::unknown) return std::nullopt;
    if (j == Judged::unsaturated) lo = std::max(lo, r);
    if (j == Judged::saturated) hi = hi < 0 ? r : std::min(hi, r);
    if (hi < 0) {  // doubling until a step saturates
      if (static_cast<long>(r) * 2 > o.max_rate) return std::nullopt;
      return r * 2;
    }
    if (lo < 0) {  // saturated from the start: halving, at most three times
      if (halvings >= 3 || r / 2 < 100) return std::nullopt;
      ++halvings;
      return r / 2;
    }
    if (bisected >= o.bisections) return std::nullopt;
    // Bisect on a grid of 100/s (1,000/s above 100,000/s): finer steps are below the noise.
    const int grid = hi > 100000 ? 1000 : 100;
    const int mid = (lo + hi) / 2 / grid * grid;
    if (mid <= lo || mid >= hi) return std::nullopt;
    ++bisected;
    return mid;
  }

  std::size_t planned(const SweepOptions& o) const {
    if (series == "sessions") return counts.size();
    std::size_t doublings = 1;
    for (long r = o.start_rate; r * 2 <= o.max_rate; r *= 2) ++doublings;
    return doublings + static_cast<std::size_t>(o.bisections);
  }
};

// A step keeps p50, p99, p99.9 and max of a view.
std::optional<LatencyRecord> four(const std::optional<LatencyRecord>& l) {
  if (!l) return std::nullopt;
  LatencyRecord out = *l;
  out.p90.reset();
  out.mean_max.reset();
  return out;
}

// The least-squares slope of y on x (nullopt with fewer than two distinct x).
std::optional<double> slope(const std::vector<std::pair<double, double>>& pts) {
  if (pts.size() < 2) return std::nullopt;
  double sx = 0, sy = 0;
  for (const auto& [x, y] : pts) sx += x, sy += y;
  const double n = static_cast<double>(pts.size()), mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : pts) sxx += (x - mx) * (x - mx), sxy += (x - mx) * (y - my);
  if (sxx <= 0) return std::nullopt;
  return sxy / sxx;
}

// Latency in the table: three significant figures or whole microseconds.
std::string lat(const std::optional<LatencyRecord>& l, std::optional<double> LatencyRecord::*k) {
  if (!l || !((*l).*k)) return "-";
  const double v = *((*l).*k);
  return v < 10 ? fmt("%.2f", v) : v < 1000 ? fmt("%.1f", v) : fmt("%.0f", v);
}

int open_file_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<int>(std::min<rlim_t>(rl.rlim_cur, 1 << 20));
}

}  // namespace

std::string step_limit(const json& r) {
  if (r.value("verdict", json()) != "saturated") return "";
  const SummaryRecord s = result_record_from_json(r).summary;
  const double late = s.lateness ? s.lateness->p50.value_or(-1) : -1;
  const double response = s.response ? s.response->p50.value_or(-1) : -1;
  if (late >= 0 && response > 0 && late >= 0.5 * response) return "client";
  return "server";
}

namespace {

// A step's record from its result: the figures of a measured one, the reason of another.
SweepStepRecord step_record(const StepResult& s, std::size_t index) {
  const json& r = s.result;
  SweepStepRecord st;
  st.step = static_cast<int>(index + 1);
  st.file = fs::path(s.file).filename().string();
  st.rate = s.step.rate;
  st.sessions = s.step.sessions;
  st.state = to_string(s.outcome.state);
  if (!s.outcome.verdict.empty()) st.verdict = s.outcome.verdict;
  st.verdict_reasons = r.value("verdict_reasons", json::array());
  if (!st.measured()) st.reason = s.outcome.reason;
  if (st.measured()) {
    const SummaryRecord sum = result_record_from_json(r).summary;
    st.response = four(sum.response);
    st.service = four(sum.service);
    st.achieved_rate = sum.achieved_rate;
    st.max_in_flight = sum.max_in_flight;
    st.cap_hits = sum.cap_hits;
    st.lateness = four(sum.lateness);
    st.busy_share = sum.client_busy_share;
    st.client_threads = r.value("client_threads", 1);
    if (const std::string limit = step_limit(r); !limit.empty()) st.limit = limit;
  }
  st.server = r.value("server", json());
  return st;
}

// The knee: the highest step not saturated; what limited the lowest saturated step above it.
void mark_knee(SweepRecord& d) {
  const std::string& x = d.series;
  const SweepStepRecord* knee = nullptr;
  for (const auto& st : d.steps)
    if (st.measured() && st.verdict != "saturated" && (!knee || st.x(x) > knee->x(x))) knee = &st;
  const SweepStepRecord* first_saturated = nullptr;
  for (const auto& st : d.steps)
    if (st.measured() && st.verdict == "saturated" && (!knee || st.x(x) > knee->x(x)) &&
        (!first_saturated || st.x(x) < first_saturated->x(x)))
      first_saturated = &st;
  if (knee) d.knee = SweepMarkRecord{knee->x(x), knee->step, knee->response, std::nullopt};
  if (first_saturated)
    d.saturated_from =
        SweepMarkRecord{first_saturated->x(x), first_saturated->step, std::nullopt, first_saturated->limit};
}

}  // namespace

json sweep_document(const std::string& flavour, const std::string& series, const std::vector<StepResult>& steps,
                    const json& settings) {
  SweepRecord d;
  d.flavour = flavour;
  d.series = series;
  d.method = kSequentialMethodVersion;
  d.settings = settings;
  if (!steps.empty()) {
    d.transport = steps.front().step.cell.transport;
    d.model = steps.front().step.cell.model;
  }
  std::vector<std::pair<double, double>> memory;  // (sessions, resident kB)
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const SweepStepRecord& st = d.steps.emplace_back(step_record(steps[i], i));
    if (const double rss = st.server_rss_kb().value_or(-1); st.measured() && rss > 0)
      memory.emplace_back(st.sessions, rss);
  }
  mark_knee(d);
  if (!d.by_rate())
    if (const auto per = slope(memory)) d.memory_per_session_bytes = std::round(*per * 1024);
  return to_json(d);
}

namespace {

// The sessions series' counts: the defaults, sorted, each checked and within the open-file limit.
void plan_session_counts(SweepOptions& o, std::vector<std::string>& notes) {
  if (o.session_counts.empty()) o.session_counts = kSessionCounts;
  for (int n : o.session_counts)
    if (n < 1) throw ConfigError("--sessions: each count must be at least 1");
  std::sort(o.session_counts.begin(), o.session_counts.end());
  o.session_counts.erase(std::unique(o.session_counts.begin(), o.session_counts.end()), o.session_counts.end());
  const int fds = open_file_limit();
  std::vector<int> kept;
  for (int n : o.session_counts) {
    if (n + kSpareDescriptors > fds)
      notes.push_back(std::to_string(n) + " sessions left out: the open-file limit is " + std::to_string(fds) +
                      " (ulimit -n)");
    else
      kept.push_back(n);
  }
  o.session_counts = kept;
  if (o.session_counts.empty()) throw ConfigError("--sessions: no count fits the open-file limit (ulimit -n)");
}

}  // namespace

void sweep_plan(SweepOptions& o, std::vector<std::string>& notes) {
  Matrix& mx = o.sitting.matrix;
  const Machine& m = o.sitting.machine;
  if (o.flavours.empty()) throw ConfigError("--flavours: name at least one flavour (lab/flavours/<name>.toml)");
  if (o.series.empty()) throw ConfigError("--series: name rate, sessions or both");
  for (const auto& s : o.series)
    if (!contains(kSweepSeries, s)) throw ConfigError("--series: '" + s + "' is no series (rate, sessions)");
  if (!find_transport(o.transport))
    throw ConfigError("--transport: '" + o.transport + "' is no transport the lab knows");
  if (!contains(kModels, o.model))
    throw ConfigError("--model: '" + o.model + "' is no model (single, mono, pool, shard)");
  if (o.start_rate <= 0) o.start_rate = 5000;
  if (o.max_rate <= 0) o.max_rate = 1000000;
  if (o.start_rate > o.max_rate)
    throw ConfigError("--start-rate " + std::to_string(o.start_rate) + " is above --max-rate " +
                      std::to_string(o.max_rate));
  if (o.bisections < 0) o.bisections = o.quick ? 2 : 3;
  if (o.bisections > 10) throw ConfigError("--bisections: at most 10");
  const int model_sessions = mx.sessions.count(o.model) ? mx.sessions.at(o.model) : 1;
  if (o.rate_sessions <= 0) o.rate_sessions = o.model == "single" ? 1 : model_sessions;
  if (o.model == "single" && o.rate_sessions != 1)
    throw ConfigError("--rate-sessions: the single model has one session");
  if (o.client_threads <= 0) o.client_threads = std::max<int>(1, static_cast<int>(m.client.size()));
  if (o.warmup_s < 0) o.warmup_s = o.quick ? 0.2 : 0.3;
  if (o.duration_s <= 0) o.duration_s = o.quick ? 0.3 : 0.4;
  if (o.runs <= 0) o.runs = o.quick ? 2 : 3;
  if (o.sessions_rate < 0) throw ConfigError("--sessions-rate: must be positive");

  const bool sessions = contains(o.series, "sessions");
  if (sessions && o.model == "single") {
    notes.push_back("no sessions series: the single model has one session (use mono, pool or shard)");
    o.series.erase(std::find(o.series.begin(), o.series.end(), "sessions"));
    if (o.series.empty()) throw ConfigError("--series sessions: the single model has one session");
  }
  if (contains(o.series, "sessions")) plan_session_counts(o, notes);
  // The matrix the stepped sitting checks and records: these cells, these runs.
  mx.name = "sweep";
  mx.flavours = o.flavours;
  mx.transports = {o.transport};
  mx.models = {o.model};
  mx.loops = {"open"};
  mx.runs = o.runs;
  mx.warmup_s = o.warmup_s;
  mx.duration_s = o.duration_s;
  mx.sessions[o.model] = o.rate_sessions;
}

namespace {

// Every flavour's rate series, then every flavour's sessions series, with the counts each flavour allows.
std::vector<Job> plan_jobs(const SweepOptions& o, const std::map<std::string, Flavour>& flavours,
                           std::vector<std::string>& notes) {
  std::vector<Job> jobs;
  for (const auto& series : kSweepSeries) {
    if (!contains(o.series, series)) continue;
    for (const auto& f : o.flavours) {
      Job j{f, series, {}};
      if (series == "sessions") {
        const int most = flavours.at(f).max_sessions;
        for (int n : o.session_counts) {
          if (most > 0 && n > most)
            notes.push_back(f + ": " + std::to_string(n) +
                            " sessions left out: its flavour file says max_sessions = " + std::to_string(most));
          else
            j.counts.push_back(n);
        }
      }
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

// Chooses each next step from the steps run so far: the jobs in turn, each until its series is done.
struct SweepPlanner {
  const SweepOptions& o;
  std::vector<Job> jobs;
  int sessions_rate;  // the sessions series' rate: the option's, else set below every knee once the rates ran
  std::size_t planned = 0, job = 0;
  bool sessions_rate_set = false;

  // One rate for every flavour's sessions series, below every knee the rate series found.
  void set_sessions_rate(const std::vector<StepResult>& done) {
    sessions_rate_set = true;
    int lowest = -1;
    for (const auto& f : o.flavours) {
      int knee = -1;
      for (const auto& s : done)
        if (s.step.dir == "sweep/" + f + "/rate" && judge_step(s) == Judged::unsaturated &&
            s.outcome.state == CellState::measured)
          knee = std::max(knee, s.step.rate);
      if (knee > 0) lowest = lowest < 0 ? knee : std::min(lowest, knee);
    }
    if (o.sessions_rate <= 0 && lowest > 0)
      sessions_rate = std::max(1000, std::min(sessions_rate, lowest / 2 / 1000 * 1000));
  }

  // The step of job `j` at rate or session count `x`.
  Step step_for(const Job& j, int x) const {
    Step st;
    st.cell = {j.flavour, o.transport, o.model, "open"};
    st.sessions = j.series == "rate" ? o.rate_sessions : x;
    st.rate = j.series == "rate" ? x : sessions_rate;
    st.client_threads = std::max(1, std::min(o.client_threads, st.sessions));
    st.dir = "sweep/" + j.flavour + "/" + j.series;
    char name[32];
    std::snprintf(name, sizeof name, "step-%02zu", j.issued);
    st.name = name;
    st.label = j.flavour + " " + j.series + " step " + std::to_string(j.issued) + ": " + std::to_string(st.rate) +
               "/s, " + std::to_string(st.sessions) + (st.sessions == 1 ? " session" : " sessions");
    st.planned = planned;
    return st;
  }

  std::optional<Step> operator()(const std::vector<StepResult>& done) {
    while (job < jobs.size()) {
      Job& j = jobs[job];
      if (j.series == "sessions" && !sessions_rate_set) set_sessions_rate(done);
      std::optional<std::pair<int, Judged>> last;
      if (j.issued > 0) {
        const StepResult& s = done.back();
        last = {{j.series == "rate" ? s.step.rate : s.step.sessions, judge_step(s)}};
      }
      const std::optional<int> x = j.next(o, last);
      if (!x) {
        ++job;
        continue;
      }
      ++j.issued;
      return step_for(j, *x);
    }
    return std::nullopt;
  }
};

// What every series of the sweep ran with.
json common_settings(const SweepOptions& o) {
  return {{"transport", o.transport},
          {"model", o.model},
          {"warmup_s", o.warmup_s},
          {"duration_s", o.duration_s},
          {"runs", o.runs},
          {"idle", o.sitting.idle.value_or(o.sitting.matrix.idle)},
          {"max_in_flight", o.sitting.matrix.max_in_flight},
          {"client_threads", o.client_threads},
          {"thresholds",
           {{"rate_fraction", o.sitting.matrix.thresholds.rate_fraction},
            {"response_over_service", o.sitting.matrix.thresholds.response_over_service}}}};
}

// Writes each flavour's series' sweep.json into res; returns the files by "<flavour>/<series>".
json write_series(const SweepOptions& o, const std::vector<StepResult>& steps, int sessions_rate, SweepResult& res) {
  json record = json::object();
  for (const auto& series : kSweepSeries) {
    if (!contains(o.series, series)) continue;
    for (const auto& f : o.flavours) {
      std::vector<StepResult> mine;
      for (const auto& s : steps)
        if (s.step.dir == "sweep/" + f + "/" + series) mine.push_back(s);
      if (mine.empty()) continue;
      json settings = common_settings(o);
      if (series == "rate") {
        settings["sessions"] = o.rate_sessions;
        settings["start_rate"] = o.start_rate;
        settings["max_rate"] = o.max_rate;
        settings["bisections"] = o.bisections;
      } else {
        settings["rate"] = sessions_rate;
        settings["session_counts"] = o.session_counts;
      }
      SweepSeries s{f, series, "sweep/" + f + "/" + series + "/sweep.json", sweep_document(f, series, mine, settings)};
      write_text_atomic(res.sitting.dir + "/" + s.file, s.doc.dump(1));
      record[f + "/" + series] = s.file;
      res.series.push_back(std::move(s));
    }
  }
  return record;
}

}  // namespace

SweepResult run_sweep(SweepOptions o) {
  SweepResult res;
  sweep_plan(o, res.notes);
  const std::map<std::string, Flavour> flavours = load_flavours(
      o.sitting.flavours_dir.empty() ? o.sitting.source_dir + "/lab/flavours" : o.sitting.flavours_dir, o.flavours);
  SweepPlanner planner{o, plan_jobs(o, flavours, res.notes),
                       o.sessions_rate > 0 ? o.sessions_rate : o.sitting.matrix.rate};
  for (const auto& j : planner.jobs) planner.planned += j.planned(o);
  std::vector<StepResult> steps;
  res.sitting = run_stepped_sitting(o.sitting, std::ref(planner), steps);
  const json record = write_series(o, steps, planner.sessions_rate, res);
  // sitting.json says what the sweep was and where its series are.
  try {
    json stamp = json::parse(read_text(res.sitting.dir + "/sitting.json"));
    stamp["sweep"] = {{"flavours", o.flavours},
                      {"series", o.series},
                      {"settings", common_settings(o)},
                      {"files", record},
                      {"notes", res.notes},
                      {"sessions_rate", planner.sessions_rate},
                      {"rate_sessions", o.rate_sessions}};
    write_text_atomic(res.sitting.dir + "/sitting.json", stamp.dump(1));
  } catch (const std::exception& e) {
    res.notes.push_back(std::string("sitting.json not updated with the sweep: ") + e.what());
  }
  return res;
}

namespace {

// The series' first line: what it ran with.
std::string sweep_heading(const SweepRecord& d) {
  const json& set = d.settings;
  std::ostringstream out;
  out << d.flavour << " " << d.transport.value_or("") << "/" << d.model.value_or("") << ", " << d.series << " series: ";
  if (d.by_rate())
    out << set.value("sessions", 0) << " sessions";
  else
    out << set.value("rate", 0) << " orders/s";
  out << "; " << set.value("runs", 0) << " runs of " << set.value("duration_s", 0.0) << " s after "
      << set.value("warmup_s", 0.0) << " s; idle " << set.value("idle", "") << "; " << set.value("client_threads", 1)
      << " client thread(s); latency in us\n";
  return out.str();
}

std::string step_line(const SweepStepRecord& st) {
  // -1 for a figure the step lacks, as a negative one prints.
  auto whole = [](double v, const char* f, double scale = 1) { return v >= 0 ? fmt(f, v / scale) : std::string("-"); };
  std::string verdict = st.measured() ? st.verdict.value_or("?") : (st.state.empty() ? "?" : st.state);
  if (st.limit) verdict += " (" + *st.limit + ")";
  const double flight = st.max_in_flight ? static_cast<double>(*st.max_in_flight) : -1;
  using L = LatencyRecord;
  char line[512];
  std::snprintf(line, sizeof line, "%4d %8d %8d %9s | %8s %8s %8s %8s | %8s %8s %8s %8s | %6s %8s %8s %7s  %s\n",
                st.step, st.rate, st.sessions, whole(st.achieved_rate.value_or(-1), "%.0f").c_str(),
                lat(st.response, &L::p50).c_str(), lat(st.response, &L::p99).c_str(),
                lat(st.response, &L::p999).c_str(), lat(st.response, &L::max).c_str(), lat(st.service, &L::p50).c_str(),
                lat(st.service, &L::p99).c_str(), lat(st.service, &L::p999).c_str(), lat(st.service, &L::max).c_str(),
                whole(flight, "%.0f").c_str(), lat(st.lateness, &L::p50).c_str(),
                whole(st.server_cpu_us_per_order().value_or(-1), "%.2f").c_str(),
                whole(st.server_rss_kb().value_or(-1), "%.1f", 1024).c_str(), verdict.c_str());
  return line;
}

// The knee, what saturated above it, and the sessions series' memory per session.
std::string knee_lines(const SweepRecord& d) {
  const char* unit = d.by_rate() ? "/s" : " sessions";
  std::ostringstream out;
  out << "knee: ";
  if (d.knee)
    out << d.knee->x << unit << " (the highest step not saturated)";
  else
    out << "none (every measured step saturated, or none was measured)";
  if (d.saturated_from) {
    out << "; saturated from " << d.saturated_from->x << unit;
    if (d.saturated_from->limit == "client")
      out << ": the client could not keep its schedule there, so the server's knee is at least the knee shown";
    else if (d.saturated_from->limit == "server")
      out << ": the server was the limit";
  } else if (d.knee) {
    out << "; no step saturated";
  }
  out << "\n";
  if (!d.by_rate() && d.memory_per_session_bytes)
    out << "server memory per session: " << fmt("%.0f", *d.memory_per_session_bytes)
        << " bytes (the slope of its resident memory over the session counts)\n";
  return out.str();
}

}  // namespace

std::string sweep_table(const SweepSeries& s) {
  SweepRecord d = sweep_record_from_json(s.doc);
  d.flavour = s.flavour;  // the series as run_sweep named it
  d.series = s.series;
  std::ostringstream out;
  out << sweep_heading(d);
  char line[512];
  std::snprintf(line, sizeof line, "%4s %8s %8s %9s | %8s %8s %8s %8s | %8s %8s %8s %8s | %6s %8s %8s %7s  %s\n",
                "step", "rate/s", "sessions", "achieved", "resp p50", "p99", "p99.9", "max", "serv p50", "p99", "p99.9",
                "max", "flight", "late p50", "cpu/ord", "rss MB", "verdict");
  out << line;
  // Rows by rate or sessions; the step number keeps the order they ran in.
  std::vector<SweepStepRecord> steps = d.steps;
  std::stable_sort(steps.begin(), steps.end(),
                   [&](const SweepStepRecord& a, const SweepStepRecord& b) { return a.x(d.series) < b.x(d.series); });
  for (const auto& st : steps) out << step_line(st);
  return out.str() + knee_lines(d);
}

}  // namespace kite::lab
