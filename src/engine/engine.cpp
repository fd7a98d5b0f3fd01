#include "kite/engine/engine.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "kite/transport/vendor.hpp"
#include "session_agent.hpp"

namespace kite::engine {

using transport::Kind;

const char* to_string(Model m) noexcept {
  switch (m) {
    case Model::single: return "single";
    case Model::mono: return "mono";
    case Model::pool: return "pool";
    case Model::shard: return "shard";
  }
  return "?";
}

bool parse_model(const std::string& s, Model& out) noexcept {
  for (Model m : {Model::single, Model::mono, Model::pool, Model::shard}) {
    if (s == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

bool supports(Kind transport, Model model) noexcept {
  switch (transport) {
    case Kind::kernel:
    case Kind::uring:
    case Kind::onload:
    case Kind::tls: return true;
    case Kind::vma: return model != Model::shard;
    case Kind::tcpdirect:
    case Kind::socketxtreme: return model == Model::single || model == Model::mono;
  }
  return false;
}

namespace detail {
namespace {

// The in-process backend for a transport: onload and vma are the kernel
// backend run under their launcher (see src/transport/vendor/launcher.hpp).
std::unique_ptr<transport::Driver> make_driver(Kind kind, bool direct, const transport::DriverConfig& dc,
                                               const std::string& address, std::uint16_t port,
                                               const std::shared_ptr<transport::TlsContext>& tls, std::string& error) {
  switch (kind) {
    case Kind::tls: return transport::make_tls_driver(dc, tls, direct, error);
    case Kind::kernel:
    case Kind::onload:
    case Kind::vma:
      if (direct) return transport::make_direct_driver(dc);
      return transport::make_epoll_driver(dc, error);
    case Kind::uring: return transport::make_uring_driver(dc, error);
    case Kind::tcpdirect: return transport::vendor::make_tcpdirect_driver(dc, address, port, error);
    case Kind::socketxtreme: return transport::vendor::make_socketxtreme_driver(dc, error);
  }
  error = "unknown transport";
  return nullptr;
}

template <class Config>
transport::DriverConfig driver_config(const Config& c) {
  transport::DriverConfig dc;
  dc.socket.nodelay = c.nodelay;
  dc.socket.quickack = c.quickack;
  dc.socket.busy_poll_usecs = c.busy_poll_usecs;
  dc.socket.prefer_busy_poll = c.prefer_busy_poll;
  dc.socket.rcvbuf = c.socket_rcvbuf;
  dc.socket.sndbuf = c.socket_sndbuf;
  dc.events = c.events;
  dc.uring_entries = c.uring_entries;
  dc.uring_sqpoll = c.uring_sqpoll;
  // A receive is armed only when rx can take a whole provided buffer.
  dc.uring_buffer_size = static_cast<unsigned>(std::min<std::size_t>(4096, c.recv_buffer));
  return dc;
}

EngineStats collect(const Shared& s) {
  EngineStats st;
  st.accepted = s.accepted.load();
  st.refused = s.refused.load();
  st.closed = s.closed.load();
  st.slow_consumers = s.slow_consumers.load();
  st.send_full_events = s.send_full_events.load();
  st.front_door_waits = s.front_door_waits.load();
  st.rx_compactions = s.rx_compactions.load();
  st.tx_high_water = s.tx_high_water.load();
  st.active = s.active.load();
  return st;
}

// The pool's front door: accepts, picks the least-loaded worker with room,
// and hands the socket over through that worker's SPSC queue. With every
// worker full it keeps the socket in hand and waits: nothing is refused.
class FrontDoor final : public Agent {
 public:
  FrontDoor(Shared& shared, int listen_fd, std::vector<SpscQueue<int>*> queues, std::vector<std::atomic<int>*> loads,
            int max_per_worker)
      : shared_(shared), lfd_(listen_fd), queues_(std::move(queues)), loads_(std::move(loads)), max_(max_per_worker) {}

  int do_work(std::int64_t) noexcept override {
    if (hand_ < 0) {
      hand_ = transport::accept_nonblocking(lfd_);
      if (hand_ < 0) return 0;
    }
    int best = -1;
    int best_load = max_;
    for (std::size_t w = 0; w < loads_.size(); ++w) {
      const int l = loads_[w]->load(std::memory_order_acquire);
      if (l < best_load) {
        best = static_cast<int>(w);
        best_load = l;
      }
    }
    if (best < 0) {
      if (!waiting_) {
        waiting_ = true;
        shared_.front_door_waits.fetch_add(1, std::memory_order_relaxed);
        if (shared_.log) {
          std::fprintf(stderr, "kite-front: all %zu workers full (%d sessions each): waiting for room\n", loads_.size(),
                       max_);
        }
      }
      return 0;
    }
    loads_[static_cast<std::size_t>(best)]->fetch_add(1, std::memory_order_acq_rel);
    if (!queues_[static_cast<std::size_t>(best)]->try_push(hand_)) {
      loads_[static_cast<std::size_t>(best)]->fetch_sub(1, std::memory_order_acq_rel);
      return 0;
    }
    hand_ = -1;
    if (waiting_) {
      waiting_ = false;
      if (shared_.log) std::fprintf(stderr, "kite-front: room on kite-pool-%d: handing over\n", best);
    }
    return 1;
  }

  int block(std::int64_t now, int timeout_us) noexcept override {
    const int w = do_work(now);
    if (w > 0) return w;
    if (hand_ >= 0) {  // waiting for room: back off briefly
      timespec ts{0, 200 * 1000L};
      ::nanosleep(&ts, nullptr);
    } else {
      pollfd p{lfd_, POLLIN, 0};
      ::poll(&p, 1, (timeout_us + 999) / 1000);
    }
    return 0;
  }

  void on_close() noexcept override {
    if (hand_ >= 0) ::close(hand_);
    hand_ = -1;
  }

 private:
  Shared& shared_;
  int lfd_;
  std::vector<SpscQueue<int>*> queues_;
  std::vector<std::atomic<int>*> loads_;
  int max_;
  int hand_ = -1;
  bool waiting_ = false;
};

class EngineImpl final : public Engine {
 public:
  EngineImpl(ProtocolFactory& f, const EngineConfig& c) : shared_(f), cfg_(c) {
    shared_.policy = c.send_full;
    shared_.send_full_limit_ns = static_cast<std::int64_t>(c.send_full_limit_ms) * 1000000;
    shared_.log = c.log;
  }
  ~EngineImpl() override { stop(); }

  bool init(std::string& error) {
    if (!supports(cfg_.transport, cfg_.model)) {
      error = std::string(transport::to_string(cfg_.transport)) + " cannot run the " + to_string(cfg_.model) +
              " model (" + (cfg_.model == Model::pool ? "nopool" : "noshard") + ")";
      return false;
    }
    if (!transport::compiled_in(cfg_.transport)) {
      error = std::string(transport::to_string(cfg_.transport)) + ": not built into this binary";
      return false;
    }
    std::string bad = check_cores(cfg_.cores);
    if (bad.empty() && cfg_.coordinator_core >= 0) bad = check_cores({cfg_.coordinator_core});
    if (!bad.empty()) {
      error = bad;
      return false;
    }
    const int workers = (cfg_.model == Model::pool || cfg_.model == Model::shard) ? std::max(1, cfg_.workers) : 1;
    const transport::DriverConfig dc = driver_config(cfg_);
    if (cfg_.transport == Kind::tls) {
      tls_ = transport::TlsContext::make(cfg_.tls, transport::TlsRole::server, {}, error);
      if (tls_ == nullptr) {
        error = "tls: " + error;
        return false;
      }
    }

    // Listeners first: a port in use is reported before any thread starts.
    // tcpdirect listens on its own stack (a zftl inside the driver), and
    // socketxtreme accepts by itself, so `single` there is a driver listener
    // with one slot.
    const bool native_listen = cfg_.transport == Kind::tcpdirect;
    const bool driver_accepts = cfg_.transport == Kind::socketxtreme;
    const bool reuseport = cfg_.model == Model::shard;
    const int nlisten = native_listen ? 0 : cfg_.model == Model::shard ? workers : 1;
    if (native_listen) port_ = cfg_.port;
    for (int i = 0; i < nlisten; ++i) {
      const auto l = transport::listen_tcp(cfg_.bind_address, i == 0 ? cfg_.port : port_, reuseport, cfg_.backlog);
      if (l.fd < 0) {
        error = l.error;
        return false;
      }
      listeners_.push_back(l.fd);
      port_ = l.port;
    }

    for (int w = 0; w < workers; ++w) {
      AgentSetup setup;
      setup.recv_buffer = cfg_.recv_buffer;
      setup.send_buffer = cfg_.send_buffer;
      setup.timer_interval_ns = static_cast<std::int64_t>(cfg_.timer_interval_us) * 1000;
      setup.max_connections = cfg_.model == Model::single ? 1 : std::max(1, cfg_.max_connections);
      std::string name;
      switch (cfg_.model) {
        case Model::single: name = "kite-single"; break;
        case Model::mono: name = "kite-mono"; break;
        case Model::pool: name = "kite-pool-" + std::to_string(w); break;
        case Model::shard: name = "kite-shard-" + std::to_string(w); break;
      }
      setup.name = name;
      if (cfg_.model == Model::pool) {
        queues_.push_back(std::make_unique<SpscQueue<int>>(static_cast<std::size_t>(setup.max_connections)));
        loads_.push_back(std::make_unique<std::atomic<int>>(0));
        setup.inbox = queues_.back().get();
        setup.load = loads_.back().get();
      }
      if (cfg_.model == Model::single && !native_listen && !driver_accepts) setup.own_listener = listeners_[0];
      auto driver =
          make_driver(cfg_.transport, cfg_.model == Model::single, dc, cfg_.bind_address, cfg_.port, tls_, error);
      if (!driver) return false;
      auto agent = std::make_unique<SessionAgent>(shared_, std::move(driver), setup);
      const bool driver_listens = cfg_.model == Model::mono || (cfg_.model == Model::single && driver_accepts);
      if (!native_listen && driver_listens && !agent->listen(listeners_[0], error)) return false;
      if (cfg_.model == Model::shard && !agent->listen(listeners_[static_cast<std::size_t>(w)], error)) return false;
      std::vector<int> cores;
      if (!cfg_.cores.empty()) cores.push_back(cfg_.cores[static_cast<std::size_t>(w) % cfg_.cores.size()]);
      runners_.push_back(std::make_unique<AgentRunner>(*agent, name, cores, cfg_.idle));
      runners_.back()->set_hooks(cfg_.thread_hooks);
      agents_.push_back(std::move(agent));
    }
    if (cfg_.model == Model::pool) {
      std::vector<SpscQueue<int>*> qs;
      std::vector<std::atomic<int>*> ls;
      for (auto& q : queues_) qs.push_back(q.get());
      for (auto& l : loads_) ls.push_back(l.get());
      front_ = std::make_unique<FrontDoor>(shared_, listeners_[0], qs, ls, std::max(1, cfg_.max_connections));
      std::vector<int> cores;
      if (cfg_.coordinator_core >= 0) cores.push_back(cfg_.coordinator_core);
      front_runner_ = std::make_unique<AgentRunner>(*front_, "kite-front", cores, cfg_.front_idle);
      front_runner_->set_hooks(cfg_.thread_hooks);
    }
    for (auto& r : runners_) {
      if (!r->start(error)) return false;
    }
    if (front_runner_ && !front_runner_->start(error)) return false;
    if (cfg_.log) {
      std::fprintf(stderr, "kite engine: %s/%s on %s:%u, %zu server thread(s), idle %s\n",
                   transport::to_string(cfg_.transport), to_string(cfg_.model), cfg_.bind_address.c_str(), port_,
                   runners_.size(), engine::to_string(cfg_.idle.kind));
    }
    return true;
  }

  std::uint16_t port() const noexcept override { return port_; }

  void stop() noexcept override {
    // A listener shut down wakes the front door's poll (POLLHUP) at once.
    if (front_runner_ && !listeners_.empty()) ::shutdown(listeners_[0], SHUT_RD);
    if (front_runner_) front_runner_->stop();
    for (auto& r : runners_) r->stop();
    for (int fd : listeners_) ::close(fd);
    listeners_.clear();
  }

  std::vector<ThreadInfo> threads() const override {
    std::vector<ThreadInfo> out;
    if (front_runner_) out.push_back(front_runner_->info());
    for (auto& r : runners_) out.push_back(r->info());
    return out;
  }

  EngineStats stats() const override {
    EngineStats st = collect(shared_);
    for (auto& a : agents_) st.per_thread_accepted.push_back(static_cast<int>(a->accepted()));
    for (auto& r : runners_) st.per_thread_load.push_back(r->load());
    return st;
  }

  std::string socket_report() const override {
    std::lock_guard<std::mutex> g(shared_.factory_mu);
    return shared_.option_report;
  }

  void wake_timers() noexcept override { shared_.timer_wake.fetch_add(1, std::memory_order_release); }

 private:
  mutable Shared shared_;
  EngineConfig cfg_;
  std::uint16_t port_ = 0;
  std::vector<int> listeners_;
  std::vector<std::unique_ptr<SpscQueue<int>>> queues_;
  std::vector<std::unique_ptr<std::atomic<int>>> loads_;
  std::vector<std::unique_ptr<SessionAgent>> agents_;
  std::vector<std::unique_ptr<AgentRunner>> runners_;
  std::unique_ptr<FrontDoor> front_;
  std::unique_ptr<AgentRunner> front_runner_;
  std::shared_ptr<transport::TlsContext> tls_;
};

class InitiatorImpl final : public Initiator {
 public:
  InitiatorImpl(ProtocolFactory& f, const InitiatorConfig& c) : shared_(f), cfg_(c) {
    shared_.policy = c.send_full;
    shared_.send_full_limit_ns = static_cast<std::int64_t>(c.send_full_limit_ms) * 1000000;
    shared_.log = false;
  }
  ~InitiatorImpl() override { stop(); }

  bool init(std::string& error) {
    if (!transport::compiled_in(cfg_.transport)) {
      error = std::string(transport::to_string(cfg_.transport)) + ": not built into this binary";
      return false;
    }
    if (cfg_.transport == Kind::tcpdirect) {
      error = "tcpdirect: initiator sessions are not implemented (zft_connect is not wired in)";
      return false;
    }
    if (std::string bad = check_cores(cfg_.cores); !bad.empty()) {
      error = bad;
      return false;
    }
    const int sessions = std::max(1, cfg_.sessions);
    const int threads = std::clamp(cfg_.threads, 1, sessions);
    const transport::DriverConfig dc = driver_config(cfg_);
    std::shared_ptr<transport::TlsContext> tls;
    if (cfg_.transport == Kind::tls) {
      tls = transport::TlsContext::make(cfg_.tls, transport::TlsRole::client, cfg_.host, error);
      if (tls == nullptr) {
        error = "tls: " + error;
        return false;
      }
    }
    for (int t = 0; t < threads; ++t) {
      const int mine = sessions / threads + (t < sessions % threads ? 1 : 0);
      queues_.push_back(std::make_unique<SpscQueue<int>>(static_cast<std::size_t>(mine)));
      AgentSetup setup;
      setup.name = "kite-init-" + std::to_string(t);
      setup.max_connections = mine;
      setup.recv_buffer = cfg_.recv_buffer;
      setup.send_buffer = cfg_.send_buffer;
      setup.timer_interval_ns = static_cast<std::int64_t>(cfg_.timer_interval_us) * 1000;
      setup.inbox = queues_.back().get();
      auto driver = make_driver(cfg_.transport, mine == 1, dc, cfg_.host, 0, tls, error);
      if (!driver) return false;
      agents_.push_back(std::make_unique<SessionAgent>(shared_, std::move(driver), setup));
    }
    // Connect at set-up, deal the sockets round-robin, then start the threads.
    for (int s = 0; s < sessions && cfg_.connect_at_start; ++s) {
      auto c = transport::connect_tcp(cfg_.host, cfg_.port, cfg_.connect_timeout_ms);
      if (c.fd < 0) {
        error = c.error;
        return false;
      }
      queues_[static_cast<std::size_t>(s % threads)]->try_push(c.fd);
    }
    for (int t = 0; t < threads; ++t) {
      std::vector<int> cores;
      if (!cfg_.cores.empty()) cores.push_back(cfg_.cores[static_cast<std::size_t>(t) % cfg_.cores.size()]);
      runners_.push_back(std::make_unique<AgentRunner>(*agents_[static_cast<std::size_t>(t)],
                                                       "kite-init-" + std::to_string(t), cores, cfg_.idle));
      runners_.back()->set_hooks(cfg_.thread_hooks);
    }
    pending_ = cfg_.connect_at_start ? sessions : 0;
    for (auto& r : runners_) {
      if (!r->start(error)) return false;
    }
    return true;
  }

  void stop() noexcept override {
    for (auto& r : runners_) r->stop();
  }
  bool hand(int thread, int fd) noexcept override {
    if (thread < 0 || static_cast<std::size_t>(thread) >= queues_.size()) return false;
    return queues_[static_cast<std::size_t>(thread)]->try_push(fd);
  }
  int active() const noexcept override { return shared_.active.load(); }
  bool wait_closed(int timeout_ms) noexcept override {
    const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(timeout_ms) * 1000000;
    while (monotonic_ns() < deadline) {
      if (shared_.accepted.load() + shared_.refused.load() >= static_cast<std::uint64_t>(pending_) &&
          shared_.active.load() == 0) {
        return true;
      }
      timespec ts{0, 1000000};
      ::nanosleep(&ts, nullptr);
    }
    return false;
  }
  std::vector<ThreadInfo> threads() const override {
    std::vector<ThreadInfo> out;
    for (auto& r : runners_) out.push_back(r->info());
    return out;
  }
  EngineStats stats() const override {
    EngineStats st = collect(shared_);
    for (auto& a : agents_) st.per_thread_accepted.push_back(static_cast<int>(a->accepted()));
    for (auto& r : runners_) st.per_thread_load.push_back(r->load());
    return st;
  }

 private:
  Shared shared_;
  InitiatorConfig cfg_;
  int pending_ = 0;
  std::vector<std::unique_ptr<SpscQueue<int>>> queues_;
  std::vector<std::unique_ptr<SessionAgent>> agents_;
  std::vector<std::unique_ptr<AgentRunner>> runners_;
};

}  // namespace
}  // namespace detail

std::unique_ptr<Engine> Engine::start(const EngineConfig& config, ProtocolFactory& factory, std::string& error) {
  auto e = std::make_unique<detail::EngineImpl>(factory, config);
  if (!e->init(error)) return nullptr;
  return e;
}

std::unique_ptr<Initiator> Initiator::start(const InitiatorConfig& config, ProtocolFactory& factory,
                                            std::string& error) {
  auto i = std::make_unique<detail::InitiatorImpl>(factory, config);
  if (!i->init(error)) return nullptr;
  return i;
}

}  // namespace kite::engine
