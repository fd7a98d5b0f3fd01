// Test doubles for the link (target kite_link_testing): a fake engine
// connection that records what the session writes through a
// SessionConnection, and AcceptorRig, one acceptor session reached through
// a SessionConnection as the engine would drive it. The scripted peer and
// the rest come from the session layer's doubles.
#pragma once

#include <memory>
#include <string>

#include "kite/engine/protocol.hpp"
#include "kite/link/connection.hpp"
#include "support/session_testing.hpp"

namespace kite::link::test {

using session::test::acceptor_settings;
using session::test::decode_all;
using session::test::only;
using session::test::Peer;
using session::test::RecordingApp;
using session::test::Sent;
namespace tag = codec::tag;

// The session's FakeOutput seen as the engine's Outbound of one connection.
class FakeWire final : public engine::Outbound, public session::test::FakeOutput {
 public:
  char* claim(std::size_t min) noexcept override {
    ++claims;
    return FakeOutput::claim(min);
  }
  void commit(std::size_t n) noexcept override { FakeOutput::commit(n); }
  std::size_t pending() const noexcept override { return bytes.size(); }  // written, not yet taken
  void close(const char* reason, bool) noexcept override { disconnect(reason); }

  int claims = 0;  // claim() calls, answered or not
};

// An acceptor with one configured session and one connection to it.
struct AcceptorRig : session::test::RigParts<RecordingApp, FakeWire> {
  explicit AcceptorRig(session::SessionSettings s = acceptor_settings(), std::uint32_t max_queued = 10000)
      : RigParts(std::move(s), max_queued), conn(std::make_unique<SessionConnection>(registry, AcceptorLimits{})) {
    conn->on_connected(wire, clock.now_ns());
  }
  // Feeds bytes; returns how many were consumed.
  std::size_t feed(const std::string& bytes) { return conn->on_data(bytes.data(), bytes.size(), clock.now_ns()); }
  int tick() { return conn->on_timer(clock.now_ns()); }
  void logon(int hb = 30) { log_on(*this, hb); }

  std::unique_ptr<SessionConnection> conn;
};

}  // namespace kite::link::test
