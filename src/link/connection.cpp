#include "kite/link/connection.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "kite/codec/framer.hpp"
#include "kite/engine/agent.hpp"

namespace kite::link {

using session::Clock;
using session::kNsPerMs;
using session::Logger;
using session::LogLevel;
using session::Lookup;
using session::Refusal;
using session::Session;
using session::SessionRegistry;
using session::SessionState;

SessionConnection::SessionConnection(SessionRegistry& registry, const AcceptorLimits& limits)
    : registry_(&registry), clock_(registry.clock()), log_(registry.logger()), limits_(limits) {
  // What every frame reads shares the object's first line, the vtable
  // pointer's included (a second line cost a D1 miss per order at 32 sessions).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static_assert(offsetof(SessionConnection, garbled_run_) + sizeof garbled_run_ <= 64);
#pragma GCC diagnostic pop
  system_clock_ = dynamic_cast<const session::SystemClock*>(&clock_) != nullptr;
}

SessionConnection::SessionConnection(Session& session, const Clock& clock, Logger& log, CommandPort* port)
    : session_(&session), clock_(clock), log_(log), own_port_(port) {
  limits_.max_message_size = session.settings().max_message_size;
  limits_.logon_timeout_ms = session.settings().logon_timeout_ms;
  system_clock_ = dynamic_cast<const session::SystemClock*>(&clock_) != nullptr;
}

void SessionConnection::set_connection_id(int id, std::string_view peer) noexcept {
  const std::size_t n = std::min(peer.size(), sizeof peer_ - 1);
  if (n != 0) std::memcpy(peer_, peer.data(), n);  // an empty view may hold no pointer
  peer_[n] = 0;
  if (n != 0)
    std::snprintf(who_, sizeof who_, "conn %d from %s", id, peer_);
  else
    std::snprintf(who_, sizeof who_, "conn %d", id);
}

void SessionConnection::on_connected(engine::Outbound& out, std::int64_t) noexcept {
  out_ = &out;
  output_.bind(&out);
  closed_ = false;
  connected_ns_ = clock_.now_ns();
  garbled_run_ = 0;
  garbled_first_ = codec::FrameError::none;
  if (registry_ != nullptr) {
    session_ = nullptr;
    bound_by_logon_ = false;
  } else if (session_ != nullptr) {
    if (!session_->try_bind()) {
      log_.logf(LogLevel::error, session_->id(), "second connection for a session already connected: closing it");
      refuse("session already connected");
      return;
    }
    bound_by_logon_ = true;
    take_port(own_port_);
    session_->on_connected(output_);
  }
}

void SessionConnection::take_port(CommandPort* p) noexcept {
  port_ = p;
  port_waiting_ = false;
  if (p != nullptr) p->discard();
}

bool SessionConnection::Hands::run(const Command& c, Answer& a) noexcept {
  return run_command(*c_.session_, c, c_.out_, c_.log_, a);
}

// What cannot run yet waits for the next turns (every timer interval while
// port_waiting_), not for a busy cycle.
int SessionConnection::drain_port() noexcept {
  const int ran = port_->drain(hands_);
  port_waiting_ = port_->pending();
  return ran;
}

void SessionConnection::refuse(const char* reason) noexcept {
  if (closed_) return;
  closed_ = true;
  if (out_ != nullptr) out_->close(reason, true);
}

namespace {
// The field index a frame is read into, and the header read from it, belong
// to the thread, not to the connection: they are only read during on_data
// (a session copies what it queues), and a thread's connections take turns,
// so its sessions share one index and header that stay in cache. A nested
// on_data on the same thread (a test wiring two connections back to back)
// takes the next depth's; each depth's is made once per thread, at its
// first message.
struct FrameScratch {
  codec::FieldIndex index{1024};
  codec::Header header;
};
struct ThreadScratch {
  std::vector<std::unique_ptr<FrameScratch>> by_depth;
  std::size_t depth = 0;
};
thread_local ThreadScratch t_scratch;

class ScratchLease {
 public:
  ScratchLease() noexcept {
    ThreadScratch& t = t_scratch;
    if (t.depth == t.by_depth.size()) t.by_depth.push_back(std::make_unique<FrameScratch>());
    scratch_ = t.by_depth[t.depth++].get();
  }
  ~ScratchLease() { --t_scratch.depth; }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  codec::FieldIndex& index() const noexcept { return scratch_->index; }
  codec::Header& header() const noexcept { return scratch_->header; }

