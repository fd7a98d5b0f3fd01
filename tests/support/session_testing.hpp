// Test doubles for the session layer: a fake engine Outbound that records
// what the session writes (and can refuse room, to simulate back-pressure), a
// scripted peer that builds messages with the codec's MessageWriter, and an
// application that records what it is handed.
#pragma once

#include <algorithm>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/codec.hpp"
#include "kite/session/connection.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"

namespace kite::session::test {

namespace tag = codec::tag;

// One decoded message the session sent.
struct Sent {
  std::string raw;
  std::vector<std::pair<std::uint32_t, std::string>> fields;
  std::string get(std::uint32_t t) const {
    for (const auto& [k, v] : fields)
      if (k == t) return v;
    return {};
  }
  bool has(std::uint32_t t) const {
    for (const auto& f : fields)
      if (f.first == t) return true;
    return false;
  }
  std::string type() const { return get(tag::MsgType); }
  std::uint64_t seq() const { return std::stoull(get(tag::MsgSeqNum)); }
};

inline std::vector<Sent> decode_all(std::string_view bytes) {
  std::vector<Sent> out;
  codec::FieldIndex ix;
  while (!bytes.empty()) {
    const codec::FrameResult fr = codec::frame(bytes);
    EXPECT_EQ(fr.status, codec::FrameStatus::complete) << "session wrote a bad frame: " << codec::to_string(fr.error);
    if (fr.status != codec::FrameStatus::complete) break;
    Sent s;
    s.raw = std::string(bytes.substr(0, fr.size));
    EXPECT_TRUE(ix.build(s.raw));
    for (const auto& f : ix) s.fields.emplace_back(f.tag, std::string(ix.value(f)));
    out.push_back(std::move(s));
    bytes.remove_prefix(fr.size);
  }
  return out;
}

// The one message of a take(): a test failure, and an empty Sent, when
// there is not exactly one.
inline Sent only(std::vector<Sent> v) {
  EXPECT_EQ(v.size(), 1u);
  return v.size() == 1 ? std::move(v[0]) : Sent{};
}

class FakeWire final : public engine::Outbound {
 public:
  char* claim(std::size_t min) noexcept override {
    if (blocked || min > scratch_.size() || min > room) return nullptr;
    return scratch_.data();
  }
  void commit(std::size_t n) noexcept override {
    bytes.append(scratch_.data(), n);
    room -= std::min(room, n);
  }
  std::size_t pending() const noexcept override { return bytes.size(); }  // written, not yet taken
  void close(const char* reason, bool) noexcept override {
    closed = true;
    close_reason = reason;
  }
  // Decodes and forgets everything written so far.
  std::vector<Sent> take() {
    auto v = decode_all(bytes);
    bytes.clear();
    return v;
  }

  std::string bytes;
  bool blocked = false;
  // Bytes the wire can still take, like a send buffer's free room: commits
  // use it up and a claim for more than is left fails (back-pressure).
  std::size_t room = static_cast<std::size_t>(-1);
  bool closed = false;
  std::string close_reason;

 private:
  std::vector<char> scratch_ = std::vector<char>(64 * 1024);
};

class RecordingApp : public Application {
 public:
  void on_logon(Session&) noexcept override { ++logons; }
  void on_logout(Session&, const char*) noexcept override { ++logouts; }
  void on_message(Session&, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    std::string_view id;
    ix.get(tag::ClOrdID, id);
    received.push_back({h.msg_seq_num, std::string(h.msg_type), std::string(id)});
  }
  struct Msg {
    std::uint64_t seq;
    std::string type;
    std::string cl_ord_id;
  };
  std::vector<Msg> received;
  int logons = 0;
  int logouts = 0;
};

// How the peer sends one message.
struct PeerOpts {
  std::uint64_t seq = 0;  // 0: next
  bool poss_dup = false;
  std::int64_t orig_sending_offset_ms = 0;  // added to SendingTime for 122
  bool orig_sending_time = true;            // when poss_dup
  std::int64_t sending_offset_ms = 0;       // SendingTime skew
};

// The counterparty: builds messages as "PEER" talking to "KITE".
class Peer {
 public:
  explicit Peer(const Clock& clock, std::string begin = "FIX.4.4", std::string sender = "PEER",
                std::string target = "KITE")
      : clock_(clock), header_({begin, sender, target, "", "", "", ""}), writer_(header_) {}

