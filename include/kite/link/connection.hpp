// kite_link joins a FIX Session (kite_session) to an engine connection
// (kite_engine); neither of those knows the other. One SessionConnection per
// connection implements engine::Protocol. It frames the received bytes,
// indexes each frame, reads its header and hands it to the Session; replies
// go out through an OutboundOutput writing into the engine's send buffer.
//
// Acceptor side: the connection is not bound to a session until its first
// message, which must be a Logon; the SessionRegistry identifies it. A
// connection that sends anything else first, is refused by the registry,
// sends a frame larger than the limit, or completes no Logon within the
// logon timeout, is closed and the event logged.
//
// Either side: bytes that do not frame are discarded up to the next place a
// message could start; a run of them as long as the message size limit
// (a stream with no SOH, a BodyLength that is no number) closes the
// connection with one log line. Nothing a peer sends on one
// connection touches another session.
//
// Initiator side: the connection is bound at construction and the Session
// sends its Logon in on_connected().
//
// Requests from other threads reach the session through its CommandPort,
// drained at every timer turn of the connection that holds it; a connection
// that takes the session first drops what was queued before (not its own).
//
// Back-pressure loses nothing: an application message is handed to the
// Session only when the send buffer can take its replies (2 x SendClaimBytes
// free: replies totalling up to SendClaimBytes);
// otherwise on_data() stops before it and returns what it consumed, so the
// runtime keeps the rest and TCP flow control pushes back on the peer.
//
// The per-message path allocates nothing. Time is read from the Clock given
// at construction (UTC, for SendingTime and timers); the runtime's now_ns
// arguments are not used. A connection binds its session exclusively
// (Session::try_bind), so connections on different engine threads never
// drive one session at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "kite/codec/field_index.hpp"
#include "kite/codec/header.hpp"
#include "kite/engine/protocol.hpp"
#include "kite/link/command_port.hpp"
#include "kite/link/message_log.hpp"
#include "kite/link/metrics.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"

namespace kite::link {

// The session's SessionOutput over an engine::Outbound.
class OutboundOutput final : public session::SessionOutput {
 public:
  void bind(engine::Outbound* out) noexcept {
    out_ = out;
    held_room_ = 0;
  }
  char* claim(std::size_t min) noexcept override {
    if (min <= held_room_) return held_;
    held_room_ = 0;  // a claim of more may move the pending bytes
    return out_ != nullptr ? out_->claim(min) : nullptr;
  }
  void commit(std::size_t n) noexcept override {
    held_room_ = 0;
    if (out_ != nullptr) out_->commit(n);
  }
  void disconnect(const char* reason) noexcept override {
    if (out_) out_->close(reason, true);
  }
  // claim(min), and the room kept: until the next commit(), a claim of
  // more or let_go(), a claim of at most min answers it without asking the
  // Outbound, which would answer the same (its tail has not moved).
  char* hold(std::size_t min) noexcept {
    char* const p = claim(min);
    held_ = p;
    held_room_ = p != nullptr ? min : 0;
    return p;
  }
  void let_go() noexcept { held_room_ = 0; }

 private:
  engine::Outbound* out_ = nullptr;
  char* held_ = nullptr;
  std::size_t held_room_ = 0;  // 0: nothing held
};

// Limits on the acceptor's connections (before a session is known).
//
// A connection is unauthenticated from its accept until its first Logon.
// Unauthenticated connections have a budget of their own, in total and per
// remote address: a new connection over either budget, or finding
// max_connections held, closes the oldest unauthenticated connection that
// has waited at least logon_grace_ms (of its address first), so connections
// that never log on cannot hold the slots a configured session needs.
// Younger ones are never closed for it: many sessions connecting at once
// (a restart) all get their turn. Only when no connection can make room is
// the new one refused. Every closed or refused connection is logged.
struct AcceptorLimits {
  std::size_t max_connections = 64;                 // MaxConnections
  std::int32_t logon_timeout_ms = 10000;            // LogonTimeout (before a Logon arrives)
  std::uint32_t max_message_size = 64 * 1024;       // MaxMessageSize before the session is known
  std::size_t max_unauthenticated = 16;             // not yet logged on, in total
  std::size_t max_unauthenticated_per_address = 4;  // not yet logged on, from one remote address
  std::int32_t logon_grace_ms = 1000;  // an unauthenticated connection this young is not closed for another
  // Connections held at once: max_connections, and room for as many evicted
  // ones waiting for their thread to close them.
  std::size_t table_size() const noexcept { return max_connections + max_unauthenticated; }
};

class alignas(64) SessionConnection final : public engine::Protocol {
 public:
  // Acceptor connection: bound by the first Logon.
  SessionConnection(session::SessionRegistry& registry, const AcceptorLimits& limits);
  // Initiator connection bound to `session`; `port` (may be null) is its command port.
  SessionConnection(session::Session& session, const session::Clock& clock, session::Logger& log,
                    CommandPort* port = nullptr);

