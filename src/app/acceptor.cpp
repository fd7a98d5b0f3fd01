#include "kite/app/acceptor.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "admin.hpp"

#include "kite/app/tls_config.hpp"

namespace kite::app {

using session::ConfigError;

// --- the running acceptor ------------------------------------------------------

Acceptor::Acceptor(AcceptorConfig config, session::Logger& log, AcceptorHooks* hooks)
    : config_(std::move(config)), log_(log), hooks_(hooks), events_(std::make_unique<LoggerEvents>(log)) {
  if (config_.engine.events == nullptr) config_.engine.events = events_.get();
  registry_ = std::make_unique<session::SessionRegistry>(clock_, log_);
  std::size_t i = 0;
  for (const session::SessionSettings& s : config_.sessions.sessions) {
    ++i;
    apps_.push_back(std::make_unique<OrderApplication>(config_.mode, ids_, &exchange_));
    try {
      session::Application* app = hooks_ != nullptr ? hooks_->application(i - 1, s, *apps_.back()) : nullptr;
      registry_->add(s, app != nullptr ? *app : *apps_.back());
    } catch (const std::exception& e) {
      throw ConfigError(config_.sessions.path + ": session " + std::to_string(i) + " (" + s.id() + "): " + e.what());
    }
  }
  inner_ = std::make_unique<link::AcceptorFactory>(*registry_, config_.limits);
  inner_->open_ports(config_.queue_bytes);
  if (config_.admin.enabled() || !config_.message_log.dir.empty()) {
    metrics_ = std::make_unique<link::Metrics>(registry_->size());
    for (std::size_t k = 0; k < registry_->size(); ++k) {
      const session::Session& s = registry_->at(k);
      if (config_.message_log.dir.empty()) {
        log_ptrs_.push_back(nullptr);
        continue;
      }
      logs_.push_back(std::make_unique<link::MessageLog>(config_.message_log.dir + "/" + link::message_log_name(s.id()),
                                                         config_.message_log.max_bytes, config_.message_log.keep));
      log_ptrs_.push_back(logs_.back().get());
      for (const std::string& id : config_.message_log.sessions)
        if (id == "*" || id == s.id()) {
          logs_.back()->prepare();
          metrics_->session(k).message_log.store(true, std::memory_order_release);
        }
    }
    inner_->observe(metrics_.get(), log_ptrs_.data());
  }
}

Acceptor::~Acceptor() { stop(); }

void Acceptor::publish_idle(std::size_t i) {
  if (!metrics_) return;
  session::Session& s = registry_->at(i);
  link::SessionMetrics& m = metrics_->session(i);
  m.next_in.store(s.next_target_seq(), std::memory_order_relaxed);
  m.next_out.store(s.next_sender_seq(), std::memory_order_relaxed);
}

bool Acceptor::start(std::string& error) {
  started_ns_ = clock_.now_ns();
  for (std::size_t i = 0; i < registry_->size(); ++i) publish_idle(i);
  engine_ = engine::Engine::start(config_.engine, *inner_, error);
  if (engine_ == nullptr) return false;
  for (std::size_t i = 0; i < registry_->size(); ++i) inner_->port(i)->set_waker(engine_.get());
  if (config_.admin.enabled()) {
    admin_ = std::make_unique<AdminServer>(*this, config_.admin, log_);
    if (!admin_->start(error)) {
      admin_.reset();
      engine_->stop();
      engine_.reset();
      return false;
    }
  }
  return true;
}

CommandResult Acceptor::run(std::size_t i, const SessionCommand& cmd, int timeout_ms) {
  if (i >= registry_->size()) return {false, "no such session"};
  session::Session& s = registry_->at(i);
  link::CommandPort& port = *inner_->port(i);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    link::Answer a;
    if (s.try_bind()) {
      // No connection holds it: this thread does and runs it here, dropping
      // what was queued before, as a connection taking it would (a Logon
      // arriving in these microseconds is refused and retried by the peer).
      port.discard();
      link::run_command(s, cmd, nullptr, log_, a);
      publish_idle(i);
      s.unbind();
      return {a.ok, a.text};
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    switch (port.call(cmd, s, static_cast<int>(std::max<long long>(left.count(), 0)), a)) {
      case link::CommandPort::CallOutcome::done: return {a.ok, a.text};
      case link::CommandPort::CallOutcome::dropped:
      case link::CommandPort::CallOutcome::unheld: continue;  // the session changed hands: ask again
      case link::CommandPort::CallOutcome::full: return {false, "the session's command port is full: try again"};
      case link::CommandPort::CallOutcome::too_large: return {false, "the command's text is too long"};
      case link::CommandPort::CallOutcome::timed_out: break;
    }
    return {false, "the session's thread did not take the command within " + std::to_string(timeout_ms) +
                       " ms (it may still run it)"};
  }
}

link::PortStatus Acceptor::post(std::size_t i, const SessionCommand& cmd) noexcept {
  if (i >= registry_->size()) return link::PortStatus::too_large;
  return inner_->port(i)->post(cmd);
}

CommandResult Acceptor::set_message_log(std::size_t i, bool on) {
  if (i >= registry_->size()) return {false, "no such session"};
  if (!metrics_ || logs_.empty()) return {false, "no message log folder: set [message_log] dir in the configuration"};
  link::MessageLog& l = *logs_[i];
  if (on) l.prepare();
  const bool was = metrics_->session(i).message_log.exchange(on, std::memory_order_acq_rel);
  log_.logf(session::LogLevel::info, registry_->at(i).id(), "operator: message log %s (%s)", on ? "on" : "off",
            l.path().c_str());
  return {true, registry_->at(i).id() + ": message log " +
                    (on ? (was ? "was already on" : "on") : (was ? "off" : "was already off")) + ": " + l.path()};
}

std::uint16_t Acceptor::port() const noexcept { return engine_ ? engine_->port() : 0; }

void Acceptor::request_logout() noexcept {
  link::Command c;
  c.kind = link::Command::Kind::shutdown;
  c.text = "kite-acceptor shutting down";
  for (std::size_t i = 0; i < registry_->size(); ++i)
    if (post(i, c) != link::PortStatus::ok)
      log_.logf(session::LogLevel::error, registry_->at(i).id(),
                "no Logout asked at shutdown: its command port is full");
}

int Acceptor::open_connections() const noexcept { return static_cast<int>(inner_->open_connections()); }

bool Acceptor::wait_disconnected(int timeout_ms) const noexcept {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (open_connections() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void Acceptor::shutdown() noexcept {
  if (!engine_) return;
  request_logout();
  wait_disconnected(config_.shutdown_wait_ms);
  stop();
}

// The stopped engine is kept: its counters stay readable until destruction.
void Acceptor::stop() noexcept {
  if (admin_) admin_->stop();
  if (engine_) engine_->stop();
  for (auto& l : logs_) l->close();  // the engine's threads are gone: this thread owns the logs now
}

engine::EngineStats Acceptor::engine_stats() const { return engine_ ? engine_->stats() : engine::EngineStats{}; }

std::vector<engine::ThreadInfo> Acceptor::engine_threads() const {
  return engine_ ? engine_->threads() : std::vector<engine::ThreadInfo>{};
}

}  // namespace kite::app
