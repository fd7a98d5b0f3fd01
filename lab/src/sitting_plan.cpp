// A sitting's plan: which cells run, in which groups and order, and which are
// settled before they start (done before, marked, unbuilt, their flavour's check failed).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "kite/lab/check.hpp"
#include "kite/lab/pairing.hpp"
#include "kite/lab/services.hpp"
#include "kite/lab/util.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

// Why a flavour cannot run here ("" when it can): its binary, a command it
// requires, or an artifact is missing.
std::string unbuilt_flavour(const Setup& c, const Flavour& fl) {
  const SittingOptions& opt = c.opt;
  if (flavour_binary(c, fl).empty())
    return "server binary '" + fl.binary + "' of flavour " + fl.name + " is not built (looked in " +
           rel(opt.build_dir, opt.source_dir) + " and PATH)";
  std::vector<std::string> tools;
  for (const auto& t : fl.required_tools)
    if (find_executable(t, "").empty()) tools.push_back(t);
  if (!tools.empty()) return "needs " + join(tools, ", ") + ", not found on PATH";
  for (const auto& a : fl.artifacts)
    if (find_artifact(a, opt.build_dir).empty())
      return "artifact '" + a + "' of flavour " + fl.name + " is missing (looked in " +
             rel(opt.build_dir, opt.source_dir) + ")";
  return "";
}

// Whether a flavour's server can be given a postgresql store: its args pass
// {store_conninfo}, or {acceptor_config} (the file names the database).
bool takes_postgresql(const Flavour& f) {
  return std::any_of(f.args.begin(), f.args.end(), [](const std::string& a) {
    return a.find("{store_conninfo}") != std::string::npos || a.find("{acceptor_config}") != std::string::npos;
  });
}

// The transports and models of the flavour's cells that can run (the matrix's
// that this machine has and the flavour declares); empty when every such cell
// is done already (a resumed sitting), so that there is nothing to check.
std::pair<std::vector<std::string>, std::vector<std::string>> to_check(const Setup& c, const std::vector<Cell>& cells,
                                                                       const Flavour& f) {
  std::vector<std::string> transports, models;
  auto add = [](std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  bool left = false;
  for (const Cell& cell : cells)
    // A build_only transport is not checked: a build without its SDK answers
    // `unsupported:` for it, which its cells then record; the rest is checked.
    if (cell.flavour == f.name && marker_for(cell, c.opt.machine, f, c.workers).empty() &&
        !f.build_only.count(cell.transport)) {
      add(transports, cell.transport);
      add(models, cell.model);
      left = left || !done_before(c, cell, true);
    }
  if (!left) return {};
  return {transports, models};
}

// Plays check-flavour against one flavour, its lines into the sitting's .work/ log.
FlavourCheck check_one(const Setup& c, const Flavour& f, std::vector<std::string> transports,
                       std::vector<std::string> models) {
  FlavourCheck fc;
  fc.ran = true;
  fc.transports = std::move(transports);
  fc.models = std::move(models);
  fc.log = ".work/check-" + f.name + ".log";
  const std::string work = c.dir + "/.work/check-" + f.name;
  fs::remove_all(work);
  fs::create_directories(work);
  std::ofstream log(c.dir + "/" + fc.log, std::ios::trunc);
  CheckOptions o;
  o.flavour = f.name;
  o.resolved = f;  // an installed sitting checks the install it measures
  o.flavours_dir = c.opt.flavours_dir;
  o.build_dir = c.opt.build_dir;
  o.source_dir = c.opt.source_dir;
  o.work_dir = work;
  o.machine = c.opt.machine;
  o.machine.kernel_busy_poll_usecs = c.busy_poll;  // the check's busy poll is the sitting's, when it sets one
  if (c.opt.busy_poll_usecs) o.machine.kernel_busy_poll_by_model.clear();  // the override is every model's
  o.workers = c.workers.count;
  o.transports = fc.transports;
  o.models = fc.models;
  o.ready_timeout_s = c.opt.matrix.ready_timeout_s;
  o.burn_fraction = c.opt.matrix.audit_burn_fraction;
  o.on_line = [&log](const CheckLine& l) { log << l.text() << "\n" << std::flush; };
  o.stop = [] { return stop_requested(); };
  log << "check-flavour " << f.name << ": transports " << join(fc.transports, ", ") << "; models "
      << join(fc.models, ", ") << "; workers " << o.workers << "\n";
  const auto t0 = Clock::now();
  try {
    fc.report = check_flavour(o);
  } catch (const std::exception& e) {
    CheckLine l{CheckStatus::fail, "", "build", std::string("check-flavour could not run: ") + e.what()};
    fc.report.lines.push_back(l);
    ++fc.report.failed;
    log << l.text() << "\n";
  }
  fc.seconds = since(t0);
  log << fc.report.summary() << "\n";
  return fc;
}

}  // namespace

