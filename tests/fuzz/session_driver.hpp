// A session over a link connection driven by a fuzzer's program: raw bytes,
// well-formed messages of every session type with fuzzed numbers and flags,
// clock steps from a millisecond to a minute (the fake clock: heartbeats,
// test requests, logon and logout timeouts, resend timers), back-pressure on
// the send side, disconnects and reconnects, and application sends from our
// side. Shared by the session_timing and initiator fuzz targets.
//
// Invariants: no crash or sanitizer report; on_data() never consumes more
// than it was given; every byte the session writes frames as a complete FIX
// message whose fields index cleanly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/codec.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"

namespace kite::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

class Wire final : public engine::Outbound {
 public:
  char* claim(std::size_t min) noexcept override { return !full && min <= scratch_.size() ? scratch_.data() : nullptr; }
  void commit(std::size_t n) noexcept override {
    check(n <= scratch_.size());
    bytes.append(scratch_.data(), n);
  }
  std::size_t pending() const noexcept override { return full ? 1 : 0; }
  void close(const char*, bool) noexcept override { closed = true; }

  std::string bytes;
  bool closed = false;
  bool full = false;  // back-pressure: claim() gives nothing

 private:
  std::vector<char> scratch_ = std::vector<char>(64 * 1024);
};

class QuietApp final : public session::Application {
 public:
  void on_message(session::Session&, const codec::Header&, const codec::FieldIndex&) noexcept override {}
};

// Every message the session wrote must frame and index.
inline void check_output(std::string_view out) {
  codec::FieldIndex ix;
  while (!out.empty()) {
    const codec::FrameResult fr = codec::frame(out.data(), out.size());
    check(fr.status == codec::FrameStatus::complete);
    check(static_cast<bool>(ix.build(out.substr(0, fr.size))));
    out.remove_prefix(fr.size);
  }
}

