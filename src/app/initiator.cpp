#include "kite/app/initiator.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "kite/transport/tcp.hpp"
#include "kite/util/config_error.hpp"

namespace kite::app {

using session::ConfigError;
using session::LogLevel;

namespace {
// The engine thread the calling code runs on (kite-init-N), set when it starts.
thread_local int t_thread = -1;
}  // namespace

// Session i's connection as the engine sees it: the link's connection, plus
// the owner's timer hook, run on the connection's own thread.
class InitiatorHost::Connection final : public engine::Protocol {
 public:
  Connection(InitiatorHost& owner, std::size_t i) noexcept : owner_(owner), i_(i) {}
  void bind(engine::Protocol* inner) noexcept { inner_ = inner; }
  engine::Protocol* inner() const noexcept { return inner_; }

  void on_connected(engine::Outbound& out, std::int64_t now_ns) noexcept override {
    owner_.open_.fetch_add(1, std::memory_order_acq_rel);
    inner_->on_connected(out, now_ns);
  }
  std::size_t on_data(const char* data, std::size_t n, std::int64_t now_ns) noexcept override {
    return inner_->on_data(data, n, now_ns);
  }
  int on_timer(std::int64_t now_ns) noexcept override {
    const int work = inner_->on_timer(now_ns);
    return work + owner_.hooks_.on_timer(i_, owner_.session(i_));
  }
  void on_disconnected(const char* reason, std::int64_t now_ns) noexcept override {
    inner_->on_disconnected(reason, now_ns);
    owner_.open_.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  InitiatorHost& owner_;
  std::size_t i_;
  engine::Protocol* inner_ = nullptr;
};

InitiatorHost::InitiatorHost(const session::Config& config, engine::InitiatorConfig engine, session::Logger& log,
                             InitiatorHooks& hooks, std::size_t queue_bytes)
    : log_(log), hooks_(hooks), engine_config_(std::move(engine)) {
  if (config.sessions.empty()) throw ConfigError(config.path + ": no [[session]]");
  registry_ = std::make_unique<session::SessionRegistry>(clock_, log_);
  const int threads = std::clamp(engine_config_.threads, 1, static_cast<int>(config.sessions.size()));
  std::size_t i = 0;
  for (const session::SessionSettings& s : config.sessions) {
    const std::string where = config.path + ": session " + std::to_string(i + 1) + " (" + s.id() + "): setting ";
    if (s.role != session::Role::initiator) throw ConfigError(where + "ConnectionType: must be initiator");
    if (s.socket_connect_port == 0) throw ConfigError(where + "SocketConnectPort: missing");
    try {
      session::Session& made = registry_->add(s, hooks_.application(i, s));
      factories_.push_back(std::make_unique<link::InitiatorFactory>(made, clock_, log_, queue_bytes));
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      throw ConfigError(config.path + ": session " + std::to_string(i + 1) + " (" + s.id() + "): " + e.what());
    }
    Target t;
    t.addresses.push_back({s.socket_connect_host.empty() ? "127.0.0.1" : s.socket_connect_host, s.socket_connect_port});
    for (const session::SessionSettings::ConnectAddress& a : s.socket_connect_alternates)
      t.addresses.push_back({a.host, a.port});
    t.thread = static_cast<int>(i % static_cast<std::size_t>(threads));
    targets_.push_back(std::move(t));
    connections_.push_back(std::make_unique<Connection>(*this, i));
    ++i;
  }
  busy_ = std::make_unique<std::atomic<bool>[]>(i);
  handed_.resize(static_cast<std::size_t>(threads));
  engine_config_.sessions = static_cast<int>(i);
  engine_config_.threads = threads;
  engine_config_.connect_at_start = false;
  engine_config_.host = targets_[0].addresses[0].host;
  engine_config_.port = targets_[0].addresses[0].port;
  outer_hooks_ = engine_config_.thread_hooks;
  engine_config_.thread_hooks = this;
}

InitiatorHost::~InitiatorHost() { stop(); }

void InitiatorHost::on_thread_start(const engine::ThreadInfo& t) noexcept {
  // "kite-init-N": the engine deals session i to thread i % threads.
  const std::size_t dash = t.name.rfind('-');
  t_thread = dash == std::string::npos ? 0 : std::atoi(t.name.c_str() + dash + 1);
  if (outer_hooks_ != nullptr) outer_hooks_->on_thread_start(t);
}

void InitiatorHost::on_thread_stop(const engine::ThreadInfo& t) noexcept {
  if (outer_hooks_ != nullptr) outer_hooks_->on_thread_stop(t);
}

bool InitiatorHost::connect(std::size_t i, std::string& error) {
  Target& t = targets_[i];
  const std::size_t which = t.next;
  const Address& a = t.addresses[which];
  t.next = (which + 1) % t.addresses.size();
  transport::ConnectResult c = transport::connect_tcp(a.host, a.port, engine_config_.connect_timeout_ms);
  if (c.fd < 0) {
    error = c.error;
    return false;
  }
  if (t.addresses.size() > 1)
    log_.logf(LogLevel::info, session(i).id(), "connected to %s:%u (address %zu of %zu)", a.host.c_str(), a.port,
              which + 1, t.addresses.size());
  busy_[i].store(true, std::memory_order_release);
  {
    std::lock_guard lock(mu_);
    handed_[static_cast<std::size_t>(t.thread)].push_back(i);
  }
  if (!engine_->hand(t.thread, c.fd)) {  // cannot happen: a thread holds at most its share
    {
      std::lock_guard lock(mu_);
      handed_[static_cast<std::size_t>(t.thread)].pop_back();
    }
    ::close(c.fd);
    busy_[i].store(false, std::memory_order_release);
    error = "the session's thread took no more connections";
    return false;
  }
  return true;
}

bool InitiatorHost::start(bool connect_first, std::string& error) {
  engine_ = engine::Initiator::start(engine_config_, *this, error);
  if (!engine_) return false;
  if (connect_first) {
    for (std::size_t i = 0; i < size(); ++i) {
      std::string why;
      if (!connect(i, why)) {
        error = session(i).id() + ": " + why;
        stop();
        return false;
      }
    }
  }
  connector_ = std::thread([this] { run_connector(); });
  return true;
}

// Every 10 ms: each session that is down and due is connected. A connect
// blocks this thread up to connect_timeout_ms, never a session's thread.
void InitiatorHost::run_connector() noexcept {
  ::pthread_setname_np(::pthread_self(), "kite-connect");
  for (;;) {
    {
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stopping_; })) return;
    }
    if (!connecting_.load(std::memory_order_acquire)) continue;
    for (std::size_t i = 0; i < size(); ++i) {
      if (busy_[i].load(std::memory_order_acquire)) continue;
      session::Session& s = session(i);                // not bound: this thread may read and report on it
      const std::int64_t due = s.next_connect_time();  // before now: a fresh session's is the clock's now
      if (clock_.now_ns() < due) continue;
      const Address& tried = targets_[i].addresses[targets_[i].next];
      std::string why;
      if (connect(i, why)) continue;
      s.on_connect_failed();
      const std::int64_t wait_ms = (s.next_connect_time() - clock_.now_ns()) / session::kNsPerMs;
      log_.logf(LogLevel::warn, s.id(), "connect to %s:%u failed: %s; next attempt in %lld ms", tried.host.c_str(),
                tried.port, why.c_str(), static_cast<long long>(wait_ms));
    }
  }
}

