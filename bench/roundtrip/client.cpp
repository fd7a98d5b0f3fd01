#include "client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kite/codec/codec.hpp"
#include "messages.hpp"

namespace kite::bench {

namespace {
constexpr std::size_t kRxSize = 256 * 1024;
constexpr std::size_t kTxSize = 512 * 1024;
constexpr std::size_t kMaxMessage = 1024;
constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::uint32_t kBacklog = 1u << 16;  // per session; beyond it due orders are dropped (errors)

struct InFlight {
  std::int64_t slot_ns;
  std::int64_t send_ns;
  std::uint32_t phase;
};
}  // namespace

struct Client::Scratch {
  codec::FieldIndex index{128};
  codec::Header header;
  std::vector<epoll_event> events;
};

struct Client::Session {
  Session(unsigned comp_index, unsigned cap)
      : header(codec::HeaderFields{"FIX.4.4", client_comp_id(comp_index), std::string(kServerCompID), {}, {}, {}, {}}),
        writer(header),
        rx(new char[kRxSize]),
        tx(new char[kTxSize]),
        ring(new InFlight[cap]),
        ring_cap(cap),
        backlog(new std::int64_t[kBacklog]) {}
  ~Session() {
    if (fd >= 0) ::close(fd);
  }
  codec::HeaderTemplate header;
  codec::MessageWriter writer;
  int fd = -1;
  std::unique_ptr<char[]> rx;
  std::size_t rx_len = 0;
  std::unique_ptr<char[]> tx;
  std::size_t tx_head = 0, tx_tail = 0;  // unsent bytes are [head, tail)
  std::unique_ptr<InFlight[]> ring;      // orders awaiting their reply, oldest first
  std::uint32_t ring_cap, ring_head = 0, ring_size = 0;
  std::unique_ptr<std::int64_t[]> backlog;  // open loop: slots due but held back by the cap
  std::uint32_t bl_head = 0, bl_size = 0;
  std::uint64_t seq = 1;
  std::uint64_t next_clordid = 1;
  std::int64_t next_send_ns = 0;  // closed loop: when the next order is due (INT64_MAX: waiting)
  std::int64_t last_send_ns = 0;
  bool logged_on = false;
  bool logged_out = false;
  bool closed = false;
};

Client::Client(const ClientOptions& o, const Clock& clock) : o_(o), clock_(clock), scratch_(new Scratch) {}

Client::~Client() {
  sessions_.clear();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

namespace {

int connect_one(const ClientOptions& o, std::int64_t deadline_ns, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  if (const int rc = getaddrinfo(o.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = "cannot resolve " + o.host + ": " + gai_strerror(rc);
    return -1;
  }
  const sockaddr_in addr = *reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  freeaddrinfo(res);
  // Retry while refused: the server may still be starting.
  while (true) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::string("socket: ") + std::strerror(errno);
      return -1;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (o.busy_poll_usecs > 0)
        ::setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o.busy_poll_usecs, sizeof o.busy_poll_usecs);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      return fd;
    }
    const int err = errno;
    ::close(fd);
    if ((err != ECONNREFUSED && err != EINTR) || Clock::monotonic_ns() > deadline_ns) {
      error = "cannot connect to " + o.host + ":" + port + ": " + std::strerror(err);
      return -1;
    }
    ::usleep(20'000);
  }
}

}  // namespace

bool Client::connect(std::string& error) {
  if (o_.sessions == 0 || o_.runs == 0 || o_.duration_s <= 0 || (o_.open_loop && o_.rate <= 0)) {
    error = "bad options: sessions, runs, duration and (open loop) rate must be positive";
    return false;
  }
  const unsigned cap = o_.open_loop ? std::max(1u, o_.max_in_flight) : 1u;
  phases_.resize(o_.runs + 1);
  scratch_->events.resize(o_.sessions);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  const std::int64_t deadline = Clock::monotonic_ns() + static_cast<std::int64_t>(o_.connect_timeout_s * 1e9);
  for (unsigned k = 0; k < o_.sessions; ++k) {
    auto s = std::make_unique<Session>(o_.first_session + k, cap);
    s->fd = connect_one(o_, deadline, error);
    if (s->fd < 0) return false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = k;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, s->fd, &ev);
    s->tx_tail = write_logon(s->writer, s->tx.get(), kTxSize, s->seq++, codec::utc_now_ns());
    sessions_.push_back(std::move(s));
  }
  // Logon every session, then wait for every Logon answer.
  unsigned pending = o_.sessions;
  for (auto& s : sessions_) flush(*s);
  while (pending > 0) {
    const std::int64_t now = Clock::monotonic_ns();
    if (now > deadline) {
      error = "logon timed out: " + std::to_string(pending) + " of " + std::to_string(o_.sessions) +
              " sessions not logged on";
      return false;
    }
    const int n = ::epoll_wait(epoll_fd_, scratch_->events.data(), static_cast<int>(o_.sessions), 50);
    for (int i = 0; i < n; ++i) {
      Session& s = *sessions_[scratch_->events[static_cast<std::size_t>(i)].data.u32];
      const bool was = s.logged_on;
      if (!read(s, clock_.now_ns(), error)) return false;
      if (!was && s.logged_on) --pending;
    }
    for (auto& s : sessions_) flush(*s);
  }
  return true;
}

