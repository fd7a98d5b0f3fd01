// bench_roundtrip: the load generator (client) and the measured server of
// every cell. See docs/bench_roundtrip.md for the contract with bench-run.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>

#include "client.hpp"
#include "cpp_server.hpp"
#include "kite/bench/result.hpp"
#include "kite/bench/thread.hpp"
#include "kite/codec/level.hpp"
#include "kite/transport/tls.hpp"
#include "server.hpp"
#ifdef KITE_BENCH_QUICKFIX
#include "quickfix_server.hpp"
#endif

#ifndef KITE_BUILD_FLAGS_STR
#define KITE_BUILD_FLAGS_STR ""
#endif
#ifndef KITE_COMPILER_STR
#define KITE_COMPILER_STR ""
#endif
#ifndef KITE_GIT_STR
#define KITE_GIT_STR ""
#endif

namespace kite::bench {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_signal(int) { g_stop.store(true); }

int unsupported(const std::string& what) {
  std::fprintf(stderr, "unsupported: %s\n", what.c_str());
  return 3;
}

int run_server(ServerOptions& o) {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  if (o.flavour != "cpp" && !o.acceptor_config.empty()) {
    std::fprintf(stderr, "bench_roundtrip server: --acceptor-config is for --flavour cpp (Kite's engine), not %s\n",
                 o.flavour.c_str());
    return 2;
  }
  if (o.flavour != "cpp" && o.transport != "kernel")
    return unsupported(o.flavour + " server has no " + o.transport + " transport (only kernel)");
  std::string error;
  int rc = 0;
  if (o.flavour == "cpp") {
    rc = run_cpp_server(o, g_stop, error);
    if (rc == 3) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 3;
    }
  } else if (o.flavour == "raw") {
    rc = run_raw_server(o, g_stop, error);
  } else if (o.flavour == "quickfix") {
#ifdef KITE_BENCH_QUICKFIX
    if (o.model != "single" && o.model != "mono")
      return unsupported("quickfix server serves the single and mono models only");
    rc = run_quickfix_server(o, g_stop, error);
#else
    return unsupported("quickfix server not built (KITE_QUICKFIX=OFF)");
#endif
  }
  if (rc != 0) std::fprintf(stderr, "bench_roundtrip server: %s\n", error.c_str());
  return rc;
}

struct ClientCli {
  ClientOptions o;
  std::string loop = "closed", cores, idle = "spin", json, cell;
  unsigned threads = 1;
  Thresholds t;
};

