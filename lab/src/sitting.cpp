// A sitting: set up, its cells run and its network and services taken down; the
// plan, attempt, stamp and store parts are in sitting_*.cpp (sitting_parts.hpp).
#include "kite/lab/sitting.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "kite/lab/install.hpp"
#include "kite/lab/pairing.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/services.hpp"
#include "kite/lab/tls.hpp"
#include "kite/lab/util.hpp"
#include "kite/lab/wire.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

void fill_defaults(SittingOptions& opt) {
  if (opt.results_dir.empty()) opt.results_dir = opt.source_dir + "/results";
  if (opt.flavours_dir.empty()) opt.flavours_dir = opt.source_dir + "/lab/flavours";
  if (opt.client_binary.empty()) opt.client_binary = opt.build_dir + "/bench_roundtrip";
}

// The sitting's folder: the one to resume (given, or found under the sitting's name), else a new one.
std::string sitting_dir(SittingOptions& opt) {
  if (opt.resume_dir.empty() && !opt.sitting_name.empty()) {
    std::string candidate = opt.results_dir + "/" + opt.machine.name + "/" + opt.sitting_name;
    if (fs::exists(candidate + "/sitting.json")) opt.resume_dir = candidate;
  }
  if (!opt.resume_dir.empty()) return opt.resume_dir;
  std::string name = opt.sitting_name.empty() ? utc_now_compact() : opt.sitting_name;
  return opt.results_dir + "/" + opt.machine.name + "/" + name;
}

// The nic path runs between interfaces of this host's machine file.
void check_nics(const Machine& m) {
  if (m.nics.empty()) throw ConfigError(m.source_name + ": network.nic: the nic path needs [[network.nic]] pairs");
  for (const auto& p : m.nics)
    for (const auto& i : {p.server_if, p.client_if})
      if (!fs::exists("/sys/class/net/" + i))
        throw ConfigError(m.source_name + ": network.nic." + p.name + ": interface '" + i +
                          "' does not exist on this host; this machine file describes another host "
                          "(use --machine local or --network loopback|netns here)");
}

// Puts back what a sitting that died left on the wire (the results folder's
// wire-state.json) before anything looks at the interfaces. A wire held by a
// running sitting stops this one when it takes the nic path too; one that
// cannot be put back stops any sitting, since removing the namespaces it is
// in would lose it.
WireRestore restore_wire_at_start(const SittingOptions& opt) {
  const std::string file = wire_state_path(opt.results_dir);
  WireRestore r = restore_wire(file);
  if (!r.found) return r;
  const std::string network = opt.network ? *opt.network : opt.machine.network;
  if (r.held) {
    if (network == "nic")
      throw ConfigError("network path nic: the interfaces are held by a running sitting (" + r.owner + "; " + file +
                        ")");
    return r;
  }
  for (const auto& d : r.done)
    std::fprintf(stderr, "bench-run: wire: put back what a stopped sitting (%s) moved: %s\n", r.owner.c_str(),
                 d.c_str());
  if (!r.failed.empty())
    throw ConfigError(file + ": what a stopped sitting (" + r.owner +
                      ") moved cannot all be put back: " + join(r.failed, "; ") +
                      " (the file and its namespaces are kept: put the interfaces back by hand, then remove the file)");
  return r;
}

