// bench-run: the latency lab's command line. See docs/lab.md.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "kite/lab/check.hpp"
#include "kite/lab/config.hpp"
#include "kite/lab/install.hpp"
#include "kite/lab/process.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/sweep.hpp"
#include "kite/lab/util.hpp"
#include "kite/lab/wire.hpp"

#ifndef KITE_LAB_GIT
#define KITE_LAB_GIT ""
#endif

namespace fs = std::filesystem;
using namespace kite::lab;

namespace {

fs::path self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : p.parent_path();
}

// The repository root: the first folder holding lab/flavours, from the
// working directory upwards, then from the binary's folder upwards.
std::string find_source_dir() {
  for (fs::path start : {fs::current_path(), self_dir()})
    for (fs::path p = start; !p.empty(); p = p.parent_path()) {
      if (fs::exists(p / "lab" / "flavours")) return p.string();
      if (p == p.parent_path()) break;
    }
  return fs::current_path().string();
}

std::string resolve_file(const std::string& arg, const std::string& dir) {
  if (fs::exists(arg)) return arg;
  std::string named = dir + "/" + arg + ".toml";
  if (fs::exists(named)) return named;
  throw ConfigError(arg + ": no such file, and no " + named);
}

// Every option of every subcommand, as parsed.
struct Cli {
  // The sitting (no subcommand), and what the other subcommands share.
  std::string cells, machine = "local", matrix, sitting, resume, build_dir, source_dir, results, client, idle, network;
  bool installed = false, per_cell = false, quick = false, no_audit = false, no_check = false, no_site = false;
  bool no_progress = false, version = false;
  int busy_poll = -1;
  std::string command_line;
  // compare
  std::string cmp_a, peer = "quickfix", flavour = "cpp", peer_from, cmp_format = "md";
  std::vector<std::string> cmp_b;
  // machine, serve, check-flavour, install
  std::string check_file, chk_flavour, chk_flavours_dir, inst_flavour;
  int serve_port = 8080;
  bool inst_list = false;
  // sweep
  SweepOptions sw;
  std::string sw_flavours = "cpp,quickfix,raw", sw_series = "rate,sessions", sw_counts;
};

struct Commands {
  CLI::App *compare, *cleanup, *machine, *site, *serve, *check, *install, *sweep;
};

void add_sitting_options(CLI::App& app, Cli& c) {
  app.add_option("--machine", c.machine,
                 "machine file: 'local' (derived for this host), a path, or a name in lab/machines");
  app.add_option("--matrix", c.matrix, "matrix file: a path or a name in lab/matrices (default: default, or quick)");
  app.add_flag("--quick", c.quick, "the quick matrix (about a minute): lab/matrices/quick.toml");
  app.add_option("--cells", c.cells,
                 "run only these cells of the matrix: comma list of FLAVOUR/TRANSPORT/MODEL/LOOP, parts may be * "
                 "or globs (e.g. 'rust-pure/*/mono/closed,cpp/kernel/*/*')");
  app.add_flag("--one-sitting-per-cell", c.per_cell,
               "each cell in a sitting of its own, <sitting>-<flavour>_<transport>_<model>_<loop> (paired matrices: "
               "one per group of cells that differ only in flavour)");
  app.add_option("--sitting", c.sitting,
                 "sitting name (default: UTC time); an existing sitting of that name is resumed");
  app.add_option("--resume", c.resume, "resume an interrupted sitting folder, keeping the cells already done");
  app.add_option("--build-dir", c.build_dir,
                 "where bench_roundtrip and flavour binaries are (default: bench-run's folder)");
  app.add_option("--source-dir", c.source_dir, "repository root (default: found from the working directory)");
  app.add_option("--results", c.results, "results folder (default: <source-dir>/results)");
  app.add_option("--client", c.client, "the load generator (default: <build-dir>/bench_roundtrip)");
  app.add_option("--busy-poll-usecs", c.busy_poll, "override transports.kernel.busy_poll_usecs of the machine file");
  app.add_option("--idle", c.idle, "override the matrix's idle strategy (spin|block)");
  app.add_option("--network", c.network, "override the machine's network path (loopback|netns|nic)");
  app.add_flag("--installed", c.installed,
               "measure each flavour's newest install (bench-run install NAME) instead of the build tree; the client "
               "comes from cpp's install when there is one");
  app.add_flag("--no-audit", c.no_audit, "do not audit (recorded in every result; for debugging the lab only)");
  app.add_flag("--no-check", c.no_check,
               "do not check-flavour each flavour before its cells (recorded in every result and sitting.json)");
  app.add_flag("--no-site", c.no_site, "do not rebuild the results page (results/site/)");
  app.add_flag("--no-progress", c.no_progress, "no progress lines");
  app.add_flag("--version", c.version, "print the lab's build and exit");
}