  void on_connected(engine::Outbound& out, std::int64_t now_ns) noexcept override;
  std::size_t on_data(const char* data, std::size_t n, std::int64_t now_ns) noexcept override;
  int on_timer(std::int64_t now_ns) noexcept override;
  // The bound session's Session::timer_quiet_ns() (at most 10 s) when its
  // clock is the system's, nothing is counted (operator's counters and
  // message logs are served by every turn) and its port holds nothing that
  // waits; 0 otherwise. A command posted wakes the engine (set_waker).
  std::int64_t timer_quiet_ns() noexcept override;
  void on_disconnected(const char* reason, std::int64_t now_ns) noexcept override;

  session::Session* session() const noexcept { return session_; }
  // The operator's view: counters per session (indexed as the registry's
  // sessions) and each session's message log (nullptr entries: none). Set at
  // set-up, before the connection is used; nullptr turns counting off.
  void observe(Metrics* metrics, MessageLog* const* logs) noexcept;
  // Acceptor: each session's command port (indexed as the registry's
  // sessions; nullptr: none). Set-up only.
  void serve(CommandPort* const* ports, std::size_t n) noexcept {
    ports_ = ports;
    nports_ = n;
  }
  // A label for logs ("conn 7", "conn 7 from 192.0.2.7").
  void set_connection_id(int id, std::string_view peer = {}) noexcept;
  bool closed() const noexcept { return closed_; }

  // The acceptor's budget for unauthenticated connections (AcceptorFactory).
  enum class Gate : std::uint8_t { free, unauthenticated, logging_on, evicted };
  Gate gate() const noexcept { return gate_.load(std::memory_order_acquire); }
  // Set-up of a lent connection, under the factory's lock.
  void open_gate(std::uint64_t order, std::int64_t now_ns) noexcept {
    opened_order_ = order;
    opened_ns_ = now_ns;
    gate_.store(Gate::unauthenticated, std::memory_order_release);
  }
  void close_gate() noexcept { gate_.store(Gate::free, std::memory_order_release); }
  // Marks an unauthenticated connection to be closed by its own thread on its
  // next timer turn; false when it has begun logging on meanwhile.
  bool evict() noexcept {
    Gate g = Gate::unauthenticated;
    return gate_.compare_exchange_strong(g, Gate::evicted, std::memory_order_acq_rel);
  }
  std::uint64_t opened_order() const noexcept { return opened_order_; }
  std::int64_t opened_ns() const noexcept { return opened_ns_; }
  std::string_view peer() const noexcept { return peer_; }
  const char* label() const noexcept { return who_; }

 private:
  [[gnu::cold]] void refuse(const char* reason) noexcept;
  // Bytes discarded as not FIX since the last whole frame: the first error
  // is kept, and the run is cut at the message size limit.
  void garbled(codec::FrameError why, std::size_t bytes, std::uint32_t max) noexcept;
  void end_garbled_run() noexcept;
  // Bytes [p, p + n) start a message ("8=FIX") whose BeginString is not one
  // Kite speaks: a logged-on session logs out; before a Logon the connection
  // is refused at once. False (nothing done) for other bytes.
  bool unknown_begin_string(const char* p, std::size_t n) noexcept;
  // The frame `index` holds (ir: how its build went), its header read into
  // `header` (the thread's). False when the frame must wait for room in the
  // send buffer (not consumed).
  bool handle_frame(const codec::FieldIndex& index, codec::Header& header, const codec::IndexResult& ir,
                    std::string_view frame) noexcept;
  // Counters: the session is bound / the connection ends / state published.
  void watch_session() noexcept;
  void publish() noexcept;
  std::size_t session_index(const session::Session* s) const noexcept;
  // The session was bound: its port, with what was queued before dropped.
  void take_port(CommandPort* p) noexcept;
  int drain_port() noexcept;
  // A message the session sent (its SendObserver, while counting).
  void sent(const session::SentMessage& m) noexcept;

