#include "kite/app/acceptor.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "admin.hpp"

#include "kite/app/tls_config.hpp"

namespace kite::app {

using session::ConfigError;

// --- the running acceptor ------------------------------------------------------

// One session's mailbox for operator commands: the admin thread fills `cmd`
// and bumps `asked`; the thread that owns the session's connection runs it on
// its next timer turn, writes the result and sets `done` to what it ran.
struct Acceptor::Control {
  std::mutex mu;  // the asking side: one command at a time per session
  std::atomic<std::uint32_t> asked{0};
  std::atomic<std::uint32_t> done{0};
  SessionCommand cmd;
  char text[256] = {};  // cmd.text points here
  bool ok = false;
  char result[192] = {};
};

namespace {
void say(char* buf, std::size_t cap, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void say(char* buf, std::size_t cap, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}

// Runs an operator's command on a session held by the calling thread (its
// connection's, or the admin thread's when it has none: out == nullptr).
// Allocation-free: it may run on an engine thread.
bool apply_command(session::Session& s, const SessionCommand& cmd, engine::Outbound* out, session::Logger& log,
                   char* result, std::size_t cap) noexcept {
  using Kind = SessionCommand::Kind;
  switch (cmd.kind) {
    case Kind::logout:
      if (!s.logged_on()) {
        say(result, cap, "not logged on (%s): nothing sent", to_string(s.state()));
        return false;
      }
      s.logout(cmd.text.empty() ? std::string_view("Logged out by the operator") : cmd.text);
      say(result, cap, "Logout sent; the connection closes on the answer or after the logout timeout");
      break;
    case Kind::disconnect:
      if (out == nullptr) {
        say(result, cap, "not connected: nothing to disconnect");
        return false;
      }
      out->close("disconnected by the operator", true);
      say(result, cap, "connection closed (no Logout sent)");
      break;
    case Kind::set_seq:
    case Kind::reset:
      if (s.logged_on() && !cmd.force) {
        say(result, cap,
            "logged on: log it out first, or add --force (the counterparty then sees the new numbers "
            "on the next message)");
        return false;
      }
      if (cmd.kind == Kind::reset) {
        s.reset_sequences();
      } else {
        if (cmd.next_in != 0) s.set_next_target_seq(cmd.next_in);
        if (cmd.next_out != 0) s.set_next_sender_seq(cmd.next_out);
      }
      say(result, cap, "next_in %llu, next_out %llu", static_cast<unsigned long long>(s.next_target_seq()),
          static_cast<unsigned long long>(s.next_sender_seq()));
      break;
  }
  log.logf(session::LogLevel::warn, s.id(), "operator: %s", result);
  return true;
}
}  // namespace

// Wraps the link's connection to act on the daemon's requests (logout at
// shutdown, the skip hook) from the connection's own thread, and to count
// connections.
class alignas(64) GuardedConnection final : public engine::Protocol {
 public:
  explicit GuardedConnection(Acceptor& owner) noexcept : owner_(owner) {}
  void bind(link::SessionConnection* inner) noexcept {
    inner_ = inner;
    logout_seen_ = owner_.logout_generation_.load(std::memory_order_acquire);
    skip_seen_ = owner_.skip_generation_.load(std::memory_order_acquire);
  }
  link::SessionConnection* inner() const noexcept { return inner_; }