 private:
  FrameScratch* scratch_;
};
}  // namespace

[[gnu::hot]] std::size_t SessionConnection::on_data(const char* data, std::size_t n, std::int64_t) noexcept {
  if (metrics_ != nullptr) rx_ns_ = engine::monotonic_ns();
  const ScratchLease lease;
  codec::FieldIndex& index = lease.index();
  std::size_t used = 0;
  while (used < n && !closed_) {
    if (session_ != nullptr && session_->state() == SessionState::closing) break;
    const std::uint32_t max = session_ != nullptr ? session_->max_message_size() : limits_.max_message_size;
    // Framed and indexed in one walk (the index is empty unless complete).
    const codec::FramedIndex framed = index.frame_and_build(data + used, n - used, max);
    const codec::FrameResult& fr = framed.frame;
    if (fr.status == codec::FrameStatus::incomplete) break;
    if (fr.status == codec::FrameStatus::invalid) {
      if (fr.error == codec::FrameError::too_large) {
        log_.logf(LogLevel::error, session_ != nullptr ? std::string_view(session_->id()) : std::string_view(who_),
                  "message larger than MaxMessageSize (%u bytes): disconnecting", max);
        if (session_ != nullptr && session_->logged_on()) session_->logout("Message too large");
        refuse("message too large");
        return n;
      }
      if (fr.error == codec::FrameError::bad_begin_string && unknown_begin_string(data + used, n - used)) {
        if (closed_) return n;
        used += fr.size;
        continue;
      }
      used += fr.size;
      garbled(fr.error, fr.size, max);
      continue;
    }
    if (garbled_run_ != 0) end_garbled_run();
    if (!handle_frame(index, lease.header(), framed.index, std::string_view(data + used, fr.size)))
      break;  // back-pressure: the frame waits
    used += fr.size;
  }
  if (metrics_ != nullptr) rx_ns_ = 0;  // the state is published on the next timer turn
  if (closed_) return n;
  return used;
}

bool SessionConnection::unknown_begin_string(const char* p, std::size_t n) noexcept {
  // Only a message start ("8=FIX") with a version Kite does not speak; other
  // bytes after "8=" are noise, discarded as garbage.
  if (n < 6 || std::memcmp(p, "8=FIX", 5) != 0) return false;
  const char* soh = static_cast<const char*>(std::memchr(p, codec::kSoh, std::min<std::size_t>(n, 24)));
  const int len = soh != nullptr ? static_cast<int>(soh - p - 2) : static_cast<int>(std::min<std::size_t>(n, 24) - 2);
  if (garbled_run_ != 0) end_garbled_run();
  if (session_ != nullptr && (session_->logged_on() || session_->state() == SessionState::logout_sent)) {
    // Logged on: a Logout, and the close follows its answer (orderly).
    if (session_->logged_on()) {
      log_.logf(LogLevel::warn, session_->id(), "unexpected BeginString %.*s: logging out", len, p + 2);
      session_->logout("Incorrect BeginString");
    }
    return true;
  }
  // Before a Logon there is nothing to wait for: the peer is not one of ours.
  log_.logf(LogLevel::error, session_ != nullptr ? std::string_view(session_->id()) : std::string_view(who_),
            "Logon with BeginString %.*s, not one Kite speaks: disconnecting", len, p + 2);
  refuse("unknown BeginString");
  return true;
}

// A logged-on session hears of each garbled frame; bytes that do not even
// start a message (the rest of a run of noise) only of the run's first.
// Before a Logon the run is one line when it ends.
void SessionConnection::garbled(codec::FrameError why, std::size_t bytes, std::uint32_t max) noexcept {
  const bool first = garbled_run_ == 0;
  if (first) garbled_first_ = why;
  // Held at most at the limit, so it fits 32 bits: reaching the limit ends the run.
  garbled_run_ = static_cast<std::uint32_t>(std::min<std::size_t>(garbled_run_ + bytes, max));
  if (m_ != nullptr && (first || why != codec::FrameError::garbage_before_begin_string)) m_->garbled_in.add();
  if (garbled_run_ >= max) {
    const std::string_view who = session_ != nullptr ? std::string_view(session_->id()) : std::string_view(who_);
    log_.logf(LogLevel::error, who, "no valid message in MaxMessageSize (%u) bytes (first: %s): disconnecting", max,
              codec::to_string(garbled_first_));
    garbled_run_ = 0;
    if (session_ != nullptr && session_->logged_on()) session_->logout("Garbled stream");
    refuse("garbled stream");
    return;
  }
  if (session_ != nullptr && (first || why != codec::FrameError::garbage_before_begin_string))
    session_->on_garbled(codec::to_string(why));
}

void SessionConnection::end_garbled_run() noexcept {
  if (session_ == nullptr)
    log_.logf(LogLevel::warn, who_, "%u garbled bytes before Logon ignored (first: %s)", garbled_run_,
              codec::to_string(garbled_first_));
  garbled_run_ = 0;
}

namespace {
bool is_session_message(std::string_view t) noexcept {
  return t.size() == 1 && ((t[0] >= '0' && t[0] <= '5') || t[0] == 'A');
}
}  // namespace

[[gnu::hot]] bool SessionConnection::handle_frame(const codec::FieldIndex& index, codec::Header& header,
                                                  const codec::IndexResult& ir, std::string_view frame) noexcept {
  if (!ir) {
    if (ir.error == codec::IndexError::bad_tag && session_ != nullptr && session_->connected()) {
      if (m_ != nullptr) {
        m_->messages_in.add();
        m_->bytes_in.add(frame.size());
      }
      if (session_->on_invalid_tag(frame, ir.offset)) return true;
    }
    if (session_ != nullptr) session_->on_garbled(codec::to_string(ir.error));
    if (m_ != nullptr) m_->garbled_in.add();
    return true;
  }
  const codec::HeaderResult hr = codec::read_header(index, header);
  if (!hr) {
    if (session_ != nullptr) session_->on_garbled(codec::to_string(hr.error));
    if (m_ != nullptr) m_->garbled_in.add();
    return true;
  }
  // Lossless back-pressure: an application message is handled only when the
  // send buffer has 2 x SendClaimBytes free (every send claims SendClaimBytes,
  // so this lets replies totalling up to SendClaimBytes go out). Otherwise it stays
  // unconsumed (and so does everything after it, keeping the order): the
  // runtime keeps the bytes and offers them again once the peer has read some
  // of ours, TCP flow control slows the peer meanwhile, and the engine's
  // slow-consumer policy applies. Its number is not used up, so a disconnect
  // loses nothing either: it is asked for again after the next Logon.
  // Session messages go on (their replies wait in the session's overflow).
  // The room found is held for the message's first reply (its claim then
  // asks the runtime no second time) and let go once the message is handled.
  if (session_ != nullptr && session_->logged_on() && !is_session_message(header.msg_type)) {
    const std::size_t claim = session_->send_claim_bytes();
    // An empty buffer smaller than the reserve can never offer more: then one
    // message's room is enough rather than waiting forever.
    if (output_.hold(2 * claim) == nullptr &&
        (out_ == nullptr || out_->pending() != 0 || output_.hold(claim) == nullptr))
      return false;
  }
  if (session_ == nullptr) {
    // Acceptor: the first message must be a Logon naming a configured session.
    if (header.msg_type != "A") {
      log_.logf(LogLevel::error, who_, "first message is not a Logon (35=%.*s): disconnecting",
                static_cast<int>(header.msg_type.size()), header.msg_type.data());
      refuse("first message not a Logon");
      return true;
    }
    // Evicted by a newer connection (AcceptorFactory) while this Logon was on its way.
    Gate g = Gate::unauthenticated;
    if (!gate_.compare_exchange_strong(g, Gate::logging_on, std::memory_order_acq_rel) && g != Gate::free) {
      refuse("unauthenticated connection evicted");
      return true;
    }
    Lookup l = registry_->identify(header, index);
    // Two connections of one session may race on different threads: one wins.
    if (l.refusal == Refusal::none && !l.session->try_bind()) l.refusal = Refusal::already_logged_on;
    if (l.refusal != Refusal::none) {
      if (metrics_ != nullptr && l.session != nullptr) {
        // Possibly another thread's session: a racing count may be lost, never torn.
        const std::size_t i = session_index(l.session);
        if (i < metrics_->sessions()) {
          metrics_->session(i).refused_logons.add();
          metrics_->session(i).last_refusal.store(to_string(l.refusal), std::memory_order_relaxed);
        }
      }
      log_.logf(LogLevel::error, who_, "Logon refused (%s): %.*s:%.*s->%.*s", to_string(l.refusal),
                static_cast<int>(header.begin_string.size()), header.begin_string.data(),
                static_cast<int>(header.sender_comp_id.size()), header.sender_comp_id.data(),
                static_cast<int>(header.target_comp_id.size()), header.target_comp_id.data());
      refuse(to_string(l.refusal));
      return true;
    }
    session_ = l.session;
    bound_by_logon_ = true;
    log_.logf(LogLevel::info, who_, "Logon identifies session %s", session_->id().c_str());
    if (ports_ != nullptr) {
      const std::size_t i = session_index(session_);
      take_port(i < nports_ ? ports_[i] : nullptr);
    }
    if (metrics_ != nullptr) watch_session();
    session_->on_connected(output_);
  }
  if (metrics_ != nullptr && m_ != nullptr) {
    m_->messages_in.add();
    m_->bytes_in.add(frame.size());
    if (header.msg_type.size() == 1) {
      if (header.msg_type[0] == '2')
        m_->resend_requests_in.add();
      else if (header.msg_type[0] == '4')
        m_->sequence_resets_in.add();
      else if (header.msg_type[0] == '3' || header.msg_type[0] == 'j')
        m_->rejects_in.add();
    }
    if (mlog_ != nullptr && m_->message_log.load(std::memory_order_acquire)) mlog_->write(true, clock_.now_ns(), frame);
  }
  session_->on_message(header, index);
  output_.let_go();
  return true;
}

// ------------------------------------------------------------------ counting

void SessionConnection::observe(Metrics* metrics, MessageLog* const* logs) noexcept {
  metrics_ = metrics;
  logs_ = logs;
}

std::size_t SessionConnection::session_index(const Session* s) const noexcept {
  if (registry_ != nullptr) return registry_->index_of(s);
  return 0;  // an initiator connection counts into slot 0 of its own Metrics
}

void SessionConnection::watch_session() noexcept {
  const std::size_t i = session_index(session_);
  if (i >= metrics_->sessions()) return;
  m_ = &metrics_->session(i);
  mlog_ = logs_ != nullptr ? logs_[i] : nullptr;
  last_state_ = static_cast<std::uint8_t>(SessionState::disconnected);
  session_->observe(&hands_);
}

void SessionConnection::publish() noexcept {
  const auto st = static_cast<std::uint8_t>(session_->state());
  if (st != last_state_) {
    if (st == static_cast<std::uint8_t>(SessionState::active)) m_->logons.add();
    last_state_ = st;
  }
  m_->state.store(st, std::memory_order_relaxed);
  m_->next_in.store(session_->next_target_seq(), std::memory_order_relaxed);
  m_->next_out.store(session_->next_sender_seq(), std::memory_order_relaxed);
  m_->in_gap.store(session_->in_gap(), std::memory_order_relaxed);
}

void SessionConnection::sent(const session::SentMessage& m) noexcept {
  m_->messages_out.add();
  m_->bytes_out.add(m.bytes.size());
  const std::int64_t mono = engine::monotonic_ns();
  if (rx_ns_ != 0) {
    // The first reply to the bytes on_data is handling.
    if (ThreadLatency* t = metrics_->this_thread()) t->record(mono - rx_ns_);
    rx_ns_ = 0;
  }
  m_->last_activity_mono_ns.store(mono, std::memory_order_relaxed);
  if (m.msg_type.size() == 1) {
    switch (m.msg_type[0]) {
      case '3':
        m_->rejects_out[reject_slot(m.reject_reason >= 0, static_cast<std::uint64_t>(m.reject_reason))].add();
        break;
      case 'j': m_->business_rejects_out.add(); break;
      case '2': m_->resend_requests_out.add(); break;
      case '4': m_->sequence_resets_out.add(); break;
      default: break;
    }
  }
  if (mlog_ != nullptr && m_->message_log.load(std::memory_order_acquire))
    mlog_->write(false, clock_.now_ns(), m.bytes);
}

int SessionConnection::on_timer(std::int64_t now_ns) noexcept {
  if (closed_) return 0;
  if (session_ == nullptr) {
    if (registry_ == nullptr) return 0;
    if (gate_.load(std::memory_order_acquire) == Gate::evicted) {
      refuse("unauthenticated connection evicted");  // the factory logged why
      return 1;
    }
    if (clock_.now_ns() - connected_ns_ >= static_cast<std::int64_t>(limits_.logon_timeout_ms) * kNsPerMs) {
      if (garbled_run_ != 0) end_garbled_run();
      log_.logf(LogLevel::warn, who_, "no Logon within %d ms: disconnecting", limits_.logon_timeout_ms);
      refuse("logon timeout");
      return 1;
    }
    return 0;
  }
  int work = session_->on_timer();
  if (port_ != nullptr && port_->pending()) work += drain_port();
  if (m_ != nullptr) {
    publish();
    if (mlog_ != nullptr) {
      if (m_->message_log.load(std::memory_order_acquire)) {
        mlog_->flush(now_ns, false);
        if (mlog_->error() != nullptr && !mlog_logged_error_) {
          mlog_logged_error_ = true;
          log_.logf(LogLevel::error, session_->id(), "%s %s", mlog_->error(), mlog_->path().c_str());
        }
      } else {
        mlog_->close();  // switched off: what was written is flushed
      }
    }
  }
  return work;
}

[[gnu::hot]] std::int64_t SessionConnection::timer_quiet_ns() noexcept {
  // A FakeClock's time does not pass with the engine's: tests that move it
  // expect the next turn to see it.
  if (closed_ || session_ == nullptr || metrics_ != nullptr || !system_clock_ || port_waiting_) return 0;
  constexpr std::int64_t kLongest = 10 * session::kNsPerSec;
  const std::int64_t q = session_->timer_quiet_ns();
  return q < kLongest ? q : kLongest;
}

void SessionConnection::on_disconnected(const char* reason, std::int64_t) noexcept {
  if (garbled_run_ != 0) end_garbled_run();
  if (session_ != nullptr && bound_by_logon_) {
    if (session_->connected()) session_->on_disconnected(reason);
    if (m_ != nullptr) {
      m_->count_disconnect(reason);
      publish();
      if (mlog_ != nullptr) mlog_->flush(0, true);
    }
    session_->observe(nullptr);
    session_->unbind();
  }
  if (registry_ != nullptr) {
    m_ = nullptr;
    mlog_ = nullptr;
  }
  bound_by_logon_ = false;
  port_ = nullptr;
  port_waiting_ = false;
  if (registry_ != nullptr) session_ = nullptr;
  output_.bind(nullptr);
  out_ = nullptr;
  closed_ = true;
}

// ------------------------------------------------------------------ factories

AcceptorFactory::AcceptorFactory(SessionRegistry& registry, const AcceptorLimits& limits)
    : registry_(registry), limits_(limits) {
  pool_.reserve(limits.table_size());
  free_.reserve(limits.table_size());
  for (std::size_t i = 0; i < limits.table_size(); ++i) {
    pool_.push_back(std::make_unique<SessionConnection>(registry, limits));
    free_.push_back(pool_.back().get());
  }
}

engine::Protocol* AcceptorFactory::open_from(int connection_id, std::string_view peer) noexcept {
  Logger& log = registry_.logger();
  char who[80];
  if (peer.empty())
    std::snprintf(who, sizeof who, "conn %d", connection_id);
  else
    std::snprintf(who, sizeof who, "conn %d from %.*s", connection_id, static_cast<int>(peer.size()), peer.data());
  // Over the unauthenticated budget, or with the table full: the oldest
  // unauthenticated connection past its grace (of this address first) makes
  // room. A counterparty sends its Logon at once; the longest waiting is the
  // likeliest idle.
  const std::int64_t now = registry_.clock().now_ns();
  const std::int64_t grace = static_cast<std::int64_t>(limits_.logon_grace_ms) * kNsPerMs;
  SessionConnection* oldest_here = nullptr;
  SessionConnection* oldest = nullptr;
  std::size_t here = 0, all = 0, evicted = 0;
  for (const auto& c : pool_) {
    const SessionConnection::Gate g = c->gate();
    evicted += g == SessionConnection::Gate::evicted ? 1 : 0;
    if (g != SessionConnection::Gate::unauthenticated) continue;
    ++all;
    const bool same = !peer.empty() && c->peer() == peer;
    here += same ? 1 : 0;
    if (now - c->opened_ns() < grace) continue;
    if (oldest == nullptr || c->opened_order() < oldest->opened_order()) oldest = c.get();
    if (same && (oldest_here == nullptr || c->opened_order() < oldest_here->opened_order())) oldest_here = c.get();
  }
  const std::size_t held = in_use_.load(std::memory_order_relaxed) - evicted;
  SessionConnection* victim = nullptr;
  const char* why = nullptr;
  std::size_t limit = 0;
  if (here >= limits_.max_unauthenticated_per_address && oldest_here != nullptr) {
    victim = oldest_here, why = "unauthenticated connections per address",
    limit = limits_.max_unauthenticated_per_address;
  } else if (all >= limits_.max_unauthenticated && oldest != nullptr) {
    victim = oldest, why = "unauthenticated connections in total", limit = limits_.max_unauthenticated;
  } else if (held >= limits_.max_connections && oldest != nullptr) {
    victim = oldest, why = "connections", limit = limits_.max_connections;
  }
  // Evicted connections close on their own thread's next turn: until then
  // they hold an entry of the table's spare room, not of max_connections.
  if (free_.empty() || held - (victim != nullptr ? 1 : 0) >= limits_.max_connections) {
    log.logf(LogLevel::error, "acceptor",
             "%s refused: MaxConnections (%zu) reached, and no unauthenticated "
             "connection older than %d ms to close",
             who, limits_.max_connections, limits_.logon_grace_ms);
    return nullptr;
  }
  if (victim != nullptr && victim->evict()) {
    log.logf(LogLevel::warn, "acceptor",
             "%s closed: not logged on, and %zu %s are the most allowed: %s takes its "
             "place",
             victim->label(), limit, why, who);
  }
  SessionConnection* c = free_.back();
  free_.pop_back();
  c->set_connection_id(connection_id, peer);
  c->open_gate(++opened_, now);
  in_use_.fetch_add(1, std::memory_order_release);
  return c;
}

void AcceptorFactory::refused(int connection_id, std::string_view peer, const char* reason) noexcept {
  registry_.logger().logf(LogLevel::error, "acceptor", "conn %d from %.*s refused: %s", connection_id,
                          static_cast<int>(peer.size()), peer.data(), reason);
}

std::size_t AcceptorFactory::unauthenticated() const noexcept {
  std::size_t n = 0;
  for (const auto& c : pool_) n += c->gate() == SessionConnection::Gate::unauthenticated ? 1 : 0;
  return n;
}

void AcceptorFactory::observe(Metrics* metrics, MessageLog* const* logs) noexcept {
  for (auto& c : pool_) c->observe(metrics, logs);
}

void AcceptorFactory::release(engine::Protocol* p) noexcept {
  if (p == nullptr) return;
  static_cast<SessionConnection*>(p)->close_gate();
  free_.push_back(static_cast<SessionConnection*>(p));
  in_use_.fetch_sub(1, std::memory_order_release);
}

void AcceptorFactory::open_ports(std::size_t send_bytes) {
  ports_.clear();
  port_ptrs_.clear();
  for (std::size_t i = 0; i < registry_.size(); ++i) {
    ports_.push_back(std::make_unique<CommandPort>(send_bytes));
    port_ptrs_.push_back(ports_.back().get());
  }
  for (auto& c : pool_) c->serve(port_ptrs_.data(), port_ptrs_.size());
}

InitiatorFactory::InitiatorFactory(Session& session, const Clock& clock, Logger& log, std::size_t send_bytes)
    : session_(session), port_(send_bytes), conn_(session, clock, log, &port_) {}

engine::Protocol* InitiatorFactory::open(int connection_id) noexcept {
  if (in_use_) return nullptr;
  in_use_ = true;
  conn_.set_connection_id(connection_id);
  return &conn_;
}

void InitiatorFactory::release(engine::Protocol*) noexcept { in_use_ = false; }

}  // namespace kite::link
