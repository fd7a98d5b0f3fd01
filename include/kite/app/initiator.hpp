// Initiator sessions kept connected: the sessions of a configuration file
// (ConnectionType initiator, each with its SocketConnectHost and
// SocketConnectPort) run on the engine's initiator threads, and a connector
// thread `kite-connect` connects each one whenever it is down: at start, and
// after a disconnect at Session::next_connect_time() (ReconnectInterval,
// doubling after each failed attempt up to ReconnectIntervalMax, and never
// outside the session's schedule). Every failed attempt is logged with the
// time of the next one. kite-initiator and the C API's initiator run on it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/config.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"

namespace kite::app {

// What the owner adds to each session.
class InitiatorHooks {
 public:
  virtual ~InitiatorHooks() = default;
  // Session i's application (called once per session, before start).
  virtual session::Application& application(std::size_t i, const session::SessionSettings& s) = 0;
  // A timer turn on the thread that holds session i's connection: where the
  // owner sends from that thread. Returns work done. Allocation-free.
  virtual int on_timer(std::size_t i, session::Session& s) noexcept {
    (void)i, (void)s;
    return 0;
  }
};

class InitiatorHost final : public engine::ProtocolFactory, engine::ThreadHooks {
 public:
  // `sessions`: every one must be an initiator with a SocketConnectPort
  // (ConfigError naming the session otherwise). engine.host, port, sessions
  // and connect_at_start are set here; engine.thread_hooks is chained.
  // `queue_bytes`: per session, room for application messages posted from
  // other threads (link::CommandPort).
  InitiatorHost(const session::Config& sessions, engine::InitiatorConfig engine, session::Logger& log,
                InitiatorHooks& hooks, std::size_t queue_bytes = 0);
  ~InitiatorHost() override;

  // Starts the threads and the connector. With `connect_first`, every
  // session is connected once before (false and `error` naming the session
  // when one cannot be); otherwise the connector keeps trying with back-off.
  bool start(bool connect_first, std::string& error);
  // No more connecting: every logged-on session sends a Logout (from its own
  // thread) and the connections close on the answers.
  void request_logout() noexcept;
  // Stops connecting (sessions that disconnect stay down).
  void stop_connecting() noexcept;
  // Queues `c` for session i's thread (its next timer turn); i < size().
  // full / too_large: nothing queued. Any thread.
  link::PortStatus post(std::size_t i, const link::Command& c) noexcept;
  // Waits (bounded) until no session is connected. True if none is.
  bool wait_disconnected(int timeout_ms) const noexcept;
  // Stops the connector and the engine's threads (open connections close).
  void stop() noexcept;

  std::size_t size() const noexcept { return registry_->size(); }
  session::Session& session(std::size_t i) noexcept { return registry_->at(i); }
  const session::Clock& clock() const noexcept { return clock_; }
  int open_connections() const noexcept { return open_.load(std::memory_order_acquire); }
  engine::EngineStats engine_stats() const;
  std::vector<engine::ThreadInfo> engine_threads() const;

  // engine::ProtocolFactory: the engine's threads open the session the
  // connector handed to them.
  engine::Protocol* open(int connection_id) noexcept override;
  void release(engine::Protocol* p) noexcept override;

 private:
  class Connection;
  struct Address {
    std::string host;
    std::uint16_t port = 0;
  };
  // SocketConnectHost, then its alternates; each attempt takes the next
  // (next is touched by the connector only, or by start() before it runs).
  struct Target {
    std::vector<Address> addresses;
    std::size_t next = 0;
    int thread = 0;
  };
  void on_thread_start(const engine::ThreadInfo& t) noexcept override;
  void on_thread_stop(const engine::ThreadInfo& t) noexcept override;
  // Connects session i now; false with `error` when it cannot.
  bool connect(std::size_t i, std::string& error);
  void run_connector() noexcept;

  session::SystemClock clock_;
  session::Logger& log_;
  InitiatorHooks& hooks_;
  engine::InitiatorConfig engine_config_;
  engine::ThreadHooks* outer_hooks_ = nullptr;
  std::unique_ptr<session::SessionRegistry> registry_;
  std::vector<Target> targets_;
  std::vector<std::unique_ptr<link::InitiatorFactory>> factories_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::unique_ptr<std::atomic<bool>[]> busy_;    // per session: handed to a thread, not yet released
  std::mutex mu_;                                // the per-thread hand-over queues below
  std::vector<std::deque<std::size_t>> handed_;  // per thread: sessions whose sockets it will open, in order
  std::unique_ptr<engine::Initiator> engine_;
  std::thread connector_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> connecting_{true};
  std::atomic<int> open_{0};
};

}  // namespace kite::app
