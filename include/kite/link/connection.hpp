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
// logon timeout, is closed and the event logged. Nothing a peer sends on one
// connection touches another session.
//
// Initiator side: the connection is bound at construction and the Session
// sends its Logon in on_connected().
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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kite/codec/field_index.hpp"
#include "kite/codec/header.hpp"
#include "kite/engine/protocol.hpp"
#include "kite/link/message_log.hpp"
#include "kite/link/metrics.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"

namespace kite::link {

class SessionConnection;

// The session's SessionOutput over an engine::Outbound. With a watcher (the
// operator's counters are on) each commit is shown to it.
class OutboundOutput final : public session::SessionOutput {
 public:
  void bind(engine::Outbound* out) noexcept { out_ = out; }
  void watch(SessionConnection* w) noexcept { watch_ = w; }
  char* claim(std::size_t min) noexcept override {
    if (out_ == nullptr) return nullptr;
    last_ = out_->claim(min);
    return last_;
  }
  inline void commit(std::size_t n) noexcept override;
  void disconnect(const char* reason) noexcept override {
    if (out_) out_->close(reason, true);
  }

 private:
  engine::Outbound* out_ = nullptr;
  SessionConnection* watch_ = nullptr;
  char* last_ = nullptr;
};

// Limits on the acceptor's connections (before a session is known).
struct AcceptorLimits {
  std::size_t max_connections = 64;          // MaxConnections
  std::int32_t logon_timeout_ms = 10000;     // LogonTimeout (before a Logon arrives)
  std::uint32_t max_message_size = 64 * 1024;  // MaxMessageSize before the session is known
};

class SessionConnection final : public engine::Protocol {
 public:
  // Acceptor connection: bound by the first Logon.
  SessionConnection(session::SessionRegistry& registry, const AcceptorLimits& limits);
  // Initiator connection bound to `session`.
  SessionConnection(session::Session& session, const session::Clock& clock, session::Logger& log);

  void on_connected(engine::Outbound& out, std::int64_t now_ns) noexcept override;
  std::size_t on_data(const char* data, std::size_t n, std::int64_t now_ns) noexcept override;
  int on_timer(std::int64_t now_ns) noexcept override;
  void on_disconnected(const char* reason, std::int64_t now_ns) noexcept override;

  session::Session* session() const noexcept { return session_; }
  // The operator's view: counters per session (indexed as the registry's
  // sessions) and each session's message log (nullptr entries: none). Set at
  // set-up, before the connection is used; nullptr turns counting off.
  void observe(Metrics* metrics, MessageLog* const* logs) noexcept;
  // Bytes [p, p + n) were committed to the send buffer (OutboundOutput).
  void on_sent(const char* p, std::size_t n) noexcept;
  // A label for logs ("conn 7").
  void set_connection_id(int id) noexcept;
  bool closed() const noexcept { return closed_; }

 private:
  void refuse(const char* reason) noexcept;
  // The frame index_ holds (ir: how its build went). False when the frame
  // must wait for room in the send buffer (not consumed).
  bool handle_frame(const codec::IndexResult& ir, std::string_view frame) noexcept;
  // Counters: the session is bound / the connection ends / state published.
  void watch_session() noexcept;
  void publish() noexcept;
  std::size_t session_index(const session::Session* s) const noexcept;

  session::SessionRegistry* registry_ = nullptr;
  const session::Clock& clock_;
  session::Logger& log_;
  AcceptorLimits limits_;
  session::Session* session_ = nullptr;
  bool bound_by_logon_ = false;  // holds the session's binding
  engine::Outbound* out_ = nullptr;
  OutboundOutput output_;
  codec::FieldIndex index_;
  codec::Header header_;
  std::int64_t connected_ns_ = 0;
  bool closed_ = false;
  char who_[24] = "conn";
  // Counting (observe()): the bound session's slot, its log, and the time the
  // current inbound bytes arrived (monotonic; 0 once their first reply went).
  Metrics* metrics_ = nullptr;
  MessageLog* const* logs_ = nullptr;
  SessionMetrics* m_ = nullptr;
  MessageLog* mlog_ = nullptr;
  bool mlog_logged_error_ = false;
  std::int64_t rx_ns_ = 0;
  std::uint8_t last_state_ = 0;
  // Outbound parsing across commits: bytes left of the current message, and
  // the start of a header split by a commit.
  std::size_t out_remaining_ = 0;
  char out_head_[48] = {};
  std::size_t out_head_len_ = 0;
  void sent_message(const char* head, std::size_t head_len, const char* body, std::size_t body_len) noexcept;
};

inline void OutboundOutput::commit(std::size_t n) noexcept {
  if (out_ == nullptr) return;
  if (watch_ != nullptr && n != 0) watch_->on_sent(last_, n);
  out_->commit(n);
}

// ProtocolFactory for an acceptor: a pool of MaxConnections connections made
// at construction; open() refuses (nullptr, logged) when all are in use.
class AcceptorFactory final : public engine::ProtocolFactory {
 public:
  AcceptorFactory(session::SessionRegistry& registry, const AcceptorLimits& limits);
  engine::Protocol* open(int connection_id) noexcept override;
  void release(engine::Protocol* p) noexcept override;
  std::size_t open_connections() const noexcept { return in_use_; }
  // Counting for every connection (see SessionConnection::observe); set-up only.
  void observe(Metrics* metrics, MessageLog* const* logs) noexcept;

 private:
  session::SessionRegistry& registry_;
  AcceptorLimits limits_;
  std::vector<std::unique_ptr<SessionConnection>> pool_;
  std::vector<SessionConnection*> free_;
  std::size_t in_use_ = 0;
};

// ProtocolFactory for one initiator session: the runtime calls open() when it
// connects (at session.next_connect_time()); one connection at a time.
class InitiatorFactory final : public engine::ProtocolFactory {
 public:
  InitiatorFactory(session::Session& session, const session::Clock& clock, session::Logger& log);
  engine::Protocol* open(int connection_id) noexcept override;
  void release(engine::Protocol* p) noexcept override;
  session::Session& session() noexcept { return session_; }

 private:
  session::Session& session_;
  SessionConnection conn_;
  bool in_use_ = false;
};

}  // namespace kite::link
