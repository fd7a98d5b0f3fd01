// Paired rounds (matrix `pairing = "rounds"`, method v2): a group's servers
// started once and held, measured in interleaved rounds, judged against the reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "kite/lab/hold.hpp"
#include "kite/lab/pairing.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

// A member of a paired group: its server, started once and held between its runs.
struct Member {
  Cell cell;
  std::size_t index = 0;
  AttemptPlan plan;
  Child server;
  Attempt start;              ///< how starting the server went; its effective stamp
  bool live = false;          ///< its server runs (held or measured)
  std::vector<json> rounds;   ///< the client result of each round measured and passed by the audit
  std::vector<int> round_of;  ///< the round number of each of `rounds`
  std::vector<std::string> failures, refusals;
  json refused_last;  ///< the last round the audit refused (its figures withheld if no round passed)
  double server_cpu_s = 0;
};

// The client of one round: a single run into its own result file.
AttemptPlan round_plan(const AttemptPlan& base, int round) {
  AttemptPlan p = base;
  p.client_json = base.work + "/client-r" + std::to_string(round) + ".json";
  fs::remove(p.client_json);
  for (std::size_t i = 0; i + 1 < p.client.argv.size(); ++i) {
    if (p.client.argv[i] == "--runs") p.client.argv[i + 1] = "1";
    if (p.client.argv[i] == "--json") p.client.argv[i + 1] = p.client_json;
  }
  return p;
}

// The p50 a cell is judged on: response time in open loop, service time in closed.
double judged_p50(const json& result, const std::string& loop) {
  const json& s = result.at("summary");
  const std::string view = loop == "open" && s.contains("response") ? "response" : "service";
  return s.at(view).at("p50").get<double>();
}

// Starts a member's server and waits for it; false (with m.start's reason) when it did not come up.
bool start_member(Context& c, Member& m) {
  m.plan = plan_attempt(c, m.cell, 1);
  m.start.effective = m.plan.effective;
  const CellProgress progress{c, m.cell, m.index, 1};
  if (!start_process(m.plan.server, "server", m.server, m.start)) return false;
  progress.show("starting server");
  if (!wait_for_server(c, m.plan, m.server, m.start)) return false;
  point_client_at_ready_port(m.plan, m.start);
  m.start.end = AttemptEnd::measured;
  m.live = true;
  return true;
}

// Resumes the member, runs one client against it and holds it again; the
// round's judged p50, or -1 when the run failed or the audit refused it.
double run_round(Context& c, Member& m, int round, bool& interrupted) {
  const pid_t group = m.server.pid();
  if (!m.live || m.server.exit_code()) {
    m.live = false;
    m.failures.push_back("round " + std::to_string(round + 1) + ": the server is gone");
    return -1;
  }
  if (std::string e = resume_group(group); !e.empty()) m.failures.push_back(e);
  AttemptPlan p = round_plan(m.plan, round);
  const CellProgress progress{c, m.cell, m.index, 1};
  Attempt a;
  a.effective = m.start.effective;
  Child client;
  double p50 = -1;
  if (start_process(p.client, "client", client, a)) {
    ClientRun run = supervise_client(progress, p, m.server, client, false);
    judge_client_run(c, p, run, a);
    if (run.server_before.cpu_s >= 0 && run.server_after.cpu_s >= run.server_before.cpu_s)
      m.server_cpu_s += run.server_after.cpu_s - run.server_before.cpu_s;
  }
  const std::string tag = "round " + std::to_string(round + 1) + ": ";
  if (a.end == AttemptEnd::measured) {
    p50 = judged_p50(a.result, m.cell.loop);
    m.rounds.push_back(std::move(a.result));
    m.round_of.push_back(round);
  } else if (a.end == AttemptEnd::refused) {
    m.refusals.push_back(tag + a.reason);
    m.refused_last = std::move(a.result);
  } else if (a.end == AttemptEnd::interrupted) {
    interrupted = true;
  } else {
    m.failures.push_back(tag + a.reason);
  }
  if (m.server.exit_code()) {
    m.live = false;
  } else if (std::string e = hold_group(group); e.empty()) {
    if (std::string held = verify_held(group, 0.0, 2.0); !held.empty()) m.failures.push_back(tag + "hold: " + held);
  }
  return p50;
}

