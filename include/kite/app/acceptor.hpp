// The kite-acceptor daemon as a library: its configuration file (the session
// loader's [defaults]/[[session]] plus [engine] and [app] tables, see
// docs/acceptor.md) and an Acceptor that runs the engine with one
// OrderApplication per session.
//
// Errors: load_acceptor_config() and the Acceptor constructor throw
// session::ConfigError with one line naming the file, the table or session,
// and the setting ("kite.toml: [engine]: setting model: ...").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kite/app/order_app.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/config.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"

namespace kite::app {

struct AcceptorConfig {
  session::Config sessions;         // path, document, sessions
  engine::EngineConfig engine;      // [engine]
  link::AcceptorLimits limits;   // [engine] max_connections, logon_timeout, max_message_size
  Mode mode = Mode::ack;            // [app] mode
  int shutdown_wait_ms = 2000;      // [app] shutdown_wait_ms: how long SIGTERM waits for Logout answers
};

AcceptorConfig load_acceptor_config(const std::string& path);
AcceptorConfig parse_acceptor_config(std::string_view text, const std::string& name);

class GuardedConnection;

// What an embedding (the C API) changes in an Acceptor: each session's
// application and a timer turn per connection. Engine threads' hooks go in
// AcceptorConfig::engine.thread_hooks.
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
  // A timer turn of a connection bound to `s`, on the connection's thread
  // (at most every EngineConfig::timer_interval_us). Returns work done.
  virtual int on_timer(session::Session& s) noexcept {
    (void)s;
    return 0;
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
  // next timer turn). Returns at once.
  void request_logout() noexcept;
  // Connections still open.
  int open_connections() const noexcept { return open_.load(std::memory_order_acquire); }
  // Waits (bounded) until no connection is open. True if none is.
  bool wait_disconnected(int timeout_ms) const noexcept;
  // request_logout(), wait up to shutdown_wait_ms, then stop().
  void shutdown() noexcept;
  void stop() noexcept;

  // Test hook: every connected session's next outbound sequence number jumps
  // by n (on its own thread), so that the peer sees a gap and asks for a
  // resend, which the session serves with a SequenceReset-GapFill.
  void skip_outbound(std::uint64_t n) noexcept;

  // The engine's counters and threads (engine::Engine::stats(), threads());
  // after stop() they keep their final values. Empty before start().
  engine::EngineStats engine_stats() const;
  std::vector<engine::ThreadInfo> engine_threads() const;

  const AcceptorConfig& config() const noexcept { return config_; }
  session::SessionRegistry& registry() noexcept { return *registry_; }
  // The built-in application of session i (idle when the hooks gave another).
  OrderApplication& app(std::size_t i) noexcept { return *apps_[i]; }

 private:
  friend class GuardedConnection;
  class Factory;
  AcceptorConfig config_;
  session::Logger& log_;
  AcceptorHooks* hooks_;
  session::SystemClock clock_;
  IdSource ids_;
  Exchange exchange_;
  std::vector<std::unique_ptr<OrderApplication>> apps_;
  std::unique_ptr<session::SessionRegistry> registry_;
  std::unique_ptr<link::AcceptorFactory> inner_;
  std::unique_ptr<Factory> factory_;
  std::unique_ptr<engine::Engine> engine_;
  std::atomic<int> open_{0};
  std::atomic<std::uint32_t> logout_generation_{0};
  std::atomic<std::uint32_t> skip_generation_{0};
  std::atomic<std::uint64_t> skip_by_{0};
};

}  // namespace kite::app
