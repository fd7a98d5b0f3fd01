#include "session_agent.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string_view>

namespace kite::engine::detail {

using transport::Io;

namespace {
void atomic_max(std::atomic<std::uint64_t>& a, std::uint64_t v) noexcept {
  std::uint64_t cur = a.load(std::memory_order_relaxed);
  while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {}
}

// The remote address of `fd` as text, or "" when it is not a TCP socket the
// kernel knows (a vendor stack's handle).
void peer_address(int fd, char (&out)[INET6_ADDRSTRLEN]) noexcept {
  out[0] = 0;
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
  if (a.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&a)->sin_addr, out, sizeof out);
  } else if (a.ss_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&v6))
      ::inet_ntop(AF_INET, v6.s6_addr + 12, out, sizeof out);
    else
      ::inet_ntop(AF_INET6, &v6, out, sizeof out);
  }
}
}  // namespace

char* SessionAgent::Slot::claim(std::size_t min) noexcept {
  char* p = conn.tx.claim(min);
  if (p == nullptr) {
    // Back-pressure: remember since when, so the slow-consumer limit can act.
    if (full_since == 0) {
      full_since = owner->now_ ? owner->now_ : 1;
      sent_mark = conn.bytes_sent;
    }
    owner->shared_.send_full_events.fetch_add(1, std::memory_order_relaxed);
  }
  return p;
}

void SessionAgent::Slot::close(const char* reason, bool flush) noexcept {
  if (closing) return;
  closing = true;
  close_flush = flush;
  close_reason = reason;
  close_since = owner->now_;
  close_mark = conn.bytes_sent;
}

SessionAgent::SessionAgent(Shared& shared, std::unique_ptr<transport::Driver> driver, const AgentSetup& setup)
    : shared_(shared), driver_(std::move(driver)), setup_(setup) {
  const int n = setup.max_connections > 0 ? setup.max_connections : 1;
  slots_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto s = std::make_unique<Slot>();
    s->owner = this;
    s->conn.slot = static_cast<std::uint32_t>(i);
    // Connection i's buffers start 512 * i bytes (mod 4 KiB) into their
    // pages, rx and tx half a colour apart: 8 connections cover every L1 set.
    const std::size_t color = (static_cast<std::size_t>(i) * 512) % 4096;
    s->conn.rx.reset_capacity(setup.recv_buffer, color);
    s->conn.tx.reset_capacity(setup.send_buffer, (color + 256) % 4096);
    slots_.push_back(std::move(s));
  }
  for (int i = n - 1; i >= 0; --i) free_.push_back(slots_[static_cast<std::size_t>(i)].get());
  const std::string_view kind = driver_->name();
  if ((kind == "epoll" || kind == "direct") && setup.send_buffer != 0) {
    stage_buf_.reset(new char[setup.send_buffer + 64]);
    const auto at = reinterpret_cast<std::uintptr_t>(stage_buf_.get());
    stage_ = stage_buf_.get() + ((64 - (at & 63)) & 63);
  }
  active_.reserve(static_cast<std::size_t>(n));
  zombies_.reserve(static_cast<std::size_t>(n));
}

SessionAgent::~SessionAgent() = default;

[[gnu::hot]] int SessionAgent::do_work(std::int64_t now_ns) noexcept {
  now_ = now_ns;
  int work = 0;
  if (setup_.inbox) work += drain_inbox();
  if (setup_.own_listener >= 0) work += accept_own();
  work += driver_->poll(*this, 0);
  work += service();
  if (!zombies_.empty()) reap();
  return work;
}

int SessionAgent::block(std::int64_t now_ns, int timeout_us) noexcept {
  now_ = now_ns;
  int work = 0;
  if (setup_.inbox) work += drain_inbox();
  if (setup_.own_listener >= 0) {
    if (active_.empty()) {
      pollfd p{setup_.own_listener, POLLIN, 0};
      ::poll(&p, 1, (timeout_us + 999) / 1000);
      now_ = monotonic_ns();
      return accept_own() + service();
    }
    work += accept_own();
  }
  if (work == 0) {
    work += driver_->poll(*this, timeout_us);
    now_ = monotonic_ns();
  } else {
    work += driver_->poll(*this, 0);
  }
  work += service();
  if (!zombies_.empty()) reap();
  return work;
}

void SessionAgent::on_close() noexcept {
  now_ = monotonic_ns();
  while (!active_.empty()) finish(*active_.back(), "engine stopped");
  // Let outstanding asynchronous operations complete (bounded).
  for (int i = 0; i < 100 && !zombies_.empty(); ++i) {
    driver_->poll(*this, 1000);
    reap();
  }
  if (setup_.inbox) {
    int fd;
    while (setup_.inbox->try_pop(fd)) {
      driver_->discard(fd);
      if (setup_.load) setup_.load->fetch_sub(1, std::memory_order_release);
    }
  }
}

int SessionAgent::drain_inbox() noexcept {
  int n = 0;
  int fd;
  while (n < 8 && setup_.inbox->try_pop(fd)) {
    adopt(fd);
    ++n;
  }
  return n;
}