// Writes each member's result once its group has finished.
void record_members(Context& c, std::vector<Member>& ms, const PairedGroup& g, const std::vector<std::size_t>& live,
                    const std::vector<std::vector<std::size_t>>& orders, const std::vector<std::vector<double>>& p50s,
                    json& stamp, SittingResult& res) {
  const auto summary = g.summary();
  for (std::size_t k = 0; k < live.size(); ++k) {
    Member& m = ms[live[k]];
    Attempts t;
    t.made = 1;
    t.last = m.start;
    if (m.rounds.empty() && !m.refusals.empty()) {
      t.last.end = AttemptEnd::refused;  // every round refused: figures withheld
      t.last.result = m.refused_last;
      t.last.result["pairing"] = to_json(pairing_record(g, summary[k], m.cell, orders, p50s, k));
      t.last.reason = join(m.refusals, "; ");
    } else if (m.rounds.empty()) {
      t.last.end = AttemptEnd::error;
      t.last.reason = "no round measured: " + join(m.failures, "; ");
    } else {
      t.last.end = AttemptEnd::measured;
      t.last.result = member_result(m.rounds, m.round_of, m.server_cpu_s, m.refusals,
                                    pairing_record(g, summary[k], m.cell, orders, p50s, k));
      // The reference runs several times a round: count rounds, not runs.
      const std::set<int> passed(m.round_of.begin(), m.round_of.end());
      t.last.reason = c.opt.audit ? "audit passed in " + std::to_string(passed.size()) + " of " +
                                        std::to_string(g.rounds()) + " rounds"
                                  : "audit disabled";
      t.failures = m.failures;
    }
    res.cells.push_back(record_cell(c, m.cell, t, stamp));
    show_outcome(c, m.index, res.cells.back());
  }
}

// One line per group on the terminal: rounds, why it stopped, each member's ratio.
void show_group(Context& c, const PairedGroup& g, const Cell& cell) {
  const std::string key = (cell.store.empty() ? "" : cell.flavour + "/") + cell.transport + "/" + cell.model + "/" +
                          cell.loop + (cell.store.empty() ? "" : ", on the store");
  std::string line = "[group " + key + "] " + std::to_string(g.rounds()) + " rounds (" + to_string(g.stop()) + ", +-" +
                     num(std::round(g.width_reached() * 1000) / 10) + "%):";
  for (const auto& s : g.summary()) {
    if (s.reference || s.ratios.empty()) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, " %s %.3f [%.3f, %.3f] %s", s.name.c_str(), s.interval.median, s.interval.low,
                  s.interval.high, to_string(s.verdict));
    line += buf;
    if (!s.unsteady_rounds.empty()) line += " (" + std::to_string(s.unsteady_rounds.size()) + " unsteady)";
    line += ";";
  }
  c.progress.show(line, true);
}

// A group of one (the tls cells, which only cpp serves) runs as a sequential
// cell, with as many runs as a group has rounds at least, so that its CVs
// mean something. False when the sitting was interrupted.
bool run_group_of_one(Context& c, const Cell& cell, std::size_t index, json& stamp, SittingResult& res) {
  const int runs = c.opt.matrix.runs;
  c.opt.matrix.runs = std::max(runs, c.opt.matrix.rounds.min_rounds);
  Attempts t = run_attempts(c, cell, index);
  c.opt.matrix.runs = runs;
  if (t.interrupted) return false;
  res.cells.push_back(record_cell(c, cell, t, stamp));
  show_outcome(c, index, res.cells.back());
  return true;
}

