#include "cpp_server.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "kite/app/acceptor.hpp"
#include "kite/engine/engine.hpp"
#include "kite/session/log.hpp"
#include "kite/util/toml.hpp"
#include "messages.hpp"

namespace kite::bench {
namespace {

// A TOML basic string ("..."), escaped by toml++.
std::string quoted(const std::string& s) {
  std::ostringstream out;
  out << toml::toml_formatter(toml::value<std::string>(s), toml::format_flags::none);
  return out.str();
}

}  // namespace

std::string cpp_server_config(const ServerOptions& o) {
  const unsigned sessions = std::max(1u, o.sessions);
  std::string cores;
  for (const int c : o.cores) cores += (cores.empty() ? "" : ", ") + std::to_string(c);
  std::string t;
  t += "# bench_roundtrip server --flavour cpp: the kite-acceptor file of this cell.\n";
  t += "[engine]\n";
  t += "model = " + quoted(o.model) + "\n";
  t += "transport = " + quoted(o.transport) + "\n";
  t += "bind = " + quoted(o.bind) + "\n";
  t += "port = " + std::to_string(o.port) + "\n";
  t += "workers = " + std::to_string(std::max(1u, o.workers)) + "\n";
  t += "cores = [" + cores + "]\n";
  t += "coordinator_core = " + std::to_string(o.coordinator_core) + "\n";
  t += std::string("idle = ") + (o.spin ? "\"busy_spin\"" : "\"block\"") + "\n";
  t += "busy_poll_usecs = " + std::to_string(o.busy_poll_usecs) + "\n";
  t += std::string("quickack = ") + (o.quickack ? "true" : "false") + "\n";
  if (o.uring_sqpoll) t += "uring_sqpoll = true\n";
  // Room for a client's reconnect while its old connection is being closed.
  t += "max_connections = " + std::to_string(sessions + 4) + "\n";
  if (o.transport == "tls") {
    // The certificate and key the lab made for this sitting; no client certificate asked for.
    t += "\n[tls]\n";
    t += "certificate = " + quoted(o.tls_cert) + "\n";
    t += "private_key = " + quoted(o.tls_key) + "\n";
  }
  t += "\n[app]\nmode = \"ack\"\n";
  // A venue's settings as kite-acceptor ships them, except where every
  // flavour must do the same work: the client resets its numbers at each
  // Logon, and no flavour validates against a dictionary or checks
  // SendingTime (the quickfix flavour runs UseDataDictionary=N, CheckLatency=N).
  t += "\n[defaults]\n";
  t += "BeginString = \"FIX.4.4\"\n";
  t += "SenderCompID = " + quoted(std::string(kServerCompID)) + "\n";
  t += "ResetOnLogon = true\n";
  t += "ResetOnDisconnect = true\n";
  t += "UseDataDictionary = false\n";
  t += "CheckLatency = false\n";
  t += "StoreKind = " + quoted(o.store) + "\n";
  t += "FileStorePath = " + quoted(o.store_dir.empty() ? "." : o.store_dir) + "\n";
  if (o.store == "postgresql") {
    if (!o.store_conninfo.empty()) t += "PostgreSQLStoreConnectionString = " + quoted(o.store_conninfo) + "\n";
    if (!o.store_commit.empty()) t += "PostgreSQLStoreCommit = " + quoted(o.store_commit) + "\n";
  }
  for (unsigned k = 0; k < sessions; ++k) t += "\n[[session]]\nTargetCompID = " + quoted(client_comp_id(k)) + "\n";
  return t;
}

int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error) {
  // A cell the engine cannot run is "unsupported" (exit 3), not a bad configuration.
  engine::Model model{};
  transport::Kind kind{};
  if (!engine::parse_model(o.model, model)) {
    error = "bad model " + o.model;
    return 1;
  }
  if (!transport::parse_kind(o.transport, kind) || !transport::compiled_in(kind)) {
    error = "unsupported: cpp server has no " + o.transport + " transport in this build";
    return 3;
  }
  if (!engine::supports(kind, model)) {
    error = "unsupported: cpp server cannot run " + o.model + " on " + o.transport;
    return 3;
  }

  if (o.transport == "tls" && (o.tls_cert.empty() || o.tls_key.empty())) {
    error = "transport tls needs --tls-cert and --tls-key (the server's PEM certificate and private key)";
    return 1;
  }
  session::StderrLogger log;
  std::unique_ptr<app::Acceptor> acceptor;
  try {
    acceptor = std::make_unique<app::Acceptor>(
        app::parse_acceptor_config(cpp_server_config(o), "bench_roundtrip --flavour cpp"), log);
  } catch (const std::exception& e) {
    error = e.what();
    return 1;
  }
  if (!acceptor->start(error)) return 1;
  if (!write_ready_file(o.ready_file, acceptor->port())) {
    error = "cannot write the ready file " + o.ready_file;
    acceptor->stop();
    return 1;
  }
  while (!stop.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  acceptor->shutdown();  // every logged-on session sends its Logout, as kite-acceptor does on SIGTERM

  std::uint64_t orders = 0;
  for (std::size_t i = 0; i < acceptor->config().sessions.sessions.size(); ++i)
    orders += acceptor->app(i).stats().orders;
  const engine::EngineStats st = acceptor->engine_stats();
  const std::vector<engine::ThreadInfo> threads = acceptor->engine_threads();
  const std::size_t first = threads.size() - st.per_thread_load.size();  // pool: the front door comes first
  for (std::size_t i = 0; i < st.per_thread_load.size(); ++i) {
    const engine::AgentLoad& l = st.per_thread_load[i];
    // Orders are counted for the whole server: exact for single and mono, one thread.
    print_server_load(threads[first + i].name.c_str(), l.cycles, l.idle_cycles, static_cast<double>(l.busy_ns) * 1e-9,
                      static_cast<double>(l.total_ns) * 1e-9, st.per_thread_load.size() == 1 ? orders : 0);
  }
  return 0;
}

}  // namespace kite::bench