std::string flavour_binary(const Setup& c, const Flavour& f) { return find_executable(f.binary, c.opt.build_dir); }

// The store setting a cell runs with: its own (pair_on = "store"), else the matrix's.
std::string cell_store(const Setup& c, const Cell& cell) {
  return cell.store.empty() ? c.opt.matrix.store : cell.store;
}

// For the progress line's time left: how many cells after each one will run
// (not marked, not done before, their flavour's check not failed).
void count_cells_to_run(Context& c, const std::vector<Cell>& cells) {
  c.progress.total = cells.size();
  c.to_run_after.assign(cells.size(), 0);
  for (std::size_t i = cells.size(); i-- > 1;) {
    auto check = c.checks.find(cells[i].flavour);
    bool runs = marker_for(cells[i], c.opt.machine, c.flavours.at(cells[i].flavour), c.workers).empty() &&
                !fs::exists(c.dir + "/" + cells[i].file_name()) && (check == c.checks.end() || !check->second.failed());
    c.to_run_after[i - 1] = c.to_run_after[i] + (runs ? 1 : 0);
  }
}

// The outcome of a cell an earlier run of this sitting finished, if one did
// (`quiet`: an unreadable result is not reported, as it will be when the cell comes).
std::optional<CellOutcome> done_before(const Setup& c, const Cell& cell, bool quiet) {
  std::string path = c.dir + "/" + cell.file_name();
  if (!fs::exists(path)) return std::nullopt;
  try {
    CellOutcome o = outcome_from_json(json::parse(read_text(path)));
    if (!done_state(o.state)) return std::nullopt;
    o.reused = true;
    return o;
  } catch (const std::exception& e) {
    if (!quiet) std::fprintf(stderr, "bench-run: %s: unreadable, so the cell runs again: %s\n", path.c_str(), e.what());
    return std::nullopt;
  }
}

// "; <flavour> has <transport> only where its SDK is installed: ..." for a
// transport its flavour file declares build_only, else "".
std::string build_only_note(const Setup& c, const Cell& cell) {
  const auto& b = c.flavours.at(cell.flavour).build_only;
  auto it = b.find(cell.transport);
  return it == b.end() ? ""
                       : "; " + cell.flavour + " has " + cell.transport +
                             " only where its SDK is installed (build_only: " + it->second + ")";
}

// Records a cell that cannot exist (nopool, noshard, unmeasurable, unsupported by its flavour, oversubscribed).
std::optional<CellOutcome> mark_if_impossible(const Setup& c, const Cell& cell) {
  std::string marker = marker_for(cell, c.opt.machine, c.flavours.at(cell.flavour), c.workers);
  if (marker.empty()) return std::nullopt;
  const Workers& w = c.workers;
  std::string why = marker == "nopool"         ? cell.transport + " cannot run the pool model"
                    : marker == "noshard"      ? cell.transport + " cannot run the shard model"
                    : marker == "unmeasurable" ? "this host lacks " + cell.transport + build_only_note(c, cell)
                    : marker == "oversubscribed"
                        ? "[server] workers = " + std::to_string(w.count) + " spinning threads on " +
                              std::to_string(w.server_cores) +
                              " server core(s): that measures time slicing, not the model"
                        : cell.flavour + " does not declare " + cell.transport + "/" + cell.model;
  return record_unrun(c, cell, CellState::marked, marker, why);
}

// Records a cell whose store needs a service that is not running (it could
// not start here), or that its flavour cannot be given (no {store_conninfo}
// nor {acceptor_config}).
std::optional<CellOutcome> skip_if_no_service(Context& c, const Cell& cell, std::size_t index) {
  const std::string setting = cell_store(c, cell);
  if (service_for_store(setting).empty()) return std::nullopt;
  if (!takes_postgresql(c.flavours.at(cell.flavour)))
    return record_unrun(c, cell, CellState::marked, "unsupported",
                        cell.flavour + "'s args pass neither {store_conninfo} nor {acceptor_config}: it cannot run store " +
                            setting);
  if (c.pg && c.pg->running()) return std::nullopt;
  const std::string why = "store " + setting + " needs the machine's postgresql service, which " +
                          (c.pg ? "did not start: " + c.pg->why() : std::string("was not started"));
  CellOutcome o = record_unrun(c, cell, CellState::marked, "noservice", why);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, cell) + ": noservice: " + why, true);
  return o;
}