// Reads the fuzzer's program a byte at a time (zeros past its end).
class Program {
 public:
  Program(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  bool done() const noexcept { return at_ >= n_; }
  std::uint8_t byte() noexcept { return at_ < n_ ? p_[at_++] : 0; }
  std::string_view bytes(std::size_t k) noexcept {
    const std::size_t take = std::min(k, n_ - std::min(at_, n_));
    const std::string_view v(reinterpret_cast<const char*>(p_) + at_, take);
    at_ += take;
    return v;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t at_ = 0;
};

// One session (`ours` talking to `theirs`), its connection, and the peer's
// side written by the program.
class Driver {
 public:
  Driver(bool initiator, const std::uint8_t* data, std::size_t size)
      : prog_(data, size),
        registry_(clock_, log_),
        peer_header_({"FIX.4.4", theirs(initiator), ours(initiator), "", "", "", ""}),
        peer_(peer_header_),
        initiator_(initiator) {
    session::SessionSettings s;
    s.role = initiator ? session::Role::initiator : session::Role::acceptor;
    s.begin_string = "FIX.4.4";
    s.sender_comp_id = ours(initiator);
    s.target_comp_id = theirs(initiator);
    s.heart_bt_int = 1 + prog_.byte() % 30;
    s.store.kind = session::StoreKind::memory;
    s.store.capacity_bytes = 1u << 20;
    s.max_queued = 64;
    s.queue_bytes = 64 * 1024;
    s.logon_timeout_ms = 1000 + 500 * (prog_.byte() % 20);
    session_ = &registry_.add(s, app_);
    if (initiator) {
      conn_ = std::make_unique<link::SessionConnection>(*session_, clock_, log_);
    } else {
      link::AcceptorLimits limits;
      limits.max_message_size = 8 * 1024;
      conn_ = std::make_unique<link::SessionConnection>(registry_, limits);
    }
    connect();
  }

  void run() {
    for (int ops = 0; !prog_.done() && ops < 1024; ++ops) {
      switch (prog_.byte() % 8) {
        case 0: feed(prog_.bytes(1 + prog_.byte())); break;
        case 1: message(); break;
        case 2: step(static_cast<std::int64_t>(prog_.byte()) << 8 | prog_.byte()); break;  // up to 65 s
        case 3: step(prog_.byte() % 16); break;
        case 4:
          wire_->full = !wire_->full;
          if (!wire_->full) conn_->on_timer(clock_.now_ns());
          break;
        case 5: reconnect(); break;
        case 6: send_application(); break;
        case 7: conn_->on_timer(clock_.now_ns()); break;
      }
      if (wire_->closed) reconnect();
    }
    disconnect();
  }

 private:
  static const char* ours(bool initiator) { return initiator ? "INIT" : "KITE"; }
  static const char* theirs(bool initiator) { return initiator ? "ACC" : "PEER"; }

  void connect() {
    wire_ = std::make_unique<Wire>();
    pending_.clear();
    conn_->on_connected(*wire_, clock_.now_ns());
  }
  void disconnect() {
    conn_->on_disconnected("fuzz: disconnected", clock_.now_ns());
    check_output(wire_->bytes);
  }
  void reconnect() {
    disconnect();
    if (reconnects_++ < 8)
      connect();
    else
      wire_->closed = true, stop_ = true;
  }
  void feed(std::string_view bytes) {
    if (stop_) return;
    pending_.append(bytes);
    const std::size_t used = conn_->on_data(pending_.data(), pending_.size(), clock_.now_ns());
    check(used <= pending_.size());
    pending_.erase(0, used);
  }
  void step(std::int64_t ms) {
    clock_.advance_ms(ms);
    if (!stop_) conn_->on_timer(clock_.now_ns());
  }

  // A well-formed message from the peer: its type, its number relative to the
  // one the peer would send next, and flags, all from the program.
  void message() {
    static constexpr const char* kTypes[] = {"0", "1", "2", "3", "4", "5", "A", "D", "8", "j"};
    const char* type = kTypes[prog_.byte() % 10];
    const int delta = static_cast<int>(prog_.byte() % 16) - 8;
    const std::uint8_t flags = prog_.byte();
    const std::int64_t seq = std::max<std::int64_t>(1, static_cast<std::int64_t>(peer_next_) + (flags & 1 ? delta : 0));
    if (static_cast<std::uint64_t>(seq) >= peer_next_) peer_next_ = static_cast<std::uint64_t>(seq) + 1;
    char buf[1024];
    peer_.begin(buf, sizeof buf, type, static_cast<std::uint64_t>(seq),
                clock_.now_ns() + (flags & 2 ? -200000000000 : 0));
    if (flags & 4) {
      peer_.add_bool(codec::tag::PossDupFlag, true);
      peer_.add_timestamp(codec::tag::OrigSendingTime, clock_.now_ns() - 1000000);
    }
    const std::string_view t(type);
    if (t == "A") {
      peer_.add_uint(codec::tag::EncryptMethod, 0);
      peer_.add_uint(codec::tag::HeartBtInt, flags & 8 ? 0 : 1 + (flags >> 4));
      if (flags & 16) peer_.add_bool(codec::tag::ResetSeqNumFlag, true);
      if (flags & 16) peer_next_ = 2;
    } else if (t == "1") {
      peer_.add_string(codec::tag::TestReqID, flags & 8 ? "T" : "X1");
    } else if (t == "2") {
      peer_.add_uint(codec::tag::BeginSeqNo, prog_.byte() % 32);
      peer_.add_uint(codec::tag::EndSeqNo, flags & 8 ? 0 : prog_.byte() % 32);
    } else if (t == "4") {
      if (flags & 8) peer_.add_bool(codec::tag::GapFillFlag, true);
      peer_.add_uint(codec::tag::NewSeqNo, prog_.byte() % 64);
    } else if (t == "3") {
      peer_.add_uint(codec::tag::RefSeqNum, prog_.byte());
    } else if (t == "5") {
      if (flags & 8) peer_.add_string(codec::tag::Text, "bye");
    } else if (t == "D" || t == "8") {
      peer_.add_string(codec::tag::ClOrdID, "C");
      peer_.add_string(codec::tag::Symbol, "KITE");
      peer_.add_char(codec::tag::Side, '1');
      peer_.add_uint(codec::tag::OrderQty, 100);
      peer_.add_char(codec::tag::OrdType, '2');
    }
    const std::size_t n = peer_.finish();
    check(n > 0);
    feed(std::string_view(buf, n));
  }

  void send_application() {
    if (stop_) return;
    const bool store = prog_.byte() & 1;
    const auto body = [](codec::MessageWriter& w) {
      w.add_string(codec::tag::ClOrdID, "OURS");
      w.add_string(codec::tag::Symbol, "KITE");
    };
    if (store)
      (void)session_->send_or_store(initiator_ ? "D" : "8", body);
    else
      (void)session_->send(initiator_ ? "D" : "8", body);
  }

  Program prog_;
  session::FakeClock clock_;
  session::NullLogger log_;
  QuietApp app_;
  session::SessionRegistry registry_;
  codec::HeaderTemplate peer_header_;
  codec::MessageWriter peer_;
  bool initiator_;
  session::Session* session_ = nullptr;
  std::unique_ptr<link::SessionConnection> conn_;
  std::unique_ptr<Wire> wire_;
  std::string pending_;
  std::uint64_t peer_next_ = 1;
  int reconnects_ = 0;
  bool stop_ = false;
};

}  // namespace kite::fuzz
