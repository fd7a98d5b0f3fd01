// A sitting's results: one file per cell (measured, refused or never run),
// a paired group's members from their rounds, and reading them back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <set>
#include <string_view>

#include "kite/lab/method.hpp"
#include "kite/lab/util.hpp"

#include "kite/bench/result.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

// A result's `cell`: the four parts, and `store` when the cell has a store of its own (pair_on = "store").
json cell_json(const Cell& cell) {
  json j = {{"flavour", cell.flavour}, {"transport", cell.transport}, {"model", cell.model}, {"loop", cell.loop}};
  if (!cell.store.empty()) j["store"] = cell.store;
  return j;
}

json cell_base(const Cell& cell) { return {{"schema", 1}, {"cell", cell_json(cell)}}; }

// Writes a cell's result with what every result of the sitting says: its
// flavour's check and, for pool and shard, how many workers and why.
void write_cell(const Setup& c, const Cell& cell, json j) {
  j["cell"] = cell_json(cell);  // the client names the cell by its id: the lab's parts replace it
  j["lab"]["check"] = check_json(c, cell.flavour, false);
  j["method"] = method_for(c.opt.matrix.pairing);
  if (c.opt.matrix.pairing == "rounds" && !j.contains("pairing")) {
    PairingRecord alone;
    alone.mode = "sequential";
    alone.reason = "the only flavour of its group that ran";
    j["pairing"] = to_json(alone);
  }
  if (pool_or_shard(cell.model)) j["lab"]["workers"] = workers_json(c.workers);
  const std::string path =
      c.step ? c.dir + "/" + c.step->dir + "/" + c.step->name + ".json" : c.dir + "/" + cell.file_name();
  if (c.step) fs::create_directories(fs::path(path).parent_path());
  write_text_atomic(path, j.dump(1));
}

// The result of a cell that was not measured: its state, its marker when marked, and why.
json unmeasured_result(const Cell& cell, CellState state, const std::string& marker, const std::string& why) {
  json j = cell_base(cell);
  if (!marker.empty()) j["marker"] = marker;
  j["verdict"] = nullptr;
  j["lab"] = {{"state", to_string(state)}, {"reason", why}};
  return j;
}

// A measured or refused cell's result: the client's, stamped, with the verdict
// the audit and the failed attempts leave it. Notes in the sitting's stamp how
// the client says it was built.
json measured_result(const Setup& c, const Attempts& t, json& stamp) {
  const Attempt& a = t.last;
  json j = a.result;
  json client_stamp = j.value("stamp", json::object());
  // A binary that cannot answer --version still says how it was built in its results.
  std::string ckey = rel(fs::absolute(c.client_path).lexically_normal().string(), c.opt.source_dir);
  if (stamp["binaries"].contains(ckey) && !stamp["binaries"][ckey].contains("reported_in_results"))
    stamp["binaries"][ckey]["reported_in_results"] = client_stamp;
  j["stamp"] = {{"client", client_stamp}, {"sitting", c.sitting_stamp}, {"effective", a.effective}};
  json reasons = j.value("verdict_reasons", json::array());
  std::string verdict = j.value("verdict", "");
  const CellState state = a.end == AttemptEnd::refused ? CellState::refused : CellState::measured;
  if (state == CellState::refused) {
    j["withheld"] = {{"runs", j["runs"]},
                     {"summary", j["summary"]},
                     {"cdf", j.value("cdf", json::array())},
                     {"client_verdict", verdict}};
    j.erase("runs");
    j.erase("summary");
    j.erase("cdf");
    verdict = "refused";
    reasons = json::array({"audit: " + a.reason});
  } else if (!t.failures.empty()) {
    if (verdict == "ok") verdict = "partial";
    reasons.push_back("repeated: " + join(t.failures, "; "));
  }
  j["verdict"] = verdict;
  j["verdict_reasons"] = reasons;
  j["lab"] = {{"state", to_string(state)}, {"reason", a.reason}, {"attempts", t.made}, {"failed_attempts", t.failures}};
  return j;
}