// The tls cells' CA and server certificate, made fresh in the sitting's
// folder for every address a server may bind (loopback, the netns server,
// the NIC pairs'). Nothing is made when no cell is tls.
void make_certificates(Setup& c, const std::vector<Cell>& cells) {
  if (std::none_of(cells.begin(), cells.end(), [](const Cell& x) { return x.transport == "tls"; })) return;
  const Machine& m = c.opt.machine;
  std::vector<std::string> addresses = {m.netns_server_addr};
  for (const auto& n : m.nics) addresses.push_back(n.server_addr);
  try {
    c.tls = make_lab_certificates(c.dir + "/.work/tls", addresses);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
}

// The settings every cell shares, checked; throws ConfigError for a wrong one.
void set_up_context(Context& c, const std::string& dir) {
  const SittingOptions& opt = c.opt;
  c.dir = dir;
  c.host = opt.machine.name;
  c.sitting = fs::path(dir).filename().string();
  c.progress.enabled = opt.progress;
  c.flavours = load_flavours(opt.flavours_dir, opt.matrix.flavours);
  c.busy_poll = opt.busy_poll_usecs ? *opt.busy_poll_usecs : opt.machine.kernel_busy_poll_usecs;
  c.idle = opt.idle ? *opt.idle : opt.matrix.idle;
  c.network = opt.network ? *opt.network : opt.machine.network;
  if (c.idle != "spin" && c.idle != "block") throw ConfigError("--idle: must be spin or block, not '" + c.idle + "'");
  if (c.network != "loopback" && c.network != "netns" && c.network != "nic")
    throw ConfigError("--network: must be loopback, netns or nic, not '" + c.network + "'");
  if (c.network == "nic") check_nics(opt.machine);
  if (c.network == "netns" && geteuid() != 0)
    throw ConfigError("network path netns needs root (network namespaces and a veth pair)");
  if (c.network == "nic" && geteuid() != 0)
    throw ConfigError("network path nic needs root (it moves the pairs' interfaces into two network namespaces)");
  c.client_path = find_executable(opt.client_binary, "");
  if (c.client_path.empty()) c.client_path = opt.client_binary;
  c.workers = workers_for(opt.matrix, opt.machine);
  if (std::string why = missing_services(opt.matrix, opt.machine); !why.empty()) throw ConfigError(why);
}

// A sitting of installs (--installed, or the matrix's `installed`): each
// flavour's files and the client become the copies in its install.
void use_installs(Setup& c) {
  const SittingOptions& opt = c.opt;
  if (!opt.installed && !opt.matrix.installed) return;
  c.installed = choose_installs(opt.results_dir, opt.machine.name, opt.matrix.flavours, opt.pinned_installs);
  for (auto& [name, f] : c.flavours) point_at_install(f, *c.installed.server(name));
  if (c.installed.client) c.client_path = c.installed.client->binary;
}

// Removes what crashed sittings left, then brings up this sitting's namespaces when it runs in them.
void set_up_network(Context& c, json& stamp) {
  // Leftovers of a crashed sitting (what 'bench-run cleanup' removes), only those whose lab is gone.
  if (auto removed = remove_orphaned_namespaces(); !removed.empty()) {
    std::fprintf(stderr, "bench-run: removed %zu network namespace(s)/link(s) left by a crashed sitting: %s\n",
                 removed.size(), join(removed).c_str());
  }
  if (c.network != "netns" && c.network != "nic") return;
  // The tag keeps names short (interface names have 15 characters) and unique per lab process.
  std::string tag = std::to_string(getpid() % 1000000);
  const Machine& m = c.opt.machine;
  if (c.network == "nic") {
    c.wire = std::make_unique<WirePath>(m, tag, wire_state_path(c.opt.results_dir), c.dir);
    c.wire->up();
    stamp["wire"] = c.wire->record();
    stamp["netns"] = {{"server", c.wire->server_ns()}, {"client", c.wire->client_ns()}};
  } else {
    c.netns = std::make_unique<NetnsPair>(tag, m.netns_server_addr, m.netns_client_addr, m.netns_prefix);
    c.netns->up();
    stamp["netns"] = {
        {"server", c.netns->server_ns()}, {"client", c.netns->client_ns()}, {"offloads", c.netns->offloads()}};
  }
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
}

// Takes the sitting's network down: the netns pair removed, the wire's
// interfaces put back where they were (recorded under wire.restored).
void take_down_network(Context& c, json* stamp) {
  if (c.netns) c.netns->down();
  if (!c.wire || !c.wire->is_up()) return;
  c.wire->down();
  const WireRestore& r = c.wire->restored();
  for (const auto& f : r.failed) std::fprintf(stderr, "bench-run: wire: NOT put back: %s\n", f.c_str());
  if (stamp && stamp->contains("wire"))
    (*stamp)["wire"]["restored"] = {{"at", utc_now_iso()}, {"done", r.done}, {"failed", r.failed}};
}

// Starts the machine's postgresql service when a cell left to run needs it;
// records it in sitting.json either way. Stopped by stop_services.
void start_services(Context& c, const std::vector<Cell>& cells, json& stamp) {
  const auto decl = c.opt.machine.services.find("postgresql");
  if (decl == c.opt.machine.services.end()) return;
  const bool needed = std::any_of(cells.begin(), cells.end(), [&](const Cell& cell) {
    return !service_for_store(cell_store(c, cell)).empty() && !done_before(c, cell, true) &&
           marker_for(cell, c.opt.machine, c.flavours.at(cell.flavour), c.workers).empty();
  });
  if (!needed) return;
  c.pg = std::make_unique<PgService>(decl->second, c.opt.source_dir + "/tests/support/pg_server.sh", c.dir + "/.work");
  c.progress.show("starting the postgresql service on core(s) " + format_core_list(decl->second.cores), true);
  if (!c.pg->start()) c.progress.show("bench-run: " + c.pg->why() + "; its cells are marked noservice", true);
  stamp["services"]["postgresql"] = c.pg->stamp();
  write_text_atomic(c.dir + "/sitting.json", stamp.dump(1));
}

void stop_services(Context& c, json& stamp) {
  if (!c.pg) return;
  c.pg->stop();
  stamp["services"]["postgresql"] = c.pg->stamp();
}

// Paired rounds: each group of the cells to run (group_pending) measured in rounds, in sitting order.
void run_groups(Context& c, const std::vector<Cell>& cells, const std::vector<std::size_t>& pending, json& stamp,
                SittingResult& res, Stop& stop) {
  for (const auto& idx : group_pending(c.opt.matrix, cells, pending)) {
    stop.reason = changed_binary(c, hash_binaries(c));
    if (!stop.reason.empty()) return;
    if (!run_paired_group(c, cells, idx, stamp, res) || stop_requested()) {
      stop.interrupted = true;
      return;
    }
  }
}

// Runs every cell in order, keeping those an earlier run finished; the network
// set up for them is taken down however they end.
Stop run_cells(Context& c, const std::vector<Cell>& cells, json& stamp, SittingResult& res) {
  Stop stop;
  std::vector<std::size_t> pending;  // paired rounds: the cells to run, grouped once all are known
  try {
    set_up_network(c, stamp);
    start_services(c, cells, stamp);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Cell& cell = cells[i];
      if (stop_requested()) {
        stop.interrupted = true;
        break;
      }
      std::optional<CellOutcome> settled = done_before(c, cell);
      if (!settled) settled = mark_if_impossible(c, cell);
      if (!settled) settled = unbuilt_if_missing(c, cell, i);
      if (!settled) settled = check_failed_if(c, cell, i);
      if (!settled) settled = skip_if_no_service(c, cell, i);
      if (settled) {
        res.cells.push_back(*settled);
        continue;
      }
      if (c.opt.matrix.pairing == "rounds") {
        pending.push_back(i);
        continue;
      }
      stop.reason = changed_binary(c, hash_binaries(c));
      if (!stop.reason.empty()) break;
      Attempts t = run_attempts(c, cell, i);
      if (t.interrupted) {
        stop.interrupted = true;
        break;
      }
      res.cells.push_back(record_cell(c, cell, t, stamp));
      show_outcome(c, i, res.cells.back());
    }
    if (!stop.interrupted && stop.reason.empty()) run_groups(c, cells, pending, stamp, res, stop);
  } catch (...) {
    stop_services(c, stamp);
    take_down_network(c, &stamp);
    throw;
  }
  stop_services(c, stamp);
  take_down_network(c, &stamp);
  if (stop_requested()) stop.interrupted = true;
  return stop;
}