int run_client(ClientCli& cli) {
  std::signal(SIGPIPE, SIG_IGN);
  ClientOptions& o = cli.o;
  o.open_loop = cli.loop == "open";
  o.spin = cli.idle == "spin";
  std::vector<int> cores;
  try {
    cores = parse_core_list(cli.cores);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_roundtrip client: %s\n", e.what());
    return 2;
  }
  name_this_thread("kite-client");
  if (!cores.empty() && !pin_this_thread(cores[0])) {
    std::fprintf(stderr, "bench_roundtrip client: cannot pin to core %d\n", cores[0]);
    return 2;
  }
  if (cli.threads == 0) {
    std::fprintf(stderr, "bench_roundtrip client: --threads must be at least 1\n");
    return 2;
  }
  const Clock clock;
  std::string error;
  std::vector<Phase> phases;
  // Progress for bench-run, printed as each run completes (during the next one).
  const bool measured = measure_with_threads(
      o, cli.threads, cores, clock,
      [](void* open_loop, std::size_t run, std::size_t runs, const Phase& p) {
        const Latency view = latency_of(*static_cast<const bool*>(open_loop) ? p.response : p.service);
        std::fprintf(stderr, "run %zu/%zu done: p50=%.2f us p99=%.2f us\n", run, runs, view.p50, view.p99);
      },
      &o.open_loop, phases, error);
  if (!measured) {
    std::fprintf(stderr, "bench_roundtrip client: %s\n", error.c_str());
    return 1;
  }

  CellResult r;
  r.flavour = r.transport = r.model = "unknown";
  if (!cli.cell.empty()) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos <= cli.cell.size()) {
      const std::size_t slash = std::min(cli.cell.find('/', pos), cli.cell.size());
      parts.push_back(cli.cell.substr(pos, slash - pos));
      pos = slash + 1;
    }
    if (parts.size() > 0) r.flavour = parts[0];
    if (parts.size() > 1) r.transport = parts[1];
    if (parts.size() > 2) r.model = parts[2];
  }
  r.loop = o.open_loop ? "open" : "closed";
  r.sessions = o.sessions;
  r.rate = o.open_loop ? o.rate : 0;
  r.think_us = o.open_loop ? 0 : o.think_us;
  r.warmup_s = o.warmup_s;
  r.duration_s = o.duration_s;
  r.clock_method = clock.method_name();
  r.tsc_ghz = clock.tsc_ghz();
  r.idle = cli.idle;
  r.thresholds = cli.t;
  r.client_threads = std::max(1u, std::min(cli.threads, o.sessions));
  for (const Phase& p : phases) r.orders_total += p.service.count();
  Histogram merged;
  for (std::size_t i = 1; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    RunFigures f;
    f.count = p.service.count();
    f.errors = p.errors;
    f.achieved_rate = static_cast<double>(p.answered) / o.duration_s;
    f.max_in_flight = p.max_in_flight;
    f.cap_hits = p.cap_hits;
    f.complete = f.count > 0;
    f.service = latency_of(p.service);
    f.client = p.load;
    if (o.open_loop) f.response = latency_of(p.response);
    if (o.open_loop) f.lateness = latency_of(p.lateness);
    merged.merge(o.open_loop ? p.response : p.service);
    r.runs.push_back(f);
  }
  r.summary = summarize(r.runs);
  r.verdict = judge(r.runs, r.summary, r.rate, r.thresholds);
  for (const auto& [ns, fraction] : merged.cdf(200)) r.cdf.emplace_back(ns / 1000.0, fraction);
  r.stamp.build_flags = KITE_BUILD_FLAGS_STR;
  r.stamp.compiler = KITE_COMPILER_STR;
  r.stamp.git = KITE_GIT_STR;
  r.stamp.codec_level = kite::codec::to_string(kite::codec::active_level());
  print_summary(stdout, r);
  if (!cli.json.empty()) {
    std::ofstream out(cli.json);
    out << to_json(r) << '\n';
    if (!out) {
      std::fprintf(stderr, "bench_roundtrip client: cannot write %s\n", cli.json.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace kite::bench

int main(int argc, char** argv) {
  using namespace kite::bench;
  // Before anything starts OpenSSL: its per-record allocations come from free
  // lists, so the tls transport allocates nothing per order on either side.
  kite::transport::use_recycling_tls_allocator();
  CLI::App app{"bench_roundtrip: Kite's FIX round-trip load generator and measured server"};
  app.require_subcommand(1);
  // The same build stamp as the result JSON's "stamp"; bench-run records it in sitting.json.
  app.set_version_flag("--version",
                       std::string("bench_roundtrip git=") + (*KITE_GIT_STR ? KITE_GIT_STR : "unknown") +
                           " compiler=\"" KITE_COMPILER_STR "\" build_flags=\"" KITE_BUILD_FLAGS_STR "\" codec_level=" +
                           kite::codec::to_string(kite::codec::active_level()),
                       "print the build stamp (git revision, compiler, build flags, codec level) and exit");

  ServerOptions so;
  std::string cores, idle = "spin";
  auto* server = app.add_subcommand("server", "run a measured server until SIGTERM/SIGINT");
  server->add_option("--flavour", so.flavour, "cpp | raw | quickfix")->check(CLI::IsMember({"cpp", "raw", "quickfix"}));
  server->add_option("--transport", so.transport, "kernel | uring | tls | ...")->capture_default_str();
  server->add_option("--model", so.model, "single | mono | pool | shard")
      ->check(CLI::IsMember({"single", "mono", "pool", "shard"}))
      ->capture_default_str();
  server->add_option("--bind", so.bind, "address to listen on")->capture_default_str();
  server->add_option("--port", so.port, "port (0: ephemeral, see --ready-file)")->capture_default_str();
  server->add_option("--sessions", so.sessions, "number of client sessions (BENCH0..)")->capture_default_str();
  server->add_option("--workers", so.workers, "pool/shard threads")->capture_default_str();
  server->add_option("--cores", cores, "comma list of cores; server threads are pinned in order");
  server->add_option("--coordinator-core", so.coordinator_core, "core of the pool's front door");
  server->add_option("--busy-poll-usecs", so.busy_poll_usecs, "SO_BUSY_POLL (0 = off)")->capture_default_str();
  server->add_option("--idle", idle, "spin | block")->check(CLI::IsMember({"spin", "block"}))->capture_default_str();
  server->add_option("--store", so.store, "null | memory | file | postgresql (cpp only)")
      ->check(CLI::IsMember({"null", "memory", "file", "postgresql"}))
      ->capture_default_str();
  server->add_option("--store-dir", so.store_dir, "folder of the file store");
  server->add_option("--store-commit", so.store_commit, "postgresql: sync | async (\"\": the store's default)")
      ->check(CLI::IsMember({"", "sync", "async"}));
  server->add_option("--store-conninfo", so.store_conninfo, "postgresql: the libpq connection string");
  bool no_quickack = false, quickack = false;
  server->add_flag("--quickack", quickack,
                   "cpp: re-arm TCP_QUICKACK after each read (a syscall and a pure ACK per message)");
  server->add_flag("--no-quickack", no_quickack, "cpp: no TCP_QUICKACK re-arm (the default)");
  server->add_flag("--uring-sqpoll", so.uring_sqpoll,
                   "cpp, transport uring: a kernel thread polls the submission queue");
  server->add_option("--tls-cert", so.tls_cert, "cpp, transport tls: the server's PEM certificate chain");
  server->add_option("--tls-key", so.tls_key, "cpp, transport tls: its PEM private key");
  server->add_option("--ready-file", so.ready_file, "written with the port and a newline once listening");
  // The lab's way: one file states the engine, store and sessions, for every flavour on Kite's engine.
  CLI::Option* file = server->add_option("--acceptor-config", so.acceptor_config,
                                         "cpp: the kite-acceptor file to run (the lab's {acceptor_config}), in place "
                                         "of the engine and store options");
  for (const char* name :
       {"--transport", "--model", "--bind", "--port", "--sessions", "--workers", "--cores", "--coordinator-core",
        "--busy-poll-usecs", "--idle", "--store", "--store-dir", "--store-commit", "--store-conninfo", "--quickack",
        "--no-quickack", "--uring-sqpoll", "--tls-cert", "--tls-key"})
    file->excludes(server->get_option(name));

  ClientCli cc;
  auto* client = app.add_subcommand("client", "measure a server; JSON result with --json");
  client->add_option("--host", cc.o.host, "server address")->capture_default_str();
  client->add_option("--port", cc.o.port, "server port")->required();
  client->add_option("--loop", cc.loop, "closed | open")
      ->check(CLI::IsMember({"closed", "open"}))
      ->capture_default_str();
  client->add_option("--sessions", cc.o.sessions, "FIX sessions on the client thread")->capture_default_str();
  client->add_option("--rate", cc.o.rate, "aggregate orders/s (open loop)")->capture_default_str();
  client->add_option("--think-us", cc.o.think_us, "pause between a reply and the next order (closed loop)")
      ->capture_default_str();
  client->add_option("--warmup", cc.o.warmup_s, "warm-up seconds (measured, thrown away)")->capture_default_str();
  client->add_option("--duration", cc.o.duration_s, "seconds per run")->capture_default_str();
  client->add_option("--runs", cc.o.runs, "number of runs")->capture_default_str();
  client->add_option("--max-in-flight", cc.o.max_in_flight, "open loop cap of orders in flight per session")
      ->capture_default_str();
  client->add_option("--cores", cc.cores, "comma list; client thread k is pinned to the k-th (modulo their number)");
  client
      ->add_option("--threads", cc.threads,
                   "client threads, each with a share of the sessions and the rate, histograms merged")
      ->capture_default_str();
  client->add_option("--idle", cc.idle, "spin | block")->check(CLI::IsMember({"spin", "block"}))->capture_default_str();
  client->add_option("--busy-poll-usecs", cc.o.busy_poll_usecs, "SO_BUSY_POLL (0 = off)")->capture_default_str();
  client->add_option("--connect-timeout", cc.o.connect_timeout_s, "seconds to keep retrying a refused connection")
      ->capture_default_str();
  client->add_flag("--tls", cc.o.tls, "connect over TLS (the lab's tls transport), handshakes before the measurement");
  client->add_option("--tls-ca", cc.o.tls_ca, "with --tls: PEM CA file that signed the server's certificate");
  client->add_option("--json", cc.json, "write the result JSON here");
  client->add_option("--cell", cc.cell, "FLAVOUR/TRANSPORT/MODEL/LOOP written into the result");
  client->add_option("--cv-p50-limit", cc.t.cv_p50, "verdict: CV limit of p50")->capture_default_str();
  client->add_option("--cv-p99-limit", cc.t.cv_p99, "verdict: CV limit of p99")->capture_default_str();
  client->add_option("--rate-fraction", cc.t.rate_fraction, "verdict: achieved/target rate below this saturates")
      ->capture_default_str();
  client
      ->add_option("--response-over-service", cc.t.response_over_service,
                   "verdict: response p50 over this times service p50 saturates")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  if (*server) {
    try {
      so.cores = parse_core_list(cores);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_roundtrip server: %s\n", e.what());
      return 2;
    }
    so.spin = idle == "spin";
    so.quickack = quickack && !no_quickack;
    return run_server(so);
  }
  return run_client(cc);
}
