// kite-acceptor: runs a FIX acceptor with the order-entry application from a
// TOML file (docs/acceptor.md). Stops cleanly on SIGTERM/SIGINT: every
// logged-on session is logged out and the answers awaited briefly.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "kite/app/acceptor.hpp"

#include <CLI/CLI.hpp>

namespace {
// --test-hooks, SIGUSR1: every logged-on session skips 5 outbound numbers, so
// that the peer sees a gap and asks for it (answered with a GapFill).
void skip_outbound(kite::app::Acceptor& acceptor, kite::session::Logger& log) {
  kite::app::SessionCommand skip;
  skip.kind = kite::app::SessionCommand::Kind::skip_out;
  skip.next_out = 5;
  for (std::size_t i = 0; i < acceptor.registry().size(); ++i)
    if (acceptor.post(i, skip) != kite::link::PortStatus::ok)
      log.logf(kite::session::LogLevel::error, acceptor.registry().at(i).id(), "skip not asked: its port is full");
}
}  // namespace

int main(int argc, char** argv) {
  // Before anything starts OpenSSL: its per-record allocations recycled (transport tls).
  kite::transport::use_recycling_tls_allocator();
  CLI::App cli{
      "kite-acceptor: a FIX acceptor (FIX.4.0 to FIX.4.4, FIXT.1.1) answering orders in ack, match or echo "
      "mode; the configuration file is described in docs/acceptor.md"};
  std::string config_path;
  bool check = false;
  std::string ready_file;
  bool test_hooks = false;
  cli.add_option("--config,-c", config_path, "TOML configuration file")->required();
  cli.add_flag("--check", check, "validate the configuration (sessions, stores, dictionaries) and exit");
  cli.add_option("--ready-file", ready_file, "write the listening port to this file once accepting");
  cli.add_flag("--test-hooks", test_hooks,
               "SIGUSR1 makes every logged-on session skip 5 outbound sequence numbers (interop tests)");
  CLI11_PARSE(cli, argc, argv);

  kite::session::StderrLogger text_log;
  kite::session::JsonLinesLogger json_log;
  kite::session::Logger* chosen = &text_log;
  kite::app::AcceptorConfig config;
  std::unique_ptr<kite::app::Acceptor> acceptor;
  try {
    config = kite::app::load_acceptor_config(config_path);
    if (config.log_format == kite::app::LogFormat::json) chosen = &json_log;
    acceptor = std::make_unique<kite::app::Acceptor>(std::move(config), *chosen);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kite-acceptor: %s\n", e.what());
    return 2;
  }
  kite::session::Logger& log = *chosen;
  const auto& c = acceptor->config();
  if (check) {
    std::printf("%s: ok: %zu session(s), mode %s, %s/%s on %s:%u\n", config_path.c_str(), c.sessions.sessions.size(),
                kite::app::to_string(c.mode), kite::transport::to_string(c.engine.transport),
                kite::engine::to_string(c.engine.model), c.engine.bind_address.c_str(), c.engine.port);
    return 0;
  }

  // The engine's threads inherit this mask: the signals are taken here only.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::string error;
  if (!acceptor->start(error)) {
    std::fprintf(stderr, "kite-acceptor: %s: %s\n", config_path.c_str(), error.c_str());
    return 1;
  }
  if (!c.admin.socket.empty())
    log.logf(kite::session::LogLevel::info, "kite-acceptor", "admin socket %s (mode %04o)", c.admin.socket.c_str(),
             c.admin.socket_mode);
  log.logf(kite::session::LogLevel::info, "kite-acceptor", "listening on %s:%u: %zu session(s), mode %s, %s/%s",
           c.engine.bind_address.c_str(), acceptor->port(), c.sessions.sessions.size(), kite::app::to_string(c.mode),
           kite::transport::to_string(c.engine.transport), kite::engine::to_string(c.engine.model));
  if (!ready_file.empty()) {
    const std::string tmp = ready_file + ".tmp";
    std::ofstream(tmp) << acceptor->port() << "\n";
    std::rename(tmp.c_str(), ready_file.c_str());
  }

  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGUSR1) {
      if (test_hooks) skip_outbound(*acceptor, log);
      continue;
    }
    log.logf(kite::session::LogLevel::info, "kite-acceptor", "signal %d: logging out %d connection(s)", sig,
             acceptor->open_connections());
    break;
  }
  acceptor->shutdown();
  log.logf(kite::session::LogLevel::info, "kite-acceptor", "stopped (%d connection(s) were still open)",
           acceptor->open_connections());
  return 0;
}