// Asks every binary the sitting runs for its build (`--version`).
void ask_versions(Setup& c) {
  for (auto& [p, b] : c.binaries)
    if (b.run && !b.sha256.empty()) b.version = ask_version(p);
}

// One step of a stepped sitting: settled before it starts, or run and recorded;
// its result file read back into `steps`. False when the sitting stops (`stop` says why).
bool run_step(Context& c, const Step& step, std::size_t i, json& stamp, SittingResult& res,
              std::vector<StepResult>& steps, Stop& stop) {
  c.step = &step;
  c.progress.total = std::max(step.planned, i + 1);
  c.to_run_after.assign(i + 1, 0);  // the progress line's time left: the steps planned after this one
  c.to_run_after[i] = c.progress.total - i - 1;
  const Cell& cell = step.cell;
  std::optional<CellOutcome> settled = mark_if_impossible(c, cell);
  if (!settled) settled = unbuilt_if_missing(c, cell, i);
  if (!settled) settled = check_failed_if(c, cell, i);
  if (!settled) {
    stop.reason = changed_binary(c, hash_binaries(c));
    if (!stop.reason.empty()) return false;
    Attempts t = run_attempts(c, cell, i);
    if (t.interrupted) {
      stop.interrupted = true;
      return false;
    }
    settled = record_cell(c, cell, t, stamp);
    show_outcome(c, i, *settled);
  }
  const std::string file = step.dir + "/" + step.name + ".json";
  json result;
  try {
    result = json::parse(read_text(c.dir + "/" + file));
  } catch (const std::exception&) {
    result = json::object();
  }
  res.cells.push_back(*settled);
  steps.push_back({step, *settled, std::move(result), file});
  return true;
}

