// The kite-acceptor daemon as a library: its configuration file (the session
// loader's [defaults]/[[session]] plus [engine] and [app] tables, see
// docs/acceptor.md, and [tls] for transport tls) and an Acceptor that runs the engine with one
// OrderApplication per session.
//
// Errors: load_acceptor_config() and the Acceptor constructor throw
// session::ConfigError with one line naming the file, the table or session,
// and the setting ("kite.toml: [engine]: setting model: ...").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/app/order_app.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/command_port.hpp"
#include "kite/link/connection.hpp"
#include "kite/link/message_log.hpp"
#include "kite/link/metrics.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/config.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"

namespace kite::app {

// [admin]: the operators' channel (docs/operations.md). Off unless `socket`
// or `metrics_port` is set.
struct AdminConfig {
  std::string socket;              // Unix-domain socket for kite-admin; its file mode is the access control
  unsigned socket_mode = 0600;     // socket_mode, an octal string ("0660")
  std::uint16_t metrics_port = 0;  // Prometheus text over HTTP GET /metrics; 0: none
  std::string metrics_bind = "127.0.0.1";
  bool enabled() const noexcept { return !socket.empty() || metrics_port != 0; }
};

// [message_log]: FIX message logs (link::MessageLog), one file per session in
// `dir`, for the sessions named (or every one: "*"); kite-admin switches them
// on and off per session while running.
struct MessageLogConfig {
  std::string dir;
  std::uint64_t max_bytes = 64ull << 20;  // rotate at this size
  int keep = 5;                           // rotated files kept
  std::vector<std::string> sessions;      // on from the start
};

enum class LogFormat : std::uint8_t { text, json };

struct AcceptorConfig {
  session::Config sessions;                // path, sessions
  engine::EngineConfig engine;             // [engine]
  link::AcceptorLimits limits;             // [engine] max_connections, logon_timeout, max_message_size
  Mode mode = Mode::ack;                   // [app] mode
  int shutdown_wait_ms = 2000;             // [app] shutdown_wait_ms: how long SIGTERM waits for Logout answers
  AdminConfig admin;                       // [admin]
  MessageLogConfig message_log;            // [message_log]
  LogFormat log_format = LogFormat::text;  // [log] format: "text" or "json" (JSON lines)
  // Per session: room for application messages queued from other threads
  // (the C API's kite_session_send; not read from the file). 0: none.
  std::size_t queue_bytes = 0;
};

AcceptorConfig load_acceptor_config(const std::string& path);
AcceptorConfig parse_acceptor_config(std::string_view text, const std::string& name);

class AdminServer;
class LoggerEvents;

// What an operator asks of one session (kite-admin): link::Command. Run by
// the thread that owns the session's connection, or, when it has none, by
// the caller.
using SessionCommand = link::Command;
struct CommandResult {
  bool ok = false;
  std::string text;  // what was done, or why not
};

// What an embedding (the C API) changes in an Acceptor: each session's
// application. Engine threads' hooks go in AcceptorConfig::engine.thread_hooks;
// requests to a session from other threads go through post().
class AcceptorHooks {
 public:
  virtual ~AcceptorHooks() = default;
  // The application of the i-th configured session (it must outlive the
  // Acceptor); nullptr: `builtin`, the OrderApplication in [app] mode made
  // for it (which the returned one may call on to).
  virtual session::Application* application(std::size_t i, const session::SessionSettings& s,
                                            OrderApplication& builtin) {
    (void)i;
    (void)s;
    (void)builtin;
    return nullptr;
  }
};

// Runs an acceptor. Not copyable; start() once; stop() (idempotent, the
// destructor stops it too) ends the engine's threads.
class Acceptor {
 public:
  // Builds the sessions (stores opened, dictionaries loaded). Throws
  // session::ConfigError naming the file, the session and the problem.
  // `hooks` (may be null) must outlive the Acceptor.
  Acceptor(AcceptorConfig config, session::Logger& log, AcceptorHooks* hooks = nullptr);
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Binds and starts the engine threads; false with `error` set.
  bool start(std::string& error);
  std::uint16_t port() const noexcept;
  // Asks every logged-on session to log out (done by its own thread on its
  // next timer turn; a session whose port is full is logged). Returns at once.
  void request_logout() noexcept;
  // Connections still open.
  int open_connections() const noexcept;
  // Waits (bounded) until no connection is open. True if none is.
  bool wait_disconnected(int timeout_ms) const noexcept;
  // request_logout(), wait up to shutdown_wait_ms, then stop().
  void shutdown() noexcept;
  void stop() noexcept;

  // --- operations (kite-admin); any thread ---------------------------------
  // Runs `cmd` on session i (its connection's thread, waited for up to
  // timeout_ms). Bad requests change nothing.
  CommandResult run(std::size_t session, const SessionCommand& cmd, int timeout_ms = 3000);
  // Queues `cmd` for session i's thread without waiting for it (a send, the
  // shutdown Logout); session < registry().size(). full / too_large:
  // nothing queued. Any thread.
  link::PortStatus post(std::size_t session, const SessionCommand& cmd) noexcept;
  // Switches session i's message log ([message_log] dir must be set).
  CommandResult set_message_log(std::size_t session, bool on);
  // Counters and published state; nullptr when neither [admin] nor
  // [message_log] is configured.
  const link::Metrics* metrics() const noexcept { return metrics_.get(); }
  std::int64_t started_ns() const noexcept { return started_ns_; }

  // The engine's counters and threads (engine::Engine::stats(), threads());
  // after stop() they keep their final values. Empty before start().
  engine::EngineStats engine_stats() const;
  std::vector<engine::ThreadInfo> engine_threads() const;

  const AcceptorConfig& config() const noexcept { return config_; }
  session::SessionRegistry& registry() noexcept { return *registry_; }
  // The built-in application of session i (idle when the hooks gave another).
  OrderApplication& app(std::size_t i) noexcept { return *apps_[i]; }

 private:
  void publish_idle(std::size_t i);
  AcceptorConfig config_;
  session::Logger& log_;
  AcceptorHooks* hooks_;
  std::unique_ptr<LoggerEvents> events_;  // the engine's transport events into log_
  session::SystemClock clock_;
  IdSource ids_;
  Exchange exchange_;
  std::vector<std::unique_ptr<OrderApplication>> apps_;
  std::unique_ptr<session::SessionRegistry> registry_;
  std::unique_ptr<link::AcceptorFactory> inner_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<link::Metrics> metrics_;
  std::vector<std::unique_ptr<link::MessageLog>> logs_;
  std::vector<link::MessageLog*> log_ptrs_;
  std::unique_ptr<AdminServer> admin_;
  std::int64_t started_ns_ = 0;
};

}  // namespace kite::app