CLI::App* add_compare(CLI::App& app, Cli& c) {
  auto* cmp = app.add_subcommand("compare",
                                 "Markdown tables of sitting A (before) against sitting B (now); refuses two "
                                 "hardware epochs or method versions, names every setting that differs");
  cmp->add_option("A", c.cmp_a, "earlier sitting folder")->required();
  cmp->add_option("B", c.cmp_b,
                  "later sitting folder(s): the Now column takes each row from the newest of them that measured it")
      ->required();
  cmp->add_option("--peer", c.peer, "flavour of the peer column (default quickfix)");
  cmp->add_option("--peer-from", c.peer_from,
                  "comma list of sitting folders the peer column comes from (default: the later sittings)");
  cmp->add_option("--flavour", c.flavour, "flavour of the Before/Now columns (default cpp)");
  cmp->add_option("--format", c.cmp_format, "md (Markdown, as the seeds print; default) or text (aligned)");
  return cmp;
}

CLI::App* add_sweep(CLI::App& app, Cli& c) {
  SweepOptions& sw = c.sw;
  auto* sweep = app.add_subcommand(
      "sweep",
      "load sweeps: open-loop steps at rising rates and session counts, the knee of each flavour (docs/lab.md)");
  sweep->add_option("--flavours", c.sw_flavours, "comma list of flavours")->capture_default_str();
  sweep->add_option("--transport", sw.transport, "the transport")->capture_default_str();
  sweep->add_option("--model", sw.model, "the acceptor model")->capture_default_str();
  sweep->add_option("--series", c.sw_series, "rate, sessions or both")->capture_default_str();
  sweep->add_flag("--quick", sw.quick, "shorter steps (2 runs of 0.3 s after 0.2 s) and 2 bisections");
  sweep->add_option("--start-rate", sw.start_rate, "the rate series' first step, orders/s (default 5000)");
  sweep->add_option("--max-rate", sw.max_rate, "no rate step above this (default 1000000)");
  sweep->add_option("--bisections", sw.bisections,
                    "steps between the last unsaturated and first saturated rate (default 3)");
  sweep->add_option("--rate-sessions", sw.rate_sessions,
                    "sessions of the rate series (default: the matrix's for the model)");
  sweep->add_option("--sessions", c.sw_counts, "the sessions series' counts (default 1,8,32,128,512,1000)");
  sweep->add_option("--sessions-rate", sw.sessions_rate,
                    "rate of the sessions series (default: the matrix's open rate, at most half the lowest knee)");
  sweep->add_option("--client-threads", sw.client_threads, "client threads (default: the machine's client cores)");
  sweep->add_option("--warmup", sw.warmup_s, "warm-up seconds per step (default 0.3)");
  sweep->add_option("--duration", sw.duration_s, "seconds per run (default 0.4)");
  sweep->add_option("--runs", sw.runs, "runs per step (default 3)");
  sweep->fallthrough();  // --machine, --results, --no-audit... after the subcommand
  return sweep;
}

Commands add_commands(CLI::App& app, Cli& c) {
  Commands k{};
  k.compare = add_compare(app, c);
  k.cleanup = app.add_subcommand("cleanup",
                                 "put back the NIC interfaces a crashed sitting moved (results/wire-state.json), then "
                                 "remove network namespaces and links named kite-* left by it");
  k.machine = app.add_subcommand("machine", "print the machine file derived for this host (or check a given one)");
  k.machine->add_option("FILE", c.check_file, "a machine file to check instead");
  k.site = app.add_subcommand("site", "rebuild the results page, results/site/, from every sitting under results/");
  k.site->fallthrough();  // --results after the subcommand
  k.serve = app.add_subcommand("serve", "serve results/ on http://127.0.0.1:PORT/site/index.html until Ctrl-C");
  k.serve->add_option("--port", c.serve_port, "port on 127.0.0.1 (default 8080; 0 picks a free one)");
  k.serve->fallthrough();
  k.check = app.add_subcommand(
      "check-flavour",
      "play the flavour contract (docs/flavours.md) against a flavour's server; exit 0 when no check fails");
  k.check->add_option("NAME", c.chk_flavour, "flavour: lab/flavours/<NAME>.toml")->required();
  k.check->add_option("--flavours-dir", c.chk_flavours_dir,
                      "folder of flavour files (default: <source-dir>/lab/flavours)");
  k.install = app.add_subcommand(
      "install",
      "copy a flavour's built files (binary and artifacts) into results/<host>/installs/<NAME>-<hash12>/, "
      "read-only, with install.json; --list lists the installs");
  k.install->add_option("NAME", c.inst_flavour, "flavour: lab/flavours/<NAME>.toml (with --list: only its installs)");
  k.install->add_flag("--list", c.inst_list, "list the installs: name, hash, date, git, host-tuned or portable");
  k.install->fallthrough();  // --results, --machine, --build-dir after the subcommand
  k.sweep = add_sweep(app, c);
  return k;
}