// The steps `next` chooses, one after another, until it chooses none or the
// sitting stops; the network set up for them is taken down however they end.
void run_steps(Context& c, const StepPlanner& next, std::vector<StepResult>& steps, json& stamp, SittingResult& res,
               Stop& stop) {
  try {
    set_up_network(c, stamp);
    for (std::size_t i = 0;; ++i) {
      if (stop_requested()) {
        stop.interrupted = true;
        break;
      }
      const std::optional<Step> step = next(steps);
      if (!step || !run_step(c, *step, i, stamp, res, steps, stop)) break;
    }
  } catch (...) {
    c.step = nullptr;
    take_down_network(c, &stamp);
    throw;
  }
  c.step = nullptr;
  take_down_network(c, &stamp);
}

void set_exit(SittingResult& res, const Stop& stop, const SittingOptions& opt) {
  if (!stop.reason.empty()) {
    res.exit_code = 3;
    res.message = "sitting stopped: " + stop.reason;
  } else if (stop.interrupted) {
    res.exit_code = 130;
    res.message = "sitting interrupted; resume with: bench-run --resume " + rel(res.dir, opt.source_dir);
  } else {
    bool errors = std::any_of(res.cells.begin(), res.cells.end(), [](const CellOutcome& o) {
      return o.state == CellState::error || o.state == CellState::check_failed;
    });
    res.exit_code = errors ? 2 : 0;
    res.message = errors ? "sitting complete with cells in error or whose flavour failed its check (see their results)"
                         : "sitting complete";
  }
}

}  // namespace

void show_outcome(Context& c, std::size_t index, const CellOutcome& o) {
  const std::string state = to_string(o.state);
  char p50[32] = "";
  if (o.p50 >= 0) std::snprintf(p50, sizeof p50, " p50=%.2f us", o.p50);
  c.progress.show(cell_prefix(index, c.progress.total) + cell_label(c, o.cell) + ": " +
                      (o.state == CellState::marked ? o.marker : state) +
                      (o.verdict.empty() || o.verdict == state ? "" : " " + o.verdict) + p50 +
                      (o.state == CellState::measured
                           ? ""
                           : " (" + (o.reason.size() > 200 ? o.reason.substr(0, 200) + "..." : o.reason) + ")"),
                  true);
}

}  // namespace kite::lab::detail