bool Client::flush(Session& s) noexcept {
  while (s.tx_head < s.tx_tail) {
    const ssize_t n = ::send(s.fd, s.tx.get() + s.tx_head, s.tx_tail - s.tx_head, MSG_NOSIGNAL);
    if (n > 0) {
      s.tx_head += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    s.closed = true;
    return false;
  }
  if (s.tx_head == s.tx_tail) s.tx_head = s.tx_tail = 0;
  return true;
}

bool Client::send_order(Session& s, std::int64_t slot_ns, std::uint32_t phase) noexcept {
  if (s.tx_tail + kMaxMessage > kTxSize) {
    // The socket has not taken earlier bytes: compact, and if still full the
    // order cannot be sent now (counted like a cap hit).
    std::memmove(s.tx.get(), s.tx.get() + s.tx_head, s.tx_tail - s.tx_head);
    s.tx_tail -= s.tx_head;
    s.tx_head = 0;
    if (s.tx_tail + kMaxMessage > kTxSize) return false;
  }
  const std::size_t n =
      write_order(s.writer, s.tx.get() + s.tx_tail, kMaxMessage, s.seq, codec::utc_now_ns(), s.next_clordid);
  if (n == 0) return false;
  ++s.seq;
  ++s.next_clordid;
  s.tx_tail += n;
  const std::int64_t send_ns = clock_.now_ns();
  InFlight& f = s.ring[(s.ring_head + s.ring_size) % s.ring_cap];
  f = {slot_ns, send_ns, phase};
  ++s.ring_size;
  ++in_flight_;
  ++phases_[phase].sent;
  ++sent_total_;
  s.last_send_ns = send_ns;
  flush(s);
  return true;
}

bool Client::backlog_left() const noexcept {
  for (const auto& s : sessions_)
    if (s->bl_size > 0) return true;
  return false;
}

std::uint32_t Client::phase_of(std::int64_t t) const noexcept {
  if (t < warm_end_ns_ || run_ns_ == 0) return 0;  // run_ns_ is 0 until measure(): connect() counts into the warm-up
  const std::int64_t r = 1 + (t - warm_end_ns_) / run_ns_;
  return static_cast<std::uint32_t>(std::min<std::int64_t>(r, o_.runs));
}

bool Client::run_complete(std::uint32_t run, std::int64_t now) const noexcept {
  if (now < warm_end_ns_ + run_ns_ * static_cast<std::int64_t>(run)) return false;
  // Rings and backlogs are oldest first: only their heads can still belong to the run.
  for (const auto& sp : sessions_) {
    const Session& s = *sp;
    if (s.ring_size > 0 && s.ring[s.ring_head].phase <= run) return false;
    if (s.bl_size > 0 && phase_of(s.backlog[s.bl_head]) <= run) return false;
  }
  return true;
}

void Client::note_in_flight(std::int64_t now) noexcept {
  Phase& p = phases_[phase_of(now)];
  if (in_flight_ > p.max_in_flight) p.max_in_flight = in_flight_;
}

bool Client::read(Session& s, std::int64_t now, std::string& error) noexcept {
  while (true) {
    const ssize_t n = ::recv(s.fd, s.rx.get() + s.rx_len, kRxSize - s.rx_len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      error = std::string("recv: ") + std::strerror(errno);
      s.closed = true;
      return false;
    }
    if (n == 0) {
      s.closed = true;
      if (s.logged_out) return true;
      error = "the server closed a session";
      return false;
    }
    // Replies arrived: one timestamp for all the bytes of this recv.
    if (measuring_) now = clock_.now_ns();
    ++reads_with_data_;
    s.rx_len += static_cast<std::size_t>(n);
    std::size_t at = 0;
    while (at < s.rx_len) {
      const codec::FrameResult fr = codec::frame(s.rx.get() + at, s.rx_len - at);
      if (fr.status == codec::FrameStatus::incomplete) break;
      if (fr.status == codec::FrameStatus::invalid) {
        ++phases_[phase_of(now)].errors;
        at += fr.size;
        continue;
      }
      if (!on_message(s, s.rx.get() + at, fr, now, error)) return false;
      at += fr.size;
    }
    if (at > 0) {
      std::memmove(s.rx.get(), s.rx.get() + at, s.rx_len - at);
      s.rx_len -= at;
    }
    if (s.rx_len == kRxSize) {
      error = "receive buffer full without a complete frame";
      return false;
    }
    if (static_cast<std::size_t>(n) < kRxSize / 2) return true;  // likely drained; spin again later
  }
}

void Client::on_execution_report(Session& s, bool accepted, std::int64_t now) noexcept {
  if (s.ring_size == 0) {
    ++phases_[phase_of(now)].errors;
    return;
  }
  const InFlight f = s.ring[s.ring_head];
  s.ring_head = (s.ring_head + 1) % s.ring_cap;
  --s.ring_size;
  --in_flight_;
  Phase& p = phases_[f.phase];
  if (!accepted) {
    ++p.errors;
  } else {
    p.service.record(now - f.send_ns);
    if (o_.open_loop) p.response.record(now - f.slot_ns);
  }
  if (!o_.open_loop) {
    s.next_send_ns = o_.think_us > 0 ? now + static_cast<std::int64_t>(o_.think_us * 1000) : now;
  }
}

bool Client::on_message(Session& s, const char* frame, const codec::FrameResult& fr, std::int64_t now,
                        std::string& error) noexcept {
  // The hot path: the frame is checked (BodyLength, CheckSum); an
  // ExecutionReport needs only its MsgType, the body's first field, and its
  // ExecType. Everything else goes through the full index and header.
  const char* body = frame + fr.body_begin;
  const std::size_t body_len = fr.body_end - fr.body_begin;
  constexpr std::string_view kExecReport{"35=8\x01", 5};
  constexpr std::string_view kExecType{"\x01" "150=", 5};
  if (body_len > kExecReport.size() && std::string_view(body, kExecReport.size()) == kExecReport) {
    const std::string_view rest(body + kExecReport.size() - 1, body_len - kExecReport.size() + 1);
    const std::size_t at = rest.find(kExecType);
    const std::size_t v = at == std::string_view::npos ? rest.size() : at + kExecType.size();
    on_execution_report(s, v + 1 < rest.size() && rest[v] == '0' && rest[v + 1] == codec::kSoh, now);
    return true;
  }
  codec::FieldIndex& ix = scratch_->index;
  if (!ix.build(frame, fr) || !codec::read_header(ix, scratch_->header)) {
    ++phases_[phase_of(now)].errors;
    return true;
  }
  const std::string_view type = scratch_->header.msg_type;
  if (type.size() == 1) {
    switch (type[0]) {
      case '8': {  // not reached for a well-formed body (MsgType first): kept for the odd one
        std::string_view exec_type;
        on_execution_report(s, ix.get(codec::tag::ExecType, exec_type) == codec::Get::ok && exec_type == "0", now);
        return true;
      }
      case 'A':
        s.logged_on = true;
        return true;
      case '0':
        return true;
      case '1': {  // TestRequest: answer with a Heartbeat carrying its TestReqID
        std::string_view id;
        ix.get(codec::tag::TestReqID, id);
        if (s.tx_tail + kMaxMessage <= kTxSize) {
          s.tx_tail += write_heartbeat(s.writer, s.tx.get() + s.tx_tail, kMaxMessage, s.seq++, codec::utc_now_ns(), id);
          s.last_send_ns = now;
        }
        return true;
      }
      case '5':
        s.logged_out = true;
        if (measuring_) {
          error = "server logged out a session during the measurement";
          return false;
        }
        if (!s.logged_on) {
          std::string_view text;
          ix.get(codec::tag::Text, text);
          error = "logon refused: " + std::string(text);
          return false;
        }
        return true;
      case '3':
      case 'j':
        // A reject of an order still counts as its (failed) answer.
        if (s.ring_size > 0 && s.logged_on) {
          const InFlight f = s.ring[s.ring_head];
          s.ring_head = (s.ring_head + 1) % s.ring_cap;
          --s.ring_size;
          --in_flight_;
          ++phases_[f.phase].errors;
          if (!o_.open_loop) s.next_send_ns = now;
        }
        return true;
      default:
        break;
    }
  }
  ++phases_[phase_of(now)].errors;
  return true;
}

bool Client::measure(std::string& error) {
  const std::size_t n_sessions = sessions_.size();
  std::int64_t now = clock_.now_ns();
  start_ns_ = now;
  warm_end_ns_ = now + static_cast<std::int64_t>(o_.warmup_s * 1e9);
  run_ns_ = std::max<std::int64_t>(1, static_cast<std::int64_t>(o_.duration_s * 1e9));
  const std::int64_t end_ns = warm_end_ns_ + run_ns_ * o_.runs;
  const double interval = o_.open_loop ? 1e9 / o_.rate : 0;
  std::uint64_t slot = 0;
  std::int64_t next_slot = start_ns_;
  for (auto& s : sessions_) s->next_send_ns = start_ns_;
  measuring_ = true;
  bool stopping = false;
  std::int64_t drain_deadline = 0;
  std::int64_t next_heartbeat_check = now + kSecond;
  const bool direct = n_sessions == 1 && o_.spin;
  bool ok = true;
  std::uint32_t reported = 0;  // runs handed to run_done_
  // The client's own load: each pass's time goes to the phase it started in,
  // as busy when the pass sent or received something, else as idle.
  std::int64_t pass_start = 0;
  std::uint32_t pass_phase = 0;
  bool pass_counted = false, pass_busy = false;

  while (ok) {
    now = clock_.now_ns();
    if (pass_counted) {
      ClientLoad& load = phases_[pass_phase].load;
      (pass_busy ? load.busy_s : load.idle_s) += static_cast<double>(now - pass_start) * 1e-9;
    }
    if (!stopping && now >= end_ns) {
      stopping = true;
      drain_deadline = now + static_cast<std::int64_t>(o_.drain_timeout_s * 1e9);
    }
    if (stopping && ((in_flight_ == 0 && !backlog_left()) || now >= drain_deadline)) break;
    pass_start = now;
    pass_phase = phase_of(now);
    pass_counted = !stopping;
    pass_busy = false;
    const std::uint64_t sent_before = sent_total_;

    if (!stopping) {
      if (o_.open_loop) {
        // Every due slot is queued on its session and sent at once unless
        // the in-flight cap holds it back; a held order keeps its slot, so
        // its response time includes the wait (no coordinated omission).
        while (next_slot <= now && next_slot < end_ns) {
          Session& s = *sessions_[slot % n_sessions];
          if (s.bl_size == kBacklog) {
            ++phases_[phase_of(next_slot)].errors;
          } else {
            s.backlog[(s.bl_head + s.bl_size) % kBacklog] = next_slot;
            ++s.bl_size;
            if (s.ring_size + s.bl_size > s.ring_cap) ++phases_[phase_of(next_slot)].cap_hits;
          }
          ++slot;
          next_slot = start_ns_ + static_cast<std::int64_t>(static_cast<double>(slot) * interval);
        }
      } else {
        for (auto& sp : sessions_) {
          Session& s = *sp;
          if (s.ring_size == 0 && s.next_send_ns <= now) {
            send_order(s, now, phase_of(now));
            s.next_send_ns = INT64_MAX;
          }
        }
        note_in_flight(now);
      }
    }

    if (o_.open_loop)
      for (auto& sp : sessions_) {
        Session& s = *sp;
        while (s.bl_size > 0 && s.ring_size < s.ring_cap) {
          const std::int64_t due = s.backlog[s.bl_head];
          if (!send_order(s, due, phase_of(due))) break;  // send buffer full: retry next cycle
          s.bl_head = (s.bl_head + 1) % kBacklog;
          --s.bl_size;
        }
      }
    if (o_.open_loop) note_in_flight(now);
    pass_busy = sent_total_ != sent_before;
    bool polled_something = false;

    if (direct) {
      const std::uint64_t reads_before = reads_with_data_;
      if (!read(*sessions_[0], now, error)) ok = false;
      polled_something = reads_with_data_ != reads_before;
    } else {
      // Spinning polls with a zero timeout; blocking sleeps in the kernel
      // until a reply or the next due event (an order, a think time's end,
      // the end of the measurement), at most 10 ms so time checks stay fresh.
      timespec timeout{0, 0};
      if (!o_.spin) {
        std::int64_t wake = stopping ? drain_deadline : end_ns;
        if (o_.open_loop && !stopping) wake = std::min(wake, next_slot);
        if (!o_.open_loop && !stopping)
          for (auto& sp : sessions_)
            if (sp->ring_size == 0) wake = std::min(wake, sp->next_send_ns);
        timeout.tv_nsec = static_cast<long>(std::clamp<std::int64_t>(wake - now, 0, 10'000'000));
      }
      const int n = ::epoll_pwait2(epoll_fd_, scratch_->events.data(), static_cast<int>(n_sessions), &timeout, nullptr);
      polled_something = n > 0;
      for (int i = 0; i < n && ok; ++i) {
        Session& s = *sessions_[scratch_->events[static_cast<std::size_t>(i)].data.u32];
        if (!read(s, now, error)) ok = false;
      }
    }
    if (pass_counted) {
      ClientLoad& load = phases_[pass_phase].load;
      ++load.polls;
      if (!polled_something) ++load.empty_polls;
    }
    pass_busy = pass_busy || polled_something;
    for (auto& sp : sessions_)
      if (sp->tx_head < sp->tx_tail && !flush(*sp)) {
        error = "send failed: connection lost";
        ok = false;
      }

    while (run_done_ && reported < o_.runs && run_complete(reported + 1, now)) {
      ++reported;
      run_done_(run_done_ctx_, reported, o_.runs, phases_[reported]);
    }

    if (now >= next_heartbeat_check) {
      next_heartbeat_check = now + kSecond;
      for (auto& sp : sessions_) {
        Session& s = *sp;
        if (now - s.last_send_ns > static_cast<std::int64_t>(kHeartBtInt) * kSecond &&
            s.tx_tail + kMaxMessage <= kTxSize) {
          s.tx_tail += write_heartbeat(s.writer, s.tx.get() + s.tx_tail, kMaxMessage, s.seq++, codec::utc_now_ns(), {});
          s.last_send_ns = now;
          flush(s);
        }
      }
    }
  }
  measuring_ = false;
  // Orders never answered, or due and never sent, are errors of their phase.
  for (auto& sp : sessions_) {
    Session& s = *sp;
    for (; s.bl_size > 0; --s.bl_size, s.bl_head = (s.bl_head + 1) % kBacklog)
      ++phases_[phase_of(s.backlog[s.bl_head])].errors;
    while (s.ring_size > 0) {
      ++phases_[s.ring[s.ring_head].phase].errors;
      s.ring_head = (s.ring_head + 1) % s.ring_cap;
      --s.ring_size;
    }
  }
  in_flight_ = 0;
  if (ok && run_done_)
    for (++reported; reported <= o_.runs; ++reported) run_done_(run_done_ctx_, reported, o_.runs, phases_[reported]);
  return ok;
}

void Client::logout() noexcept {
  for (auto& sp : sessions_) {
    Session& s = *sp;
    if (s.closed || s.fd < 0) continue;
    if (s.tx_tail + kMaxMessage <= kTxSize)
      s.tx_tail += write_logout(s.writer, s.tx.get() + s.tx_tail, kMaxMessage, s.seq++, codec::utc_now_ns());
    flush(s);
  }
  const std::int64_t deadline = Clock::monotonic_ns() + kSecond;
  std::string ignored;
  while (Clock::monotonic_ns() < deadline) {
    bool all = true;
    for (auto& sp : sessions_) all = all && (sp->logged_out || sp->closed);
    if (all) break;
    const int n = ::epoll_wait(epoll_fd_, scratch_->events.data(), static_cast<int>(sessions_.size()), 20);
    for (int i = 0; i < n; ++i) {
      Session& s = *sessions_[scratch_->events[static_cast<std::size_t>(i)].data.u32];
      if (!s.closed) read(s, 0, ignored);
      if (s.closed) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, s.fd, nullptr);
    }
  }
  for (auto& sp : sessions_) {
    if (sp->fd >= 0) ::close(sp->fd);
    sp->fd = -1;
  }
}

}  // namespace kite::bench
