#include "kite/link/connection.hpp"

#include <cstdio>

#include "kite/codec/framer.hpp"

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
    : registry_(&registry), clock_(registry.clock()), log_(registry.logger()), limits_(limits), index_(1024) {}

SessionConnection::SessionConnection(Session& session, const Clock& clock, Logger& log)
    : clock_(clock), log_(log), session_(&session), index_(1024) {
  limits_.max_message_size = session.settings().max_message_size;
  limits_.logon_timeout_ms = session.settings().logon_timeout_ms;
}

void SessionConnection::set_connection_id(int id) noexcept { std::snprintf(who_, sizeof who_, "conn %d", id); }

void SessionConnection::on_connected(engine::Outbound& out, std::int64_t) noexcept {
  out_ = &out;
  output_.bind(&out);
  closed_ = false;
  connected_ns_ = clock_.now_ns();
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
    session_->on_connected(output_);
  }
}

void SessionConnection::refuse(const char* reason) noexcept {
  if (closed_) return;
  closed_ = true;
  if (out_ != nullptr) out_->close(reason, true);
}

std::size_t SessionConnection::on_data(const char* data, std::size_t n, std::int64_t) noexcept {
  std::size_t used = 0;
  while (used < n && !closed_) {
    if (session_ != nullptr && session_->state() == SessionState::closing) break;
    const std::uint32_t max =
        session_ != nullptr ? session_->settings().max_message_size : limits_.max_message_size;
    // Framed and indexed in one walk (the index is empty unless complete).
    const codec::FramedIndex framed = index_.frame_and_build(data + used, n - used, max);
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
      if (session_ != nullptr) session_->on_garbled(codec::to_string(fr.error));
      else log_.logf(LogLevel::warn, who_, "garbled bytes before Logon ignored (%s)", codec::to_string(fr.error));
      used += fr.size;
      continue;
    }
    if (!handle_frame(framed.index)) break;  // back-pressure: the frame waits
    used += fr.size;
  }
  if (closed_) return n;
  return used;
}

namespace {
bool is_session_message(std::string_view t) noexcept {
  return t.size() == 1 && ((t[0] >= '0' && t[0] <= '5') || t[0] == 'A');
}
}  // namespace

bool SessionConnection::handle_frame(const codec::IndexResult& ir) noexcept {
  if (!ir) {
    if (session_ != nullptr) session_->on_garbled(codec::to_string(ir.error));
    return true;
  }
  const codec::HeaderResult hr = codec::read_header(index_, header_);
  if (!hr) {
    if (session_ != nullptr) session_->on_garbled(codec::to_string(hr.error));
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
  if (session_ != nullptr && session_->logged_on() && !is_session_message(header_.msg_type)) {
    const std::size_t claim = session_->settings().send_claim_bytes;
    // An empty buffer smaller than the reserve can never offer more: then one
    // message's room is enough rather than waiting forever.
    if (output_.claim(2 * claim) == nullptr &&
        (out_ == nullptr || out_->pending() != 0 || output_.claim(claim) == nullptr))
      return false;
  }
  if (session_ == nullptr) {
    // Acceptor: the first message must be a Logon naming a configured session.
    if (header_.msg_type != "A") {
      log_.logf(LogLevel::error, who_, "first message is not a Logon (35=%.*s): disconnecting",
                static_cast<int>(header_.msg_type.size()), header_.msg_type.data());
      refuse("first message not a Logon");
      return true;
    }
    Lookup l = registry_->identify(header_, index_);
    // Two connections of one session may race on different threads: one wins.
    if (l.refusal == Refusal::none && !l.session->try_bind()) l.refusal = Refusal::already_logged_on;
    if (l.refusal != Refusal::none) {
      log_.logf(LogLevel::error, who_, "Logon refused (%s): %.*s:%.*s->%.*s", to_string(l.refusal),
                static_cast<int>(header_.begin_string.size()), header_.begin_string.data(),
                static_cast<int>(header_.sender_comp_id.size()), header_.sender_comp_id.data(),
                static_cast<int>(header_.target_comp_id.size()), header_.target_comp_id.data());
      refuse(to_string(l.refusal));
      return true;
    }
    session_ = l.session;
    bound_by_logon_ = true;
    log_.logf(LogLevel::info, who_, "Logon identifies session %s", session_->id().c_str());
    session_->on_connected(output_);
  }
  session_->on_message(header_, index_);
  return true;
}

int SessionConnection::on_timer(std::int64_t) noexcept {
  if (closed_) return 0;
  if (session_ == nullptr) {
    if (registry_ != nullptr &&
        clock_.now_ns() - connected_ns_ >= static_cast<std::int64_t>(limits_.logon_timeout_ms) * kNsPerMs) {
      log_.logf(LogLevel::warn, who_, "no Logon within %d ms: disconnecting", limits_.logon_timeout_ms);
      refuse("logon timeout");
      return 1;
    }
    return 0;
  }
  return session_->on_timer();
}

void SessionConnection::on_disconnected(const char* reason, std::int64_t) noexcept {
  if (session_ != nullptr && bound_by_logon_) {
    if (session_->connected()) session_->on_disconnected(reason);
    session_->unbind();
  }
  bound_by_logon_ = false;
  if (registry_ != nullptr) session_ = nullptr;
  output_.bind(nullptr);
  out_ = nullptr;
  closed_ = true;
}

// ------------------------------------------------------------------ factories

AcceptorFactory::AcceptorFactory(SessionRegistry& registry, const AcceptorLimits& limits)
    : registry_(registry), limits_(limits) {
  pool_.reserve(limits.max_connections);
  free_.reserve(limits.max_connections);
  for (std::size_t i = 0; i < limits.max_connections; ++i) {
    pool_.push_back(std::make_unique<SessionConnection>(registry, limits));
    free_.push_back(pool_.back().get());
  }
}

engine::Protocol* AcceptorFactory::open(int connection_id) noexcept {
  if (free_.empty()) {
    registry_.logger().logf(LogLevel::error, "acceptor", "connection %d refused: MaxConnections (%zu) reached",
                            connection_id, limits_.max_connections);
    return nullptr;
  }
  SessionConnection* c = free_.back();
  free_.pop_back();
  c->set_connection_id(connection_id);
  ++in_use_;
  return c;
}

void AcceptorFactory::release(engine::Protocol* p) noexcept {
  if (p == nullptr) return;
  free_.push_back(static_cast<SessionConnection*>(p));
  --in_use_;
}

InitiatorFactory::InitiatorFactory(Session& session, const Clock& clock, Logger& log)
    : session_(session), conn_(session, clock, log) {}

engine::Protocol* InitiatorFactory::open(int connection_id) noexcept {
  if (in_use_) return nullptr;
  in_use_ = true;
  conn_.set_connection_id(connection_id);
  return &conn_;
}

void InitiatorFactory::release(engine::Protocol*) noexcept { in_use_ = false; }

}  // namespace kite::link