  using Opts = PeerOpts;

  template <class Body>
  std::string make(std::string_view type, Body&& body, Opts o) {
    const std::uint64_t seq = o.seq != 0 ? o.seq : next_seq;
    if (o.seq == 0 || o.seq >= next_seq) next_seq = seq + 1;
    const std::int64_t t = clock_.now_ns() + o.sending_offset_ms * 1'000'000;
    writer_.begin(buf_, sizeof buf_, type, seq, t);
    if (o.poss_dup) {
      writer_.add_bool(tag::PossDupFlag, true);
      if (o.orig_sending_time) writer_.add_timestamp(tag::OrigSendingTime, t + o.orig_sending_offset_ms * 1'000'000);
    }
    body(writer_);
    const std::size_t n = writer_.finish();
    EXPECT_GT(n, 0u);
    return std::string(buf_, n);
  }
  template <class Body>
  std::string make(std::string_view type, Body&& body) {
    return make(type, std::forward<Body>(body), Opts{});
  }
  std::string make(std::string_view type) {
    return make(type, [](codec::MessageWriter&) {}, Opts{});
  }
  std::string logon(int hb = 30, bool reset = false, std::string_view password = {}, Opts o = {}) {
    return make(
        "A",
        [&](codec::MessageWriter& w) {
          w.add_uint(tag::EncryptMethod, 0);
          w.add_uint(tag::HeartBtInt, static_cast<std::uint64_t>(hb));
          if (reset) w.add_bool(tag::ResetSeqNumFlag, true);
          if (!password.empty()) w.add_string(tag::Password, password);
          if (header_.fields().begin_string == "FIXT.1.1") w.add_string(tag::DefaultApplVerID, "9");
        },
        o);
  }
  // ResendRequest for [begin, end] (end 0: everything from begin on).
  std::string resend_request(std::uint64_t begin, std::uint64_t end, Opts o = {}) {
    return make(
        "2",
        [&](codec::MessageWriter& w) {
          w.add_uint(tag::BeginSeqNo, begin);
          w.add_uint(tag::EndSeqNo, end);
        },
        o);
  }
  std::string order(std::string_view cl_ord_id, Opts o = {}) {
    return make(
        "D",
        [&](codec::MessageWriter& w) {
          w.add_string(tag::ClOrdID, cl_ord_id);
          w.add_string(tag::Symbol, "KITE");
          w.add_char(tag::Side, '1');
          w.add_uint(tag::OrderQty, 100);
          w.add_char(tag::OrdType, '2');
          w.add_decimal(tag::Price, {10125, -2});
        },
        o);
  }

  std::uint64_t next_seq = 1;

 private:
  const Clock& clock_;
  codec::HeaderTemplate header_;
  codec::MessageWriter writer_;
  char buf_[4096];
};

inline SessionSettings acceptor_settings(std::string begin = "FIX.4.4") {
  SessionSettings s;
  s.role = Role::acceptor;
  s.begin_string = std::move(begin);
  s.sender_comp_id = "KITE";
  s.target_comp_id = "PEER";
  s.heart_bt_int = 30;
  s.store.kind = StoreKind::memory;
  return s;
}

// An acceptor with one configured session and one connection to it.
struct AcceptorRig {
  explicit AcceptorRig(SessionSettings s = acceptor_settings(), std::uint32_t max_queued = 10000)
      : peer(clock, s.begin_string), registry(clock, log) {
    s.max_queued = max_queued;
    session = &registry.add(s, app);
    conn = std::make_unique<SessionConnection>(registry, AcceptorLimits{});
    conn->on_connected(wire, clock.now_ns());
  }
  // Feeds bytes; returns how many were consumed.
  std::size_t feed(const std::string& bytes) { return conn->on_data(bytes.data(), bytes.size(), clock.now_ns()); }
  int tick() { return conn->on_timer(clock.now_ns()); }
  // Logs on and drops the Logon answer.
  void logon(int hb = 30) {
    feed(peer.logon(hb));
    auto out = wire.take();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].type(), "A");
    ASSERT_TRUE(session->logged_on());
  }

  FakeClock clock;
  MemoryLogger log;
  RecordingApp app;
  Peer peer;
  SessionRegistry registry;
  Session* session = nullptr;
  FakeWire wire;
  std::unique_ptr<SessionConnection> conn;
};

}  // namespace kite::session::test
