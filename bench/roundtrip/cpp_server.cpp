#include "cpp_server.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "kite/app/acceptor.hpp"
#include "kite/engine/engine.hpp"
#include "kite/session/log.hpp"
#include "kite/util/toml.hpp"
#include "messages.hpp"

namespace kite::bench {

AcceptorFile acceptor_file_of(const ServerOptions& o) {
  AcceptorFile f;
  f.model = o.model;
  f.transport = o.transport;
  f.bind = o.bind;
  f.port = o.port;
  f.sessions = o.sessions;
  f.workers = o.workers;
  f.cores = o.cores;
  f.coordinator_core = o.coordinator_core;
  f.spin = o.spin;
  f.busy_poll_usecs = o.busy_poll_usecs;
  f.quickack = o.quickack;
  f.uring_sqpoll = o.uring_sqpoll;
  f.store = o.store;
  f.store_dir = o.store_dir;
  f.store_commit = o.store_commit;
  f.store_conninfo = o.store_conninfo;
  f.tls_cert = o.tls_cert;
  f.tls_key = o.tls_key;
  return f;
}

std::string cpp_server_config(const ServerOptions& o) { return render_acceptor_file(acceptor_file_of(o)); }

namespace {

// The file the server runs: --acceptor-config's, else one rendered from the flags.
bool acceptor_text(const ServerOptions& o, std::string& text, std::string& error) {
  if (o.acceptor_config.empty()) {
    if (o.transport == "tls" && (o.tls_cert.empty() || o.tls_key.empty())) {
      error = "transport tls needs --tls-cert and --tls-key (the server's PEM certificate and private key)";
      return false;
    }
    text = cpp_server_config(o);
    return true;
  }
  std::ifstream in(o.acceptor_config);
  if (!in) {
    error = "cannot read the acceptor file " + o.acceptor_config;
    return false;
  }
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

// A cell the engine cannot run is "unsupported" (exit 3), not a bad
// configuration: judged on the file's [engine] before its parse refuses it.
bool unsupported(const std::string& text, std::string& error) {
  toml::table t;
  try {
    t = toml::parse(text);
  } catch (const toml::parse_error&) {
    return false;  // the acceptor's parse says what is wrong
  }
  const std::string name = t["engine"]["transport"].value_or(std::string("kernel"));
  const std::string model_name = t["engine"]["model"].value_or(std::string("single"));
  engine::Model model{};
  transport::Kind kind{};
  if (!engine::parse_model(model_name, model) || !transport::parse_kind(name, kind)) return false;
  if (!transport::compiled_in(kind)) {
    error = "unsupported: cpp server has no " + name + " transport in this build";
    return true;
  }
  if (!engine::supports(kind, model)) {
    error = "unsupported: cpp server cannot run " + model_name + " on " + name;
    return true;
  }
  return false;
}

}  // namespace

int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error) {
  std::string text;
  if (!acceptor_text(o, text, error)) return 1;
  if (unsupported(text, error)) return 3;
  app::AcceptorConfig config;
  try {
    config = app::parse_acceptor_config(
        text, o.acceptor_config.empty() ? "bench_roundtrip --flavour cpp" : o.acceptor_config);
  } catch (const std::exception& e) {
    error = e.what();
    return 1;
  }
  session::StderrLogger log;
  std::unique_ptr<app::Acceptor> acceptor;
  try {
    acceptor = std::make_unique<app::Acceptor>(std::move(config), log);
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