// The pooled distribution of the rounds: F(x) is the mean over the rounds of
// each round's cumulative fraction at x (every round weighs the same).
json mixed_cdf(const std::vector<json>& rounds) {
  std::vector<std::vector<std::pair<double, double>>> cdfs;
  std::vector<double> xs;
  for (const auto& r : rounds) {
    auto& cdf = cdfs.emplace_back();
    for (const auto& pt : r.value("cdf", json::array())) {
      cdf.emplace_back(pt.at(0).get<double>(), pt.at(1).get<double>());
      xs.push_back(cdf.back().first);
    }
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  const std::size_t most = 400, step = xs.size() > most ? (xs.size() + most - 1) / most : 1;
  json out = json::array();
  for (std::size_t i = 0; i < xs.size(); i += step) {
    const double x = (i + step >= xs.size()) ? xs.back() : xs[i];
    double f = 0;
    for (const auto& cdf : cdfs) {
      auto it = std::upper_bound(cdf.begin(), cdf.end(), x, [](double v, const auto& pt) { return v < pt.first; });
      f += it == cdf.begin() ? 0 : std::prev(it)->second;
    }
    out.push_back(json::array({x, cdfs.empty() ? 0 : f / static_cast<double>(cdfs.size())}));
    if (x == xs.back()) break;
  }
  return out;
}

}  // namespace

json workers_json(const Workers& w) {
  return {{"count", w.count}, {"server_cores", w.server_cores}, {"from", w.from()}};
}

// A flavour's check as sitting.json keeps it (`full`) or as each of its cells' results repeat it.
json check_json(const Setup& c, const std::string& flavour, bool full) {
  auto it = c.checks.find(flavour);
  const FlavourCheck fc = it == c.checks.end() ? FlavourCheck{} : it->second;
  json j = {{"enabled", c.opt.check}, {"outcome", fc.outcome()}};
  if (!fc.ran) return j;
  j["passed"] = fc.report.passed;
  j["failed"] = fc.report.failed;
  j["skipped"] = fc.report.skipped;
  if (!full) return j;
  json failing = json::array();
  for (const auto& l : fc.report.lines)
    if (l.status == CheckStatus::fail) failing.push_back(l.text());
  j["failing"] = failing;
  j["transports"] = fc.transports;
  j["models"] = fc.models;
  j["seconds"] = std::round(fc.seconds * 10) / 10;
  j["log"] = fc.log;
  return j;
}

// Writes the result of a cell that was never run; returns its outcome.
CellOutcome record_unrun(const Setup& c, const Cell& cell, CellState state, const std::string& marker,
                         const std::string& why) {
  write_cell(c, cell, unmeasured_result(cell, state, marker, why));
  CellOutcome o;
  o.cell = cell;
  o.state = state;
  o.marker = marker;
  o.reason = why;
  return o;
}

// Writes the cell's result file from its attempts; returns its outcome.
CellOutcome record_cell(const Setup& c, const Cell& cell, const Attempts& t, json& stamp) {
  const Attempt& a = t.last;
  json j;
  CellOutcome o;
  o.cell = cell;
  if (a.end == AttemptEnd::unsupported) {
    j = unmeasured_result(cell, CellState::marked, "unsupported",
                          "the server says: " + a.reason + build_only_note(c, cell));
    o.state = CellState::marked;
    o.marker = "unsupported";
    o.reason = a.reason;
  } else if (a.end == AttemptEnd::error) {
    j = unmeasured_result(cell, CellState::error, "", a.reason);
    j["lab"]["attempts"] = t.failures;
    j["stamp"] = {{"sitting", c.sitting_stamp}, {"effective", a.effective}};
    o.state = CellState::error;
    o.reason = a.reason;
  } else {
    j = measured_result(c, t, stamp);
    o = outcome_from_json(j);
  }
  write_cell(c, cell, j);
  return o;
}

// The pairing record every member's result carries.
PairingRecord pairing_record(const PairedGroup& g, const PairedGroup::Member& s, const Cell& cell,
                             const std::vector<std::vector<std::size_t>>& orders,
                             const std::vector<std::vector<double>>& p50s, std::size_t member) {
  // A cell has a store of its own only when its matrix pairs on the store.
  const bool on_store = !cell.store.empty();
  PairingRecord p;
  p.mode = "rounds";
  p.group = (on_store ? cell.flavour + "/" : "") + cell.transport + "/" + cell.model + "/" + cell.loop;
  p.on = on_store ? "store" : "flavour";
  p.members = g.members();
  p.reference = g.members()[g.reference()];
  p.seed = g.seed();
  p.rounds = g.rounds();
  p.stop = to_string(g.stop());
  p.target = g.rule().target;
  p.resolution = g.rule().resolution;
  p.width_reached = g.width_reached();
  p.runs = g.runs();
  p.budget_runs = g.budget_runs();
  p.bracketed = true;
  p.orders = orders;
  p.p50_per_round.emplace();
  for (const auto& round : p50s)
    p.p50_per_round->push_back(round[member] > 0 ? std::optional<double>(round[member]) : std::nullopt);
  // The reference, or a member with no round beside a measured reference, has no ratio.
  p.judged = !s.reference;
  if (!s.reference && !s.ratios.empty()) {
    p.ratio = RatioRecord{s.interval.median, s.interval.low, s.interval.high};
    p.ratios = s.ratios;
    p.verdict = to_string(s.verdict);
  }
  if (!s.reference) p.unsteady_rounds = s.unsteady_rounds;
  return p;
}