int SessionAgent::accept_own() noexcept {
  if (free_.empty() || !active_.empty()) return 0;  // single: one connection at a time
  const int fd = transport::accept_nonblocking(setup_.own_listener);
  if (fd < 0) return 0;
  adopt(fd);
  return 1;
}

void SessionAgent::on_accepted(int fd) noexcept { adopt(fd); }

void SessionAgent::adopt(int fd) noexcept {
  const int id = shared_.next_id.fetch_add(1, std::memory_order_relaxed);
  char peer[INET6_ADDRSTRLEN];
  peer_address(fd, peer);
  if (free_.empty()) {
    driver_->discard(fd);
    shared_.refused.fetch_add(1, std::memory_order_relaxed);
    if (setup_.load) setup_.load->fetch_sub(1, std::memory_order_release);
    if (shared_.log)
      std::fprintf(stderr, "%s: refused a connection: all %d connection slots in use\n", setup_.name.c_str(),
                   setup_.max_connections);
    std::lock_guard<std::mutex> g(shared_.factory_mu);
    shared_.factory.refused(id, peer, "every connection slot of its thread in use");
    return;
  }
  Slot& s = *free_.back();
  Protocol* proto;
  {
    std::lock_guard<std::mutex> g(shared_.factory_mu);
    proto = shared_.factory.open_from(id, peer);
  }
  if (proto == nullptr) {
    driver_->discard(fd);
    shared_.refused.fetch_add(1, std::memory_order_relaxed);
    if (setup_.load) setup_.load->fetch_sub(1, std::memory_order_release);
    return;
  }
  free_.pop_back();
  s.conn.fd = fd;
  s.conn.gen++;
  s.conn.rx.clear();
  s.conn.tx.clear();
  s.conn.bytes_sent = 0;
  s.conn.write_blocked = false;
  s.conn.send_in_flight = false;
  s.conn.recv_paused = false;
  s.proto = proto;
  s.id = id;
  s.open = true;
  s.closing = false;
  s.close_flush = true;
  s.close_reason = nullptr;
  s.full_since = 0;
  s.sent_mark = s.retry_mark = 0;
  s.timer_due = 0;
  std::string error;
  if (!driver_->add(s.conn, error)) {
    if (shared_.log) std::fprintf(stderr, "%s: %s\n", setup_.name.c_str(), error.c_str());
    finish(s, "transport refused the connection");
    return;
  }
  {
    std::lock_guard<std::mutex> g(shared_.factory_mu);
    shared_.option_report = driver_->last_options().describe();
  }
  active_.push_back(&s);
  accepted_.fetch_add(1, std::memory_order_relaxed);
  shared_.accepted.fetch_add(1, std::memory_order_relaxed);
  shared_.active.fetch_add(1, std::memory_order_relaxed);
  proto->on_connected(s, now_);
  if (!s.conn.tx.empty()) flush(s);
}

[[gnu::hot]] void SessionAgent::on_data(transport::Conn& c, const char* p, std::size_t n) noexcept {
  Slot& s = *slots_[c.slot];
  if (!s.open) return;
  if (s.closing) {  // input after close() is dropped; the connection is going
    if (p == nullptr) c.rx.clear();
    return;
  }
  deliver(s, p, n);
}

[[gnu::hot]] void SessionAgent::deliver(Slot& s, const char* p, std::size_t n) noexcept {
  transport::SendBuffer& tx = s.conn.tx;
  if (stage_ != nullptr && tx.empty() && !tx.locked() && !s.conn.write_blocked) tx.lend(stage_);
  deliver_bytes(s, p, n);
  tx.reclaim();
}

[[gnu::hot]] void SessionAgent::deliver_bytes(Slot& s, const char* p, std::size_t n) noexcept {
  transport::RecvBuffer& rx = s.conn.rx;
  if (p != nullptr && rx.empty()) {
    // Bytes outside rx (io_uring provided buffer): whole frames are consumed
    // where they lie; only the partial tail is copied.
    const std::size_t used = s.proto->on_data(p, n, now_);
    if (used < n && !rx.append(p + used, n - used)) {
      finish(s, "receive buffer overflow");
      return;
    }
  } else {
    if (p != nullptr && !rx.append(p, n)) {
      finish(s, "receive buffer overflow");
      return;
    }
    const std::size_t used = s.proto->on_data(rx.data(), rx.size(), now_);
    rx.consume(used);
    if (used == 0 && rx.size() == rx.capacity() && s.conn.tx.empty()) {
      // A frame larger than the buffer can never complete.
      s.close("frame larger than the receive buffer", false);
    }
  }
  // What the bytes did may bring a timer forward (a gap opened, a logout
  // sent), never put it off: that is for the next turn to say. A turn due
  // already cannot come sooner (the answer is never negative): no question.
  if (s.timer_due > now_) {
    const std::int64_t due = now_ + s.proto->timer_quiet_ns();
    if (due < s.timer_due) s.timer_due = due;
  }
  if (!rx.empty()) s.retry_mark = s.conn.bytes_sent;
  if (!s.conn.tx.empty() && !s.conn.write_blocked && !s.conn.send_in_flight) flush(s);
}