// Starts and holds every member's server; a member that does not come up is
// recorded. Returns the members that run (indexes into ms); nullopt when interrupted.
std::optional<std::vector<std::size_t>> start_members(Context& c, std::vector<Member>& ms, json& stamp,
                                                      SittingResult& res) {
  std::vector<std::size_t> live;
  for (std::size_t k = 0; k < ms.size(); ++k) {
    if (!start_member(c, ms[k])) {
      if (ms[k].start.end == AttemptEnd::interrupted) return std::nullopt;
      Attempts t;
      t.made = 1;
      t.last = ms[k].start;
      res.cells.push_back(record_cell(c, ms[k].cell, t, stamp));
      show_outcome(c, ms[k].index, res.cells.back());
      continue;
    }
    hold_group(ms[k].server.pid());
    live.push_back(k);
  }
  return live;
}

void stop_members(std::vector<Member>& ms, const std::vector<std::size_t>& live) {
  for (std::size_t k : live) {
    resume_group(ms[k].server.pid());
    ms[k].server.stop(5.0);
  }
}

// Too few members started to pair (or not the reference): those that did run
// one after another. False when the sitting was interrupted.
bool run_unpaired(Context& c, std::vector<Member>& ms, const std::vector<std::size_t>& live, json& stamp,
                  SittingResult& res) {
  stop_members(ms, live);
  for (std::size_t k : live) {
    Attempts t = run_attempts(c, ms[k].cell, ms[k].index);
    if (t.interrupted) return false;
    res.cells.push_back(record_cell(c, ms[k].cell, t, stamp));
    show_outcome(c, ms[k].index, res.cells.back());
  }
  return true;
}

PairingRule pairing_rule(const Matrix::Rounds& mr) {
  PairingRule rule;
  rule.min_rounds = mr.min_rounds;
  rule.max_rounds = mr.max_rounds;
  rule.budget_rounds = mr.budget_rounds;
  rule.target = mr.target;
  rule.resolution = mr.resolution;
  return rule;
}

// Runs the group's rounds until it is done; false when interrupted.
bool run_rounds(Context& c, std::vector<Member>& ms, const std::vector<std::size_t>& live, PairedGroup& g,
                std::vector<std::vector<std::size_t>>& orders) {
  bool interrupted = false;
  while (!g.done() && !interrupted && !stop_requested()) {
    std::vector<std::size_t> order = g.next_order();
    std::vector<double> p50(order.size(), -1);
    for (std::size_t i = 0; i < order.size() && !interrupted; ++i)
      p50[i] = run_round(c, ms[live[order[i]]], g.rounds(), interrupted);
    if (interrupted) break;
    g.add_round(order, p50);
    orders.push_back(order);
  }
  return !interrupted && !stop_requested();
}

}  // namespace

// Measures a group of cells that differ only in the matrix's pair_on
// dimension (the flavour, or the store) in interleaved rounds, each member
// named by Cell::member(). Returns false when the sitting was interrupted.
bool run_paired_group(Context& c, const std::vector<Cell>& cells, const std::vector<std::size_t>& idx, json& stamp,
                      SittingResult& res) {
  if (idx.size() < 2) return run_group_of_one(c, cells[idx[0]], idx[0], stamp, res);
  std::vector<Member> ms(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) {
    ms[k].cell = cells[idx[k]];
    ms[k].index = idx[k];
  }
  const std::optional<std::vector<std::size_t>> started = start_members(c, ms, stamp, res);
  if (!started) return false;
  const std::vector<std::size_t>& live = *started;
  std::vector<std::string> names;
  std::optional<std::size_t> ref;
  for (std::size_t k : live) {
    if (is_reference(c.opt.matrix, ms[k].cell)) ref = names.size();
    names.push_back(ms[k].cell.member());
  }
  if (live.size() < 2 || !ref) return run_unpaired(c, ms, live, stamp, res);
  PairedGroup g(names, *ref, pairing_rule(c.opt.matrix.rounds), c.pairing_seed);
  std::vector<std::vector<std::size_t>> orders;
  const bool finished = run_rounds(c, ms, live, g, orders);
  stop_members(ms, live);
  if (!finished) return false;
  show_group(c, g, ms[live.front()].cell);
  record_members(c, ms, g, live, orders, g.p50s(), stamp, res);
  return true;
}

}  // namespace kite::lab::detail
