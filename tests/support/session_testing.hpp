// Test doubles for the session layer (target kite_session_testing): a fake
// SessionOutput that records what the session writes (and can refuse room,
// to simulate back-pressure), a scripted peer that builds messages with the
// codec's MessageWriter, an application that records what it is handed, and
// SessionRig, a session driven by that peer with nothing in between.
#pragma once

#include <algorithm>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/codec.hpp"
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

// Records what the session writes; disconnect() marks it closed.
class FakeOutput : public SessionOutput {
 public:
  char* claim(std::size_t min) noexcept override {
    if (blocked || min > scratch_.size() || min > room) return nullptr;
    return scratch_.data();
  }
  void commit(std::size_t n) noexcept override {
    bytes.append(scratch_.data(), n);
    room -= std::min(room, n);
  }
  void disconnect(const char* reason) noexcept override {
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
    return make(
        type, [](codec::MessageWriter&) {}, Opts{});
  }
  std::string logon(int hb = 30, bool reset = false, std::string_view password = {}, Opts o = {}) {
    return make(
        "A",
        [&](codec::MessageWriter& w) {
          w.add_uint(tag::EncryptMethod, 0);
          w.add_uint(tag::HeartBtInt, static_cast<std::uint64_t>(hb));
          if (reset) w.add_bool(tag::ResetSeqNumFlag, true);
          if (!password.empty()) w.add_string(tag::Password, password);
          if (header_.fields().begin_string == "FIXT.1.1") w.add_string(tag::DefaultApplVerID, appl_ver_id);
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
  std::string appl_ver_id = "9";  // the Logon's DefaultApplVerID on FIXT.1.1

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

// What every rig holds: one acceptor session (KITE talking to PEER) in a
// registry, its application, the scripted peer and the fake clock; `wire` is
// what the session writes into (Output: a FakeOutput, or a fake engine
// connection in the link's rig).
template <class App, class Output>
struct RigParts {
  // `store`: the session's (by default, the one its settings describe).
  RigParts(SessionSettings s, std::uint32_t max_queued, std::unique_ptr<MessageStore> store = nullptr)
      : peer(clock, s.begin_string), registry(clock, log) {
    s.max_queued = max_queued;
    peer.appl_ver_id = s.default_appl_ver_id;
    session = &registry.add(s, app, std::move(store));
  }
  // The peer logs on; the Logon answer is checked and dropped. Rig: has feed().
  template <class Rig>
  static void log_on(Rig& r, int hb) {
    r.feed(r.peer.logon(hb));
    auto out = r.wire.take();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].type(), "A") << out[0].raw;
    ASSERT_TRUE(r.session->logged_on());
  }

  FakeClock clock;
  MemoryLogger log;
  App app;
  Peer peer;
  SessionRegistry registry;
  Session* session = nullptr;
  Output wire;
};

// An acceptor session and its peer with nothing in between: feed() frames and
// indexes the peer's bytes with the codec and hands each message to the
// session, connecting it to `wire` at the first one (as the link does at the
// Logon); garbled frames go to on_garbled().
template <class App = RecordingApp>
struct BasicSessionRig : RigParts<App, FakeOutput> {
  explicit BasicSessionRig(SessionSettings s = acceptor_settings(), std::uint32_t max_queued = 10000,
                           std::unique_ptr<MessageStore> store = nullptr)
      : RigParts<App, FakeOutput>(std::move(s), max_queued, std::move(store)) {}

  // Feeds bytes; returns how many were consumed (up to an incomplete frame,
  // or to the end of the message that made the session close).
  std::size_t feed(std::string_view bytes) {
    Session& s = *this->session;
    std::size_t used = 0;
    while (used < bytes.size() && s.state() != SessionState::closing) {
      const codec::FramedIndex framed =
          index_.frame_and_build(bytes.data() + used, bytes.size() - used, s.settings().max_message_size);
      // A frame over MaxMessageSize closes the connection: the link's part.
      const codec::FrameResult& fr = framed.frame;
      if (fr.status == codec::FrameStatus::incomplete ||
          (fr.status == codec::FrameStatus::invalid && fr.error == codec::FrameError::too_large))
        break;
      used += fr.size;
      if (fr.status == codec::FrameStatus::invalid) {
        s.on_garbled(codec::to_string(fr.error));
      } else if (!framed.index) {
        // As the link: a tag that is no number is the session's to answer.
        if (framed.index.error != codec::IndexError::bad_tag || !s.connected() ||
            !s.on_invalid_tag({bytes.data() + used - fr.size, fr.size}, framed.index.offset))
          s.on_garbled(codec::to_string(framed.index.error));
      } else if (const codec::HeaderResult hr = codec::read_header(index_, header_); !hr) {
        s.on_garbled(codec::to_string(hr.error));
      } else {
        if (!s.connected()) s.on_connected(*output_);
        s.on_message(header_, index_);
      }
    }
    return used;
  }
  int tick() { return this->session->on_timer(); }
  void logon(int hb = 30) { this->log_on(*this, hb); }
  // The connection is gone.
  void disconnect(const char* reason) {
    if (this->session->connected()) this->session->on_disconnected(reason);
  }
  // Where the session writes from its next connection on (`wire` until then).
  void use_output(SessionOutput& out) { output_ = &out; }

 private:
  SessionOutput* output_ = &this->wire;
  codec::FieldIndex index_{1024};
  codec::Header header_;
};
using SessionRig = BasicSessionRig<>;

}  // namespace kite::session::test
