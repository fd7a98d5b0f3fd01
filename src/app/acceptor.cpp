#include "kite/app/acceptor.hpp"

#include <chrono>
#include <thread>

#include "kite/util/toml_reader.hpp"

namespace kite::app {

using session::ConfigError;

namespace {

// One [engine] or [app] table read through the shared TOML reader: errors
// read "FILE: [TABLE]: setting KEY: WHY (line N)".
class TableReader {
 public:
  TableReader(const util::TomlReader& r, std::string table) : r_(r), table_(std::move(table)) {}
  std::string path(std::string_view key) const {
    std::string p = "[";
    p.append(table_).append("]: setting ").append(key);
    return p;
  }
  [[noreturn]] void fail(const toml::node& n, std::string_view key, const std::string& why) const {
    r_.fail(n, path(key), why);
  }
  std::string string(const toml::node& n, std::string_view key) const { return r_.expect_string(n, path(key)); }
  bool boolean(const toml::node& n, std::string_view key) const { return r_.expect_boolean(n, path(key)); }
  std::int64_t integer(const toml::node& n, std::string_view key, std::int64_t lo, std::int64_t hi) const {
    return r_.expect_integer(n, path(key), lo, hi);
  }

 private:
  const util::TomlReader& r_;
  std::string table_;
};

void read_engine(AcceptorConfig& c, const toml::table& t, const TableReader& r, bool& port_given) {
  engine::EngineConfig& e = c.engine;
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (key == "model") {
      if (!engine::parse_model(r.string(v, key), e.model))
        r.fail(v, key, "expected \"single\", \"mono\", \"pool\" or \"shard\"");
    } else if (key == "transport") {
      const std::string s = r.string(v, key);
      if (!transport::parse_kind(s, e.transport)) r.fail(v, key, "unknown transport \"" + s + "\"");
      if (!transport::compiled_in(e.transport)) r.fail(v, key, "transport " + s + " is not in this build");
    } else if (key == "bind") {
      e.bind_address = r.string(v, key);
    } else if (key == "port") {
      e.port = static_cast<std::uint16_t>(r.integer(v, key, 0, 65535));
      port_given = true;
    } else if (key == "workers") {
      e.workers = static_cast<int>(r.integer(v, key, 1, 1024));
    } else if (key == "cores") {
      const auto* a = v.as_array();
      if (a == nullptr) r.fail(v, key, "expected an array of core numbers");
      e.cores.clear();
      for (const auto& x : *a) e.cores.push_back(static_cast<int>(r.integer(x, key, 0, 4095)));
    } else if (key == "coordinator_core") {
      e.coordinator_core = static_cast<int>(r.integer(v, key, -1, 4095));
    } else if (key == "idle") {
      const std::string s = r.string(v, key);
      if (!engine::parse_idle(s, e.idle.kind)) r.fail(v, key, "expected \"busy_spin\", \"spin_yield\" or \"block\"");
    } else if (key == "busy_poll_usecs") {
      e.busy_poll_usecs = static_cast<int>(r.integer(v, key, 0, 1000000));
    } else if (key == "quickack") {
      e.quickack = r.boolean(v, key);
    } else if (key == "max_connections") {
      c.limits.max_connections = static_cast<std::size_t>(r.integer(v, key, 1, 100000));
    } else if (key == "logon_timeout") {
      c.limits.logon_timeout_ms = static_cast<std::int32_t>(r.integer(v, key, 1, 3600) * 1000);
    } else if (key == "max_message_size") {
      c.limits.max_message_size = static_cast<std::uint32_t>(r.integer(v, key, 256, 64 << 20));
    } else if (key == "send_buffer") {
      e.send_buffer = static_cast<std::size_t>(r.integer(v, key, 4096, 1 << 30));
    } else if (key == "recv_buffer") {
      e.recv_buffer = static_cast<std::size_t>(r.integer(v, key, 4096, 1 << 30));
    } else {
      r.fail(v, key, "unknown setting");
    }
  }
}

void read_app(AcceptorConfig& c, const toml::table& t, const TableReader& r) {
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (key == "mode") {
      const std::string s = r.string(v, key);
      if (!parse_mode(s, c.mode)) r.fail(v, key, "expected \"ack\", \"match\" or \"echo\", got \"" + s + "\"");
    } else if (key == "shutdown_wait_ms") {
      c.shutdown_wait_ms = static_cast<int>(r.integer(v, key, 0, 60000));
    } else {
      r.fail(v, key, "unknown setting");
    }
  }
}