  void on_connected(engine::Outbound& out, std::int64_t now_ns) noexcept override {
    owner_.open_.fetch_add(1, std::memory_order_acq_rel);
    out_ = &out;
    ctl_session_ = nullptr;
    inner_->on_connected(out, now_ns);
  }
  std::size_t on_data(const char* data, std::size_t n, std::int64_t now_ns) noexcept override {
    return inner_->on_data(data, n, now_ns);
  }
  int on_timer(std::int64_t now_ns) noexcept override {
    int work = inner_->on_timer(now_ns);
    session::Session* s = inner_->session();
    if (s != nullptr && owner_.hooks_ != nullptr) work += owner_.hooks_->on_timer(*s);
    const std::uint32_t lg = owner_.logout_generation_.load(std::memory_order_acquire);
    if (lg != logout_seen_) {
      logout_seen_ = lg;
      if (s != nullptr && s->logged_on()) {
        s->logout("kite-acceptor shutting down");
        ++work;
      }
    }
    const std::uint32_t sg = owner_.skip_generation_.load(std::memory_order_acquire);
    if (sg != skip_seen_) {
      skip_seen_ = sg;
      if (s != nullptr && s->logged_on()) {
        const std::uint64_t by = owner_.skip_by_.load(std::memory_order_acquire);
        s->set_next_sender_seq(s->next_sender_seq() + by);
        owner_.log_.logf(session::LogLevel::warn, s->id(), "test hook: outbound sequence skipped by %llu to %llu",
                         static_cast<unsigned long long>(by), static_cast<unsigned long long>(s->next_sender_seq()));
        ++work;
      }
    }
    if (s != nullptr) work += take_command(*s);
    return work;
  }
  // Hooks are served by every turn; the daemon's own requests (logout,
  // skip, commands) wake the engine.
  std::int64_t timer_quiet_ns() noexcept override {
    return owner_.hooks_ != nullptr ? 0 : inner_->timer_quiet_ns();
  }
  void on_disconnected(const char* reason, std::int64_t now_ns) noexcept override {
    inner_->on_disconnected(reason, now_ns);
    out_ = nullptr;
    ctl_session_ = nullptr;
    owner_.open_.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  // An operator's command waiting in the session's mailbox (Acceptor::run).
  int take_command(session::Session& s) noexcept {
    if (&s != ctl_session_) {
      // Commands asked before this connection held the session are not its
      // own: the asker retries them.
      ctl_session_ = &s;
      ctl_ = &owner_.controls_[owner_.registry_->index_of(&s)];
      ctl_seen_ = ctl_->asked.load(std::memory_order_acquire);
    }
    const std::uint32_t a = ctl_->asked.load(std::memory_order_acquire);
    if (a == ctl_seen_) return 0;
    ctl_seen_ = a;
    ctl_->ok = apply_command(s, ctl_->cmd, out_, owner_.log_, ctl_->result, sizeof ctl_->result);
    ctl_->done.store(a, std::memory_order_release);
    return 1;
  }

  Acceptor& owner_;
  link::SessionConnection* inner_ = nullptr;
  engine::Outbound* out_ = nullptr;
  std::uint32_t logout_seen_ = 0;
  std::uint32_t skip_seen_ = 0;
  session::Session* ctl_session_ = nullptr;
  Acceptor::Control* ctl_ = nullptr;
  std::uint32_t ctl_seen_ = 0;
};

// Lends a GuardedConnection around each of the link's connections.
// The engine serialises open() and release().
class Acceptor::Factory final : public engine::ProtocolFactory {
 public:
  Factory(Acceptor& owner, link::AcceptorFactory& inner, std::size_t n) : inner_(inner) {
    for (std::size_t i = 0; i < n; ++i) pool_.push_back(std::make_unique<GuardedConnection>(owner));
    for (auto& g : pool_) free_.push_back(g.get());
  }
  engine::Protocol* open(int id) noexcept override { return open_from(id, {}); }
  // The inner factory refuses (and logs) first: the two pools are one size.
  engine::Protocol* open_from(int id, std::string_view peer) noexcept override {
    auto* inner = static_cast<link::SessionConnection*>(inner_.open_from(id, peer));
    if (inner == nullptr) return nullptr;
    if (free_.empty()) {
      inner_.release(inner);
      return nullptr;
    }
    GuardedConnection* g = free_.back();
    free_.pop_back();
    g->bind(inner);
    return g;
  }
  void refused(int id, std::string_view peer, const char* reason) noexcept override {
    inner_.refused(id, peer, reason);
  }
  void release(engine::Protocol* p) noexcept override {
    auto* g = static_cast<GuardedConnection*>(p);
    inner_.release(g->inner());
    free_.push_back(g);
  }

 private:
  link::AcceptorFactory& inner_;
  std::vector<std::unique_ptr<GuardedConnection>> pool_;
  std::vector<GuardedConnection*> free_;
};

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
  factory_ = std::make_unique<Factory>(*this, *inner_, config_.limits.table_size());
  controls_ = std::make_unique<Control[]>(registry_->size());
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
  engine_ = engine::Engine::start(config_.engine, *factory_, error);
  if (engine_ == nullptr) return false;
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
  Control& c = controls_[i];
  std::lock_guard lock(c.mu);
  session::Session& s = registry_->at(i);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (s.try_bind()) {
      // No connection holds it: run it here (a Logon arriving in these
      // microseconds is refused as "already logged on" and retried by the peer).
      char result[192];
      const bool ok = apply_command(s, cmd, nullptr, log_, result, sizeof result);
      publish_idle(i);
      s.unbind();
      return {ok, result};
    }
    const std::size_t n = std::min(cmd.text.size(), sizeof c.text - 1);
    std::memcpy(c.text, cmd.text.data(), n);
    c.text[n] = 0;
    c.cmd = cmd;
    c.cmd.text = std::string_view(c.text, n);
    const std::uint32_t a = c.asked.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (engine_) engine_->wake_timers();
    const auto retry = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
    while (c.done.load(std::memory_order_acquire) != a && std::chrono::steady_clock::now() < retry)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (c.done.load(std::memory_order_acquire) == a) return {c.ok, c.result};
    if (std::chrono::steady_clock::now() >= deadline)
      return {false, "the session's thread did not take the command within " + std::to_string(timeout_ms) +
                         " ms (it may still run it)"};
  }
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
  logout_generation_.fetch_add(1, std::memory_order_acq_rel);
  if (engine_) engine_->wake_timers();
}

void Acceptor::skip_outbound(std::uint64_t n) noexcept {
  skip_by_.store(n, std::memory_order_release);
  skip_generation_.fetch_add(1, std::memory_order_acq_rel);
  if (engine_) engine_->wake_timers();
}

bool Acceptor::wait_disconnected(int timeout_ms) const noexcept {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (open_.load(std::memory_order_acquire) > 0) {
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