  // Hot: what every message reads, in the object's first line (aligned, the
  // vtable pointer first): the session, the output its replies claim room
  // through, and the checks of every frame (counting off: metrics_ null).
  session::Session* session_ = nullptr;
  Metrics* metrics_ = nullptr;
  OutboundOutput output_;
  bool closed_ = false;
  bool bound_by_logon_ = false;    // holds the session's binding
  bool system_clock_ = false;      // clock_ is a SystemClock: quiet spans are real time
  bool port_waiting_ = false;      // the last turn left a command that could not run yet
  std::uint32_t garbled_run_ = 0;  // bytes discarded since the last whole frame (below the size limit)
  CommandPort* port_ = nullptr;    // the bound session's (timer turns)
  // Counting (observe()): the bound session's slot, its log, and the time the
  // current inbound bytes arrived (monotonic; 0 once their first reply went).
  SessionMetrics* m_ = nullptr;
  std::int64_t rx_ns_ = 0;
  engine::Outbound* out_ = nullptr;
  session::SessionRegistry* registry_ = nullptr;
  const session::Clock& clock_;
  session::Logger& log_;
  AcceptorLimits limits_;
  std::int64_t connected_ns_ = 0;
  char who_[80] = "conn";
  char peer_[48] = {};
  std::atomic<Gate> gate_{Gate::free};
  std::uint64_t opened_order_ = 0;
  std::int64_t opened_ns_ = 0;  // Clock time it was lent
  codec::FrameError garbled_first_ = codec::FrameError::none;
  MessageLog* const* logs_ = nullptr;
  MessageLog* mlog_ = nullptr;
  bool mlog_logged_error_ = false;
  std::uint8_t last_state_ = 0;
  CommandPort* const* ports_ = nullptr;
  std::size_t nports_ = 0;
  CommandPort* own_port_ = nullptr;  // initiator: the session's
  // Runs the port's commands on the bound session; hears what it sends.
  struct Hands final : CommandPort::Runner, session::SendObserver {
    explicit Hands(SessionConnection& c) noexcept : c_(c) {}
    bool run(const Command& c, Answer& a) noexcept override;
    void on_sent(const session::SentMessage& m) noexcept override { c_.sent(m); }
    SessionConnection& c_;
  } hands_{*this};
};

// ProtocolFactory for an acceptor: a pool of AcceptorLimits::table_size()
// connections made at construction; open() refuses (nullptr, logged) when
// max_connections are in use, not counting evicted ones.
class AcceptorFactory final : public engine::ProtocolFactory {
 public:
  AcceptorFactory(session::SessionRegistry& registry, const AcceptorLimits& limits);
  engine::Protocol* open(int connection_id) noexcept override { return open_from(connection_id, {}); }
  // Lends a connection; over the unauthenticated budget (AcceptorLimits) it
  // first evicts the oldest unauthenticated connection, logged.
  engine::Protocol* open_from(int connection_id, std::string_view peer) noexcept override;
  void refused(int connection_id, std::string_view peer, const char* reason) noexcept override;
  void release(engine::Protocol* p) noexcept override;
  // Connections lent (any thread).
  std::size_t open_connections() const noexcept { return in_use_.load(std::memory_order_acquire); }
  // Connections lent and not yet logged on (an evicted one no longer counts).
  std::size_t unauthenticated() const noexcept;
  // Counting for every connection (see SessionConnection::observe); set-up only.
  void observe(Metrics* metrics, MessageLog* const* logs) noexcept;
  // One command port per registry session, each with `send_bytes` of room
  // for queued sends; set-up only.
  void open_ports(std::size_t send_bytes);
  // Session i's port (nullptr before open_ports, or out of range).
  CommandPort* port(std::size_t i) noexcept { return i < ports_.size() ? ports_[i].get() : nullptr; }

 private:
  session::SessionRegistry& registry_;
  AcceptorLimits limits_;
  std::vector<std::unique_ptr<SessionConnection>> pool_;
  std::vector<SessionConnection*> free_;
  std::vector<std::unique_ptr<CommandPort>> ports_;
  std::vector<CommandPort*> port_ptrs_;
  std::atomic<std::size_t> in_use_{0};
  std::uint64_t opened_ = 0;  // connections lent so far: their order of arrival
};

// ProtocolFactory for one initiator session: the runtime calls open() when it
// connects (at session.next_connect_time()); one connection at a time.
class InitiatorFactory final : public engine::ProtocolFactory {
 public:
  // `send_bytes`: the command port's room for queued sends.
  InitiatorFactory(session::Session& session, const session::Clock& clock, session::Logger& log,
                   std::size_t send_bytes = 0);
  engine::Protocol* open(int connection_id) noexcept override;
  void release(engine::Protocol* p) noexcept override;
  session::Session& session() noexcept { return session_; }
  CommandPort& port() noexcept { return port_; }

 private:
  session::Session& session_;
  CommandPort port_;
  SessionConnection conn_;
  bool in_use_ = false;
};

}  // namespace kite::link