Machine machine_of(const Cli& c) {
  return c.machine == "local" ? derive_local_machine()
                              : load_machine(resolve_file(c.machine, c.source_dir + "/lab/machines"));
}

int run_compare(const Cli& c) {
  CompareOptions co{c.flavour, c.peer, split_cell_selection(c.peer_from), c.cmp_format};
  if (c.cmp_format != "md" && c.cmp_format != "text")
    throw ConfigError("compare --format: must be md or text, not '" + c.cmp_format + "'");
  CompareResult r = compare_sittings(c.cmp_a, c.cmp_b, co);
  if (!r.ok) {
    std::fprintf(stderr, "%s\n", r.text.c_str());
    return 2;
  }
  std::printf("%s", r.text.c_str());
  return 0;
}

int run_cleanup(const Cli& c) {
  // The wire's interfaces first: removing a namespace with a veth inside destroys it,
  // and a NIC comes back without its addresses.
  WireRestore w = restore_wire(wire_state_path(c.results));
  for (const auto& d : w.done) std::printf("put back %s\n", d.c_str());
  for (const auto& f : w.failed) std::printf("NOT put back: %s\n", f.c_str());
  if (w.held) std::printf("the wire is held by a running sitting (%s): its namespaces are kept\n", w.owner.c_str());
  if (!w.failed.empty()) return 2;
  auto removed = w.held ? remove_orphaned_namespaces() : remove_stale_namespaces();
  if (removed.empty()) std::printf("nothing to clean up\n");
  for (const auto& n : removed) std::printf("removed %s\n", n.c_str());
  return 0;
}

int run_machine(const Cli& c) {
  Machine m = c.check_file.empty() ? derive_local_machine() : load_machine(c.check_file);
  std::printf("%s", m.source_text.c_str());
  std::printf("# epoch %s (%s; %s); measured cores %s\n", m.epoch.c_str(), m.cpu_model.c_str(), m.cpu.text().c_str(),
              format_core_list(m.measured_cores()).c_str());
  for (const auto& n : m.notes) std::printf("# note: %s\n", n.c_str());
  return 0;
}

int run_install(const Cli& c) {
  const std::string host = c.machine == "local" ? host_name() : machine_of(c).name;
  if (c.inst_list) {
    std::printf("%s", install_listing(list_installs(c.results, host, c.inst_flavour)).c_str());
    return 0;
  }
  if (c.inst_flavour.empty()) throw ConfigError("install: name the flavour to install, or give --list");
  InstallOutcome r = install_flavour({c.inst_flavour, "", c.build_dir, c.source_dir, c.results, host});
  std::printf("%s %s: %s\n", r.reused ? "already installed, reused" : "installed", r.install.id.c_str(),
              r.install.dir.c_str());
  std::printf("%s", install_listing({r.install}).c_str());
  std::vector<Install> all = list_installs(c.results, host, c.inst_flavour);
  if (!all.empty() && all.back().id != r.install.id)
    std::printf("note: %s is newer, and a sitting with --installed measures the newest install\n",
                all.back().id.c_str());
  return 0;
}

int run_check(const Cli& c) {
  CheckOptions co;
  co.flavour = c.chk_flavour;
  co.flavours_dir = c.chk_flavours_dir;
  co.build_dir = c.build_dir;
  co.source_dir = c.source_dir;
  co.machine = machine_of(c);
  if (c.busy_poll >= 0) co.busy_poll_usecs = c.busy_poll;
  co.on_line = [](const CheckLine& l) {
    std::printf("%s\n", l.text().c_str());
    std::fflush(stdout);
  };
  CheckReport r = check_flavour(co);
  std::printf("%s\n", r.summary().c_str());
  return r.failed == 0 ? 0 : 1;
}

// "a, b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (text[i] != ' ') {
      item += text[i];
    }
  }
  return out;
}

// What a sitting and a sweep's sittings share: folders, machine, overrides, switches.
void fill_sitting(const Cli& c, SittingOptions& o) {
  o.source_dir = c.source_dir;
  o.build_dir = c.build_dir;
  o.results_dir = c.results;
  o.client_binary = c.client;
  o.sitting_name = c.sitting;
  o.installed = c.installed;
  if (c.busy_poll >= 0) o.busy_poll_usecs = c.busy_poll;
  if (!c.idle.empty()) o.idle = c.idle;
  if (!c.network.empty()) o.network = c.network;
  o.audit = !c.no_audit;
  o.check = !c.no_check;
  o.progress = !c.no_progress;
  o.command_line = c.command_line;
}