engine::Protocol* InitiatorHost::open(int connection_id) noexcept {
  std::size_t i;
  {
    std::lock_guard lock(mu_);
    if (t_thread < 0 || static_cast<std::size_t>(t_thread) >= handed_.size()) return nullptr;
    std::deque<std::size_t>& q = handed_[static_cast<std::size_t>(t_thread)];
    if (q.empty()) return nullptr;
    i = q.front();
    q.pop_front();
  }
  engine::Protocol* inner = factories_[i]->open(connection_id);
  if (inner == nullptr) {
    busy_[i].store(false, std::memory_order_release);
    return nullptr;
  }
  connections_[i]->bind(inner);
  return connections_[i].get();
}

void InitiatorHost::release(engine::Protocol* p) noexcept {
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    if (connections_[i].get() != p) continue;
    factories_[i]->release(connections_[i]->inner());
    busy_[i].store(false, std::memory_order_release);
    return;
  }
}

void InitiatorHost::request_logout() noexcept {
  stop_connecting();
  link::Command c;
  c.kind = link::Command::Kind::shutdown;
  c.text = "shutting down";
  for (std::size_t i = 0; i < size(); ++i)
    if (post(i, c) != link::PortStatus::ok)
      log_.logf(LogLevel::error, session(i).id(), "no Logout asked at shutdown: its command port is full");
}

link::PortStatus InitiatorHost::post(std::size_t i, const link::Command& c) noexcept {
  return factories_[i]->port().post(c);
}

void InitiatorHost::stop_connecting() noexcept { connecting_.store(false, std::memory_order_release); }

bool InitiatorHost::wait_disconnected(int timeout_ms) const noexcept {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (open_.load(std::memory_order_acquire) > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void InitiatorHost::stop() noexcept {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (connector_.joinable()) connector_.join();
  if (engine_) engine_->stop();
}

engine::EngineStats InitiatorHost::engine_stats() const { return engine_ ? engine_->stats() : engine::EngineStats{}; }

std::vector<engine::ThreadInfo> InitiatorHost::engine_threads() const {
  return engine_ ? engine_->threads() : std::vector<engine::ThreadInfo>{};
}

}  // namespace kite::app
