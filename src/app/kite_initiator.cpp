// kite-initiator: runs FIX initiator sessions from a TOML file
// (docs/initiator.md), keeps each one connected (reconnect back-off,
// schedules) and sends orders from its order source. Stops cleanly on
// SIGTERM/SIGINT: every logged-on session is logged out and the answers
// awaited briefly.
#include <signal.h>

#include <cerrno>

#include <cstdio>
#include <fstream>
#include <string>

#include "kite/app/initiator_daemon.hpp"
#include "kite/app/tls_config.hpp"
#include "kite/transport/tls.hpp"

#include <CLI/CLI.hpp>

namespace {

// What main builds from the configuration file, in the order it needs them.
struct Daemon {
  kite::session::StderrLogger text_log;
  kite::session::JsonLinesLogger json_log;
  kite::session::Logger* log = &text_log;
  kite::app::InitiatorDaemonConfig config;
  std::unique_ptr<kite::app::LoggerEvents> events;
  std::unique_ptr<kite::app::OrderFlow> flow;
  std::unique_ptr<kite::app::InitiatorHost> host;

  void load(const std::string& path) {
    config = kite::app::load_initiator_config(path);
    if (config.log_format == kite::app::LogFormat::json) log = &json_log;
    events = std::make_unique<kite::app::LoggerEvents>(*log);  // TLS refusals, one line each
    config.engine.events = events.get();
    flow = std::make_unique<kite::app::OrderFlow>(config.orders, config.sessions.sessions.size());
    host = std::make_unique<kite::app::InitiatorHost>(config.sessions, config.engine, *log, *flow);
  }
  const char* source() const {
    switch (config.orders.kind) {
      case kite::app::OrderSourceConfig::Kind::rate: return "rate";
      case kite::app::OrderSourceConfig::Kind::file: return "file";
      default: return "none";
    }
  }
};

void write_ready_file(const std::string& path) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << "started\n";
  std::rename(tmp.c_str(), path.c_str());
}

// Waits for SIGTERM or SIGINT; every report_interval_s, a line of the interval's figures.
int wait_for_signal(const sigset_t& set, Daemon& d) {
  const int every = d.config.orders.report_interval_s;
  int sig = 0;
  for (;;) {
    if (every == 0) {
      if (sigwait(&set, &sig) == 0) return sig;
      continue;
    }
    const timespec t{every, 0};
    sig = sigtimedwait(&set, nullptr, &t);
    if (sig > 0) return sig;
    if (errno == EAGAIN)
      d.log->logf(kite::session::LogLevel::info, "kite-initiator", "%s", d.flow->interval_report().c_str());
  }
}

void shut_down(int sig, Daemon& d) {
  kite::session::Logger& log = *d.log;
  kite::app::InitiatorHost& host = *d.host;
  log.logf(kite::session::LogLevel::info, "kite-initiator", "signal %d: logging out %d connection(s)", sig,
           host.open_connections());
  host.request_logout();
  host.wait_disconnected(d.config.shutdown_wait_ms);
  host.stop();
  for (std::size_t i = 0; i < host.size(); ++i)
    log.logf(kite::session::LogLevel::info, host.session(i).id(),
             "orders sent %llu, execution reports %llu, rejects received %llu",
             static_cast<unsigned long long>(d.flow->sent(i)), static_cast<unsigned long long>(d.flow->reports(i)),
             static_cast<unsigned long long>(host.session(i).rejects_received_count()));
  log.logf(kite::session::LogLevel::info, "kite-initiator", "stopped (%d connection(s) were still open)",
           host.open_connections());
}

}  // namespace

int main(int argc, char** argv) {
  kite::transport::use_recycling_tls_allocator();  // before OpenSSL starts: no allocation per TLS record
  CLI::App cli{
      "kite-initiator: FIX initiator sessions (FIX.4.0 to FIX.4.4, FIXT.1.1) kept connected, sending orders "
      "from a file or at a rate; the configuration file is described in docs/initiator.md"};
  std::string config_path;
  bool check = false;
  std::string ready_file;
  cli.add_option("--config,-c", config_path, "TOML configuration file")->required();
  cli.add_flag("--check", check, "validate the configuration (sessions, stores, order file) and exit");
  cli.add_option("--ready-file", ready_file, "write \"started\" to this file once the sessions are running");
  CLI11_PARSE(cli, argc, argv);

  Daemon d;
  try {
    d.load(config_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kite-initiator: %s\n", e.what());
    return 2;
  }
  if (check) {
    std::printf("%s: ok: %zu session(s), orders %s, %s on %d thread(s)\n", config_path.c_str(),
                d.config.sessions.sessions.size(), d.source(), kite::transport::to_string(d.config.engine.transport),
                std::min<int>(d.config.engine.threads, static_cast<int>(d.config.sessions.sessions.size())));
    return 0;
  }
  // The engine's threads inherit this mask: the signals are taken here only.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::string error;
  if (!d.host->start(false, error)) {
    std::fprintf(stderr, "kite-initiator: %s: %s\n", config_path.c_str(), error.c_str());
    return 1;
  }
  d.log->logf(kite::session::LogLevel::info, "kite-initiator", "running %zu session(s), orders %s", d.host->size(),
              d.source());
  if (!ready_file.empty()) write_ready_file(ready_file);
  shut_down(wait_for_signal(set, d), d);
  return 0;
}