namespace kite::lab {

using namespace detail;

SittingResult run_stepped_sitting(SittingOptions opt, const StepPlanner& next, std::vector<StepResult>& steps) {
  fill_defaults(opt);
  if (!opt.resume_dir.empty()) throw ConfigError("--resume: a sweep cannot be resumed; run it again");
  const std::string dir = sitting_dir(opt);
  if (!opt.resume_dir.empty()) throw ConfigError(dir + ": a sitting of that name exists; a sweep cannot be resumed");
  const WireRestore wire_restore = restore_wire_at_start(opt);
  Context c(opt);
  set_up_context(c, dir);
  use_installs(c);
  const std::vector<Cell> cells = plan_cells(opt.matrix);  // what check-flavour plays
  c.binaries = hash_binaries(c);
  ask_versions(c);
  fs::create_directories(dir);
  json stamp = start_stamp(c, json());
  stamp["kind"] = "sweep";
  if (wire_restore.found) stamp["wire_restored_at_start"] = wire_restore.to_json();
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  c.sitting_stamp = cell_sitting_stamp(c, stamp);
  make_certificates(c, cells);

  install_stop_handlers();
  SittingResult res;
  res.dir = dir;
  Stop stop;
  stop.interrupted = !run_checks(c, cells, stamp);
  if (!stop.interrupted) run_steps(c, next, steps, stamp, res, stop);
  if (stop_requested()) stop.interrupted = true;
  end_stamp(stamp, stop, res);
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  set_exit(res, stop, opt);
  if (stop.interrupted) res.message = "sweep interrupted; its steps so far are in " + rel(dir, opt.source_dir);
  return res;
}

SittingResult run_sitting(SittingOptions opt) {
  fill_defaults(opt);
  const std::string dir = sitting_dir(opt);
  const json previous = opt.resume_dir.empty() ? json() : resume_stamp(opt, dir);
  if (opt.cells) {
    if (std::string bad = check_cell_selection(opt.matrix, *opt.cells); !bad.empty())
      throw ConfigError("--cells: " + bad);
    opt.matrix.cells = *opt.cells;
  }
  const WireRestore wire_restore = restore_wire_at_start(opt);
  Context c(opt);
  set_up_context(c, dir);
  use_installs(c);
  c.pairing_seed = pairing_seed_for(opt.matrix, previous);
  const std::vector<Cell> cells = plan_cells(opt.matrix);
  c.binaries = hash_binaries(c);
  SittingResult res;
  if (!previous.is_null()) {
    if (std::string refusal = resume_refusal(c, previous); !refusal.empty()) {
      res.exit_code = 3;
      res.dir = dir;
      res.message = refusal;
      return res;
    }
  }
  ask_versions(c);

  fs::create_directories(dir);
  json stamp = start_stamp(c, previous);
  if (wire_restore.found) stamp["wire_restored_at_start"] = wire_restore.to_json();
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  for (const auto& w : stamp["provenance"]["warnings"])
    std::fprintf(stderr, "bench-run: host: %s\n", w.get<std::string>().c_str());
  c.sitting_stamp = cell_sitting_stamp(c, stamp);
  make_certificates(c, cells);

  install_stop_handlers();
  res.dir = dir;
  Stop stop;
  stop.interrupted = !run_checks(c, cells, stamp);
  count_cells_to_run(c, cells);
  if (!stop.interrupted) stop = run_cells(c, cells, stamp, res);
  end_stamp(stamp, stop, res);
  write_text_atomic(dir + "/sitting.json", stamp.dump(1));
  if (opt.build_site) {
    try {
      build_site(opt.results_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
    }
  }
  set_exit(res, stop, opt);
  return res;
}

std::vector<SittingResult> run_sitting_per_cell(SittingOptions opt) {
  fill_defaults(opt);
  if (!opt.resume_dir.empty())
    throw ConfigError("--one-sitting-per-cell: cannot resume a series; resume each sitting with --resume DIR");
  Matrix mx = opt.matrix;
  if (opt.cells) {
    if (std::string bad = check_cell_selection(mx, *opt.cells); !bad.empty()) throw ConfigError("--cells: " + bad);
    mx.cells = *opt.cells;
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> units = series_units(mx);
  if (units.empty()) throw ConfigError("--one-sitting-per-cell: the matrix plans no cell");
  const std::string base = opt.sitting_name.empty() ? utc_now_compact() : opt.sitting_name;
  for (const auto& [suffix, ids] : units) {
    const std::string dir = opt.results_dir + "/" + opt.machine.name + "/" + base + "-" + suffix;
    if (fs::exists(dir + "/sitting.json"))
      throw ConfigError("--one-sitting-per-cell: " + dir +
                        " exists; choose another --sitting, or resume that sitting with --resume");
  }
  const bool site = opt.build_site;
  std::vector<SittingResult> out;
  for (const auto& [suffix, ids] : units) {
    SittingOptions one = opt;
    one.sitting_name = base + "-" + suffix;
    one.cells = ids;
    one.series = base;
    one.build_site = false;
    out.push_back(run_sitting(one));
    if (out.back().exit_code == 3 || out.back().exit_code == 130) break;
  }
  if (site) {
    try {
      build_site(opt.results_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
    }
  }
  return out;
}

int series_exit_code(const std::vector<SittingResult>& results) {
  int code = 0;
  for (const auto& r : results) {
    if (r.exit_code == 130 || r.exit_code == 3) return r.exit_code;
    code = std::max(code, r.exit_code);
  }
  return code;
}

}  // namespace kite::lab