AcceptorConfig finish(session::Config sessions) {
  AcceptorConfig c;
  c.sessions = std::move(sessions);
  const std::string& name = c.sessions.path;
  const util::TomlReader reader(name);
  c.engine.idle = {engine::IdleKind::block, 0, 1000};  // a daemon sleeps unless told to spin
  c.engine.send_full = engine::SendFullPolicy::wait;
  for (const auto& [k, v] : c.sessions.document) {
    const std::string_view key = k.str();
    if (key == "defaults" || key == "session") continue;
    const std::string table = std::string("[").append(key).append("]");
    const auto* t = v.as_table();
    if (key != "engine" && key != "app") reader.fail(table, "unknown table");
    if (t == nullptr) reader.fail(v, table, "must be a table");
    bool port_given = false;
    const TableReader r(reader, std::string(key));
    if (key == "engine") {
      read_engine(c, *t, r, port_given);
    } else {
      read_app(c, *t, r);
    }
  }
  const toml::node* port_node = c.sessions.document.at_path("engine.port").node();
  std::size_t i = 0;
  bool from_sessions = false;
  for (const session::SessionSettings& s : c.sessions.sessions) {
    ++i;
    const std::string where = "session " + std::to_string(i) + " (" + s.id() + "): setting ";
    if (s.role != session::Role::acceptor) reader.fail(where + "ConnectionType", "kite-acceptor runs acceptor sessions only");
    if (port_node == nullptr && s.socket_accept_port != 0) {
      if (from_sessions && s.socket_accept_port != c.engine.port)
        reader.fail(where + "SocketAcceptPort",
                    std::to_string(s.socket_accept_port) + " differs from another session's " + std::to_string(c.engine.port) +
                 " (one listening port per daemon)");
      c.engine.port = s.socket_accept_port;
      from_sessions = true;
    }
  }
  if (port_node == nullptr && !from_sessions)
    throw ConfigError(name + ": [engine]: setting port: missing (set it, or SocketAcceptPort in the sessions)");
  if (c.mode == Mode::match && c.engine.workers > 1 &&
      (c.engine.model == engine::Model::pool || c.engine.model == engine::Model::shard))
    throw ConfigError(name + ": [app]: setting mode: match needs every session on one thread (model single or mono, "
                             "or workers = 1)");
  if (!engine::supports(c.engine.transport, c.engine.model))
    throw ConfigError(name + ": [engine]: setting model: " + engine::to_string(c.engine.model) + " cannot run on " +
                      transport::to_string(c.engine.transport));
  switch (c.engine.model) {
    case engine::Model::single: c.engine.max_connections = 1; break;
    case engine::Model::pool:
      c.engine.max_connections =
          static_cast<int>((c.limits.max_connections + static_cast<std::size_t>(c.engine.workers) - 1) /
                           static_cast<std::size_t>(c.engine.workers));
      break;
    // The kernel spreads a shard's connections by hash, unevenly: each shard
    // may hold them all; the factory caps the total.
    case engine::Model::shard:
    case engine::Model::mono: c.engine.max_connections = static_cast<int>(c.limits.max_connections); break;
  }
  c.engine.log = false;
  return c;
}

}  // namespace

AcceptorConfig load_acceptor_config(const std::string& path) { return finish(session::load_config(path)); }

AcceptorConfig parse_acceptor_config(std::string_view text, const std::string& name) {
  return finish(session::parse_config(text, name));
}

// --- the running acceptor ------------------------------------------------------

// Wraps the link's connection to act on the daemon's requests (logout at
// shutdown, the skip hook) from the connection's own thread, and to count
// connections.
class GuardedConnection final : public engine::Protocol {
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
    return work;
  }
  void on_disconnected(const char* reason, std::int64_t now_ns) noexcept override {
    inner_->on_disconnected(reason, now_ns);
    owner_.open_.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  Acceptor& owner_;
  link::SessionConnection* inner_ = nullptr;
  std::uint32_t logout_seen_ = 0;
  std::uint32_t skip_seen_ = 0;
};

// Lends a GuardedConnection around each of the link's connections.
// The engine serialises open() and release().
class Acceptor::Factory final : public engine::ProtocolFactory {
 public:
  Factory(Acceptor& owner, link::AcceptorFactory& inner, std::size_t n) : inner_(inner) {
    for (std::size_t i = 0; i < n; ++i) pool_.push_back(std::make_unique<GuardedConnection>(owner));
    for (auto& g : pool_) free_.push_back(g.get());
  }
  engine::Protocol* open(int id) noexcept override {
    if (free_.empty()) return nullptr;
    auto* inner = static_cast<link::SessionConnection*>(inner_.open(id));
    if (inner == nullptr) return nullptr;
    GuardedConnection* g = free_.back();
    free_.pop_back();
    g->bind(inner);
    return g;
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
    : config_(std::move(config)), log_(log), hooks_(hooks) {
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
  factory_ = std::make_unique<Factory>(*this, *inner_, config_.limits.max_connections);
}

Acceptor::~Acceptor() { stop(); }

bool Acceptor::start(std::string& error) {
  engine_ = engine::Engine::start(config_.engine, *factory_, error);
  return engine_ != nullptr;
}

std::uint16_t Acceptor::port() const noexcept { return engine_ ? engine_->port() : 0; }

void Acceptor::request_logout() noexcept { logout_generation_.fetch_add(1, std::memory_order_acq_rel); }

void Acceptor::skip_outbound(std::uint64_t n) noexcept {
  skip_by_.store(n, std::memory_order_release);
  skip_generation_.fetch_add(1, std::memory_order_acq_rel);
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
  if (engine_) engine_->stop();
}

engine::EngineStats Acceptor::engine_stats() const { return engine_ ? engine_->stats() : engine::EngineStats{}; }

std::vector<engine::ThreadInfo> Acceptor::engine_threads() const {
  return engine_ ? engine_->threads() : std::vector<engine::ThreadInfo>{};
}

}  // namespace kite::app