// Records a cell whose flavour failed its check at the start of the sitting.
std::optional<CellOutcome> check_failed_if(Context& c, const Cell& cell, std::size_t index) {
  const FlavourCheck& fc = c.checks[cell.flavour];
  if (!fc.failed()) return std::nullopt;
  std::vector<std::string> failing;
  for (const auto& l : fc.report.lines)
    if (l.status == CheckStatus::fail)
      failing.push_back((l.scope.empty() ? "" : l.scope + " ") + l.name + ": " + l.detail);
  const std::string why = "check-flavour " + cell.flavour + " failed " + std::to_string(fc.report.failed) +
                          " check(s): " + join(failing, "; ");
  CellOutcome o = record_unrun(c, cell, CellState::check_failed, "", why);
  show_outcome(c, index, o);
  return o;
}

// Records a cell whose server or client binary is not built.
std::optional<CellOutcome> unbuilt_if_missing(Context& c, const Cell& cell, std::size_t index) {
  std::string why = unbuilt_flavour(c, c.flavours.at(cell.flavour));
  if (why.empty() && find_executable(c.client_path, "").empty())
    why = "client binary " + rel(c.client_path, c.opt.source_dir) + " is not built";
  if (why.empty()) return std::nullopt;
  CellOutcome o = record_unrun(c, cell, CellState::unbuilt, "", why);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, cell) + ": unbuilt: " + why, true);
  return o;
}

// check-flavour for every flavour of the matrix that is built and has cells
// to run, once per sitting (and again on resume), restricted to what the
// sitting measures; recorded in sitting.json. False when interrupted.
bool run_checks(Context& c, const std::vector<Cell>& cells, json& stamp) {
  json checks = json::object();
  for (const auto& name : c.opt.matrix.flavours) {
    const Flavour& f = c.flavours.at(name);
    FlavourCheck& fc = c.checks[name];
    auto [transports, models] = to_check(c, cells, f);
    if (!c.opt.check) {
      fc.why_not = "--no-check";
    } else if (transports.empty()) {
      fc.why_not = "no cell to run";
    } else if (std::string why = unbuilt_flavour(c, f); !why.empty()) {
      fc.why_not = "unbuilt";
    } else {
      c.progress.show("check-flavour " + name + " (" + join(transports, ", ") + "; " + join(models, ", ") + ") ...",
                      false);
      fc = check_one(c, f, std::move(transports), std::move(models));
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f s", fc.seconds);
      c.progress.show("check-flavour " + name + ": " + fc.report.summary() + " (" + secs + "; " + fc.log + ")", true);
    }
    checks[name] = check_json(c, name, true);
    if (stop_requested()) break;
  }
  stamp["checks"] = checks;
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
  return !stop_requested();
}

// The matrix's seed, a resumed sitting's, or a fresh one (recorded in sitting.json).
std::uint64_t pairing_seed_for(const Matrix& mx, const json& previous) {
  if (mx.rounds.seed != 0) return mx.rounds.seed;
  if (previous.is_object() && previous.contains("pairing"))
    return sitting_pairing_record_from_json(previous["pairing"]).seed.value_or(1);
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32 | rd()) | 1;
}

// Paired rounds: the cells to run grouped by group_key (transport, model and
// loop; with pair_on = "store" the flavour too), in sitting order.
std::vector<std::vector<std::size_t>> group_pending(const Matrix& mx, const std::vector<Cell>& cells,
                                                    const std::vector<std::size_t>& pending) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i : pending) {
    const std::string key = group_key(mx, cells[i]);
    if (groups.empty() || groups.back().first != key) groups.push_back({key, {}});
    groups.back().second.push_back(i);
  }
  std::vector<std::vector<std::size_t>> out;
  for (auto& g : groups) out.push_back(std::move(g.second));
  return out;
}

// --one-sitting-per-cell's sittings: the suffix of each one's name and the ids of
// its cells (exact ids, so each is a selection that matches those cells only).
// A paired matrix has one sitting per group.
std::vector<std::pair<std::string, std::vector<std::string>>> series_units(const Matrix& mx) {
  std::vector<std::pair<std::string, std::vector<std::string>>> units;
  for (const Cell& cell : plan_cells(mx)) {
    const std::string file = cell.file_name();
    std::string suffix = mx.pairing == "rounds" ? group_key(mx, cell) : file.substr(0, file.size() - 5);
    std::replace(suffix.begin(), suffix.end(), '/', '_');  // a group's key, or the file without .json
    auto unit = std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == suffix; });
    if (unit == units.end()) unit = units.insert(units.end(), {suffix, {}});
    unit->second.push_back(cell.id());
  }
  return units;
}

}  // namespace kite::lab::detail