// A member's result from its rounds: the runs of every round it passed, the
// summary and verdict recomputed over them, the server's CPU per order over
// its runs alone, and the group's ratio.
json member_result(const std::vector<json>& rounds, const std::vector<int>& round_of, double server_cpu_s,
                   const std::vector<std::string>& refusals, PairingRecord pairing) {
  bench::CellResult all = bench::cell_result_from_json(rounds.front().dump());
  all.runs.clear();
  all.orders_total = 0;
  for (const auto& r : rounds) {
    const bench::CellResult one = bench::cell_result_from_json(r.dump());
    all.runs.insert(all.runs.end(), one.runs.begin(), one.runs.end());
    all.orders_total += one.orders_total;
  }
  all.summary = bench::summarize(all.runs);
  all.verdict = bench::judge(all.runs, all.summary, all.rate, all.thresholds);
  all.cdf.clear();
  json j = json::parse(bench::to_json(all));
  j["cdf"] = mixed_cdf(rounds);
  j["audit"] = rounds.back().at("audit");
  json audits = json::array();
  for (std::size_t i = 0; i < rounds.size(); ++i)
    audits.push_back({{"round", round_of[i] + 1}, {"audit", rounds[i].at("audit")}});
  j["audits"] = audits;
  j["server"] = rounds.back().at("server");
  j["server"]["cpu_s"] = server_cpu_s;
  j["server"]["cpu_us_per_order"] = all.orders_total ? json(server_cpu_s * 1e6 / all.orders_total) : json();
  j["server_exit_code"] = 0;
  pairing.refused_rounds = refusals;
  j["pairing"] = to_json(pairing);
  return j;
}

}  // namespace kite::lab::detail

namespace kite::lab {

using namespace detail;

namespace {

// Each state and its text in result files: the one place they are paired.
constexpr std::pair<CellState, std::string_view> kCellStateTexts[] = {
    {CellState::measured, "measured"}, {CellState::refused, "refused"}, {CellState::marked, "marked"},
    {CellState::unbuilt, "unbuilt"},   {CellState::error, "error"},     {CellState::check_failed, "check-failed"},
};

}  // namespace

std::string to_string(CellState s) {
  for (const auto& [state, text] : kCellStateTexts)
    if (state == s) return std::string(text);
  return "error";
}

std::optional<CellState> cell_state_from_string(std::string_view text) {
  for (const auto& [state, t] : kCellStateTexts)
    if (t == text) return state;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, CellState s) { return out << to_string(s); }

CellOutcome outcome_from_json(const json& j) {
  CellOutcome o;
  const json& c = j.at("cell");
  o.cell = {c.value("flavour", ""), c.value("transport", ""), c.value("model", ""), c.value("loop", ""),
            c.value("store", "")};
  const json lab = j.value("lab", json::object());
  const std::string state = lab.value("state", j.contains("summary") ? "measured" : "error");
  std::optional<CellState> s = cell_state_from_string(state);
  if (!s) throw std::runtime_error("lab.state '" + state + "' is no cell state");
  o.state = *s;
  o.marker = j.value("marker", "");
  if (j.contains("verdict") && j["verdict"].is_string()) o.verdict = j["verdict"].get<std::string>();
  o.reason = lab.value("reason", "");
  const SummaryRecord summary = result_record_from_json(j).summary;
  auto get = [&](const char* view) -> double {
    const LatencyRecord* v = summary.view(view);
    return v && v->p50 ? *v->p50 : -1;
  };
  o.service_p50 = get("service");
  o.p50 = o.cell.loop == "open" ? get("response") : o.service_p50;
  if (o.p50 < 0) o.p50 = o.service_p50;
  return o;
}

std::vector<CellOutcome> load_sitting_cells(const std::string& dir) {
  std::vector<CellOutcome> out;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename() != "sitting.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      out.push_back(outcome_from_json(json::parse(read_text(f.string()))));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: %s: not a cell result, left out: %s\n", f.c_str(), e.what());
    }
  }
  return out;
}

}  // namespace kite::lab