[[gnu::hot]] void SessionAgent::flush(Slot& s) noexcept {
  if (driver_->flush(s.conn) == Io::error) s.close("send failed", false);
}

void SessionAgent::on_closed(transport::Conn& c, Io why, int) noexcept {
  Slot& s = *slots_[c.slot];
  if (!s.open) return;
  finish(s, why == Io::closed ? "peer closed" : "connection error");
}

[[gnu::hot]] int SessionAgent::service() noexcept {
  int work = 0;
  // Timers are milliseconds to seconds apart: giving every protocol a turn on
  // every spin (a virtual call and a clock read per connection) was most of an
  // idle cycle's cost, so turns come at most once per timer interval.
  // A pass that found work (resends, an overflow draining) asks for the
  // next cycle's turn too.
  // A connection whose protocol said when its timers are next due
  // (Protocol::timer_quiet_ns) is skipped until then, unless the engine was
  // woken (Engine::wake_timers).
  const bool timers = timer_work_ || now_ - last_timer_ns_ >= setup_.timer_interval_ns;
  bool every = false;
  if (timers) {
    last_timer_ns_ = now_;
    timer_work_ = false;
    const std::uint32_t wake = shared_.timer_wake.load(std::memory_order_acquire);
    every = wake != wake_seen_;
    wake_seen_ = wake;
  }
  for (std::size_t i = active_.size(); i-- > 0;) {
    Slot& s = *active_[i];
    if (timers && (every || now_ >= s.timer_due)) {
      const int w = s.proto->on_timer(now_);
      if (w > 0) {
        timer_work_ = true;
        work += w;
      }
      s.timer_due = now_ + s.proto->timer_quiet_ns();
    }
    transport::Conn& c = s.conn;
    if (!c.tx.empty() && !c.write_blocked && !c.send_in_flight) flush(s);
    if (s.full_since != 0) {
      if (c.bytes_sent != s.sent_mark) {
        s.full_since = 0;  // the peer drained something: not stuck
      } else if (shared_.policy == SendFullPolicy::disconnect && now_ - s.full_since >= shared_.send_full_limit_ns) {
        shared_.slow_consumers.fetch_add(1, std::memory_order_relaxed);
        if (shared_.log) {
          std::fprintf(stderr, "%s: connection %d: slow consumer, send buffer full for %lld ms: disconnecting\n",
                       setup_.name.c_str(), s.id, static_cast<long long>(shared_.send_full_limit_ns / 1000000));
        }
        finish(s, "slow consumer");
        ++work;
        continue;
      }
    }
    // Bytes left in rx by a back-pressured protocol are offered again once
    // the send side has moved.
    if (!c.rx.empty() && !s.closing && c.bytes_sent != s.retry_mark) {
      s.retry_mark = c.bytes_sent;
      deliver(s, nullptr, 0);
    }
    if (c.recv_paused && s.open) driver_->resume(c);
    if (s.closing) {
      // The flush before a close is bounded: a peer that has taken nothing
      // for send_full_limit_ms (a host gone, its link down) is not waited
      // for, whatever the send-full policy.
      bool done = !s.close_flush || c.tx.empty();
      if (!done && c.bytes_sent != s.close_mark) {
        s.close_mark = c.bytes_sent;
        s.close_since = now_;
      }
      if (!done && now_ - s.close_since >= shared_.send_full_limit_ns) done = true;
      if (done) {
        finish(s, s.close_reason ? s.close_reason : "closed");
        ++work;
      }
    }
  }
  return work;
}

void SessionAgent::finish(Slot& s, const char* reason) noexcept {
  if (!s.open) return;
  s.open = false;
  atomic_max(shared_.tx_high_water, s.conn.tx.high_water());
  shared_.rx_compactions.fetch_add(s.conn.rx.compactions(), std::memory_order_relaxed);
  Protocol* proto = s.proto;
  const bool was_active = std::erase(active_, &s) > 0;
  if (proto != nullptr) proto->on_disconnected(reason, now_);
  driver_->remove(s.conn);
  {
    std::lock_guard<std::mutex> g(shared_.factory_mu);
    if (proto != nullptr) shared_.factory.release(proto);
  }
  s.proto = nullptr;
  if (was_active) {
    shared_.active.fetch_sub(1, std::memory_order_relaxed);
    shared_.closed.fetch_add(1, std::memory_order_relaxed);
  }
  if (setup_.load) setup_.load->fetch_sub(1, std::memory_order_release);
  if (driver_->idle(s.conn)) {
    free_.push_back(&s);
  } else {
    zombies_.push_back(&s);
  }
}

void SessionAgent::reap() noexcept {
  for (std::size_t i = zombies_.size(); i-- > 0;) {
    if (driver_->idle(zombies_[i]->conn)) {
      free_.push_back(zombies_[i]);
      zombies_[i] = zombies_.back();
      zombies_.pop_back();
    }
  }
}

}  // namespace kite::engine::detail