int run_sweep_command(Cli& c) {
  SweepOptions& sw = c.sw;
  if (!c.resume.empty()) throw ConfigError("--resume: a sweep cannot be resumed; run it again");
  sw.flavours = split_list(c.sw_flavours);
  sw.series = split_list(c.sw_series);
  for (const auto& n : split_list(c.sw_counts)) {
    try {
      std::size_t used = 0;
      sw.session_counts.push_back(std::stoi(n, &used));
      if (used != n.size()) throw std::invalid_argument(n);
    } catch (const std::exception&) {
      throw ConfigError("--sessions: '" + n + "' is not a number");
    }
  }
  SittingOptions& o = sw.sitting;
  fill_sitting(c, o);
  o.machine = machine_of(c);
  o.matrix = load_matrix(resolve_file(c.matrix.empty() ? "default" : c.matrix, c.source_dir + "/lab/matrices"));
  o.build_site = false;
  SweepResult r = run_sweep(sw);
  std::printf("\n");
  for (const auto& s : r.series) std::printf("%s\n", sweep_table(s).c_str());
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  if (!c.no_site) {
    try {
      std::printf("results page: %s\n", build_site(c.results).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench-run: results page not built: %s\n", e.what());
    }
  }
  std::printf("results: %s\n%s\n", r.sitting.dir.c_str(), r.sitting.message.c_str());
  return r.sitting.exit_code;
}

int run_sitting_command(const Cli& c) {
  SittingOptions o;
  fill_sitting(c, o);
  o.resume_dir = c.resume;
  if (c.resume.empty()) {
    o.machine = machine_of(c);
    const std::string matrix = c.matrix.empty() ? (c.quick ? "quick" : "default") : c.matrix;
    o.matrix = load_matrix(resolve_file(matrix, c.source_dir + "/lab/matrices"));
  }
  if (!c.cells.empty()) o.cells = split_cell_selection(c.cells);
  o.build_site = !c.no_site;
  if (c.per_cell) {
    std::vector<SittingResult> rs = run_sitting_per_cell(o);
    for (const auto& r : rs) {
      if (!r.cells.empty()) std::printf("\n%s\n", matrix_table(r.cells).c_str());
      std::printf("results: %s\n%s\n", r.dir.c_str(), r.message.c_str());
    }
    return series_exit_code(rs);
  }
  SittingResult r = run_sitting(o);
  if (!r.cells.empty()) std::printf("\n%s\n", matrix_table(r.cells).c_str());
  std::printf("results: %s\n%s\n", r.dir.c_str(), r.message.c_str());
  return r.exit_code;
}

int run(Cli& c, const Commands& k) {
  if (c.version) {
    std::printf("bench-run git=%s compiler=\"%s\" build_flags=\"%s\"\n", *KITE_LAB_GIT ? KITE_LAB_GIT : "unknown",
                lab_compiler().c_str(), lab_build_flags().c_str());
    return 0;
  }
  if (c.source_dir.empty()) c.source_dir = find_source_dir();
  if (c.build_dir.empty()) c.build_dir = self_dir().string();
  if (c.results.empty()) c.results = c.source_dir + "/results";
  if (*k.compare) return run_compare(c);
  if (*k.cleanup) return run_cleanup(c);
  if (*k.machine) return run_machine(c);
  if (*k.site) {
    std::printf("%s\n", build_site(c.results).c_str());
    return 0;
  }
  if (*k.serve) return serve_results(c.results, c.serve_port);
  if (*k.install) return run_install(c);
  if (*k.check) return run_check(c);
  if (*k.sweep) return run_sweep_command(c);
  return run_sitting_command(c);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench-run: the Kite latency lab. Without a subcommand it runs a sitting: every cell of a matrix on a\n"
      "machine, audited and stamped, with results under results/<host>/<sitting>/. Exit codes: 0 every cell\n"
      "measured, marked, unbuilt or refused by the audit; 1 bad input; 2 a cell ended in error or its flavour\n"
      "failed check-flavour; 3 a binary or artifact changed; 130 interrupted (resume with --resume)."};
  Cli c;
  add_sitting_options(app, c);
  const Commands k = add_commands(app, c);
  app.require_subcommand(0, 1);
  CLI11_PARSE(app, argc, argv);
  for (int i = 0; i < argc; ++i) c.command_line += (i ? " " : "") + std::string(argv[i]);
  try {
    return run(c, k);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "bench-run: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-run: %s\n", e.what());
    return 2;
  }
}
