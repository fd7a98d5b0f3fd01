#include "kite/link/command_port.hpp"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>

#include "kite/engine/engine.hpp"

namespace kite::link {

using session::LogLevel;
using session::Session;
using Kind = Command::Kind;

// A queued command, then its type and text bytes; records are 8-byte
// aligned and never wrap: a record that would is placed at the ring's start
// (a pad record, or too few bytes for one, fills the end).
struct CommandPort::Record {
  std::uint32_t size;  // the whole record, padded to 8
  std::uint32_t text_len;
  Kind kind;
  std::uint8_t type_len;
  bool force;
  bool pad;      // nothing: the ring's end
  bool answers;  // a caller waits for the answer
  std::uint64_t ticket;
  std::uint64_t next_in;
  std::uint64_t next_out;
};

namespace {
constexpr std::size_t kHeader = 40;
constexpr std::size_t round8(std::size_t n) noexcept { return (n + 7) & ~std::size_t{7}; }
}  // namespace

CommandPort::CommandPort(std::size_t send_bytes)
    : capacity_(round8(send_bytes) + kCommandBytes),
      send_limit_(round8(send_bytes)),
      ring_(new char[round8(send_bytes) + kCommandBytes]) {
  static_assert(sizeof(Record) == kHeader);
}

// Where a record may start at or after `at`: the next lap when the end of
// the ring has no room for a header.
std::uint64_t CommandPort::skip_end(std::uint64_t at) const noexcept {
  const std::size_t left = capacity_ - static_cast<std::size_t>(at % capacity_);
  return left < kHeader ? at + left : at;
}

PortStatus CommandPort::push(const Command& c, bool answers, std::uint64_t& ticket) noexcept {
  const bool send = c.kind == Kind::send;
  if (c.msg_type.size() > 255) return PortStatus::too_large;
  const std::size_t need = round8(kHeader + c.msg_type.size() + c.text.size());
  // Sends fill at most send_limit_: the rest of the ring stays the commands'.
  if (need > (send ? send_limit_ : kCommandBytes)) return PortStatus::too_large;
  const std::size_t limit = send ? send_limit_ : capacity_;
  {
    std::lock_guard lock(mu_);
    const std::uint64_t end = skip_end(tail_.load(std::memory_order_relaxed));
    const std::size_t left = capacity_ - static_cast<std::size_t>(end % capacity_);
    const std::uint64_t at = left < need ? end + left : end;  // at the ring's start: the end is padded
    if (at + need - head_pub_.load(std::memory_order_acquire) > limit) return PortStatus::full;
    if (at != end) {
      Record pad{};
      pad.size = static_cast<std::uint32_t>(at - end);
      pad.pad = true;
      std::memcpy(ring_.get() + end % capacity_, &pad, kHeader);
    }
    Record r{};
    r.size = static_cast<std::uint32_t>(need);
    r.text_len = static_cast<std::uint32_t>(c.text.size());
    r.kind = c.kind;
    r.type_len = static_cast<std::uint8_t>(c.msg_type.size());
    r.force = c.force;
    r.answers = answers;
    r.ticket = ticket = ++next_ticket_;
    r.next_in = c.next_in;
    r.next_out = c.next_out;
    char* p = ring_.get() + at % capacity_;
    std::memcpy(p, &r, kHeader);
    if (!c.msg_type.empty()) std::memcpy(p + kHeader, c.msg_type.data(), c.msg_type.size());
    if (!c.text.empty()) std::memcpy(p + kHeader + c.msg_type.size(), c.text.data(), c.text.size());
    tail_.store(at + need, std::memory_order_release);
  }
  if (waker_ != nullptr) waker_->wake_timers();
  return PortStatus::ok;
}

PortStatus CommandPort::post(const Command& c) noexcept {
  std::uint64_t ticket = 0;
  return push(c, false, ticket);
}

CommandPort::CallOutcome CommandPort::call(const Command& c, const Session& s, int timeout_ms, Answer& a) noexcept {
  std::lock_guard asking(call_mu_);
  std::uint64_t ticket = 0;
  const PortStatus st = push(c, true, ticket);
  if (st == PortStatus::full) return CallOutcome::full;
  if (st == PortStatus::too_large) return CallOutcome::too_large;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (done_.load(std::memory_order_acquire) < ticket) {
    if (!s.bound()) {
      // Its holder may have run it just before letting go.
      if (done_.load(std::memory_order_acquire) >= ticket) break;
      return CallOutcome::unheld;
    }
    if (std::chrono::steady_clock::now() >= deadline) return CallOutcome::timed_out;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Only callers (one at a time) post records that answer: answer_ is ours or older.
  if (answered_.load(std::memory_order_acquire) != ticket) return CallOutcome::dropped;
  a = answer_;
  return CallOutcome::done;
}

void CommandPort::finish(std::uint64_t ticket, const Answer* a) noexcept {
  if (a != nullptr) {
    answer_ = *a;
    answered_.store(ticket, std::memory_order_release);
  }
  done_.store(ticket, std::memory_order_release);
}

int CommandPort::drain(Runner& runner) noexcept {
  int ran = 0;
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  while (head_ != tail) {
    const std::uint64_t at = skip_end(head_);
    if (at != head_) {
      head_ = at;
      continue;
    }
    const char* p = ring_.get() + at % capacity_;
    Record r;
    std::memcpy(&r, p, kHeader);
    if (!r.pad) {
      Command c;
      c.kind = r.kind;
      c.msg_type = std::string_view(p + kHeader, r.type_len);
      c.text = std::string_view(p + kHeader + r.type_len, r.text_len);
      c.next_in = r.next_in;
      c.next_out = r.next_out;
      c.force = r.force;
      Answer a;
      if (!runner.run(c, a)) break;
      if (head_ != at) return ran;  // the runner discarded the port
      finish(r.ticket, r.answers ? &a : nullptr);
      ++ran;
    }
    head_ = at + r.size;
    head_pub_.store(head_, std::memory_order_release);
  }
  return ran;
}

void CommandPort::discard() noexcept {
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  std::uint64_t last = 0;
  while (head_ != tail) {
    const std::uint64_t at = skip_end(head_);
    if (at != head_) {
      head_ = at;
      continue;
    }
    Record r;
    std::memcpy(&r, ring_.get() + at % capacity_, kHeader);
    if (!r.pad) last = r.ticket;
    head_ = at + r.size;
  }
  head_pub_.store(head_, std::memory_order_release);
  if (last != 0) done_.store(last, std::memory_order_release);
}

namespace {
void say(Answer& a, bool ok, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void say(Answer& a, bool ok, const char* fmt, ...) {
  a.ok = ok;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(a.text, sizeof a.text, fmt, ap);
  va_end(ap);
}

// The operator's commands; false: refused (nothing changed).
bool operate(Session& s, const Command& c, engine::Outbound* out, Answer& a) noexcept {
  switch (c.kind) {
    case Kind::logout:
      if (!s.logged_on()) {
        say(a, false, "not logged on (%s): nothing sent", to_string(s.state()));
        return false;
      }
      s.logout(c.text.empty() ? std::string_view("Logged out by the operator") : c.text);
      say(a, true, "Logout sent; the connection closes on the answer or after the logout timeout");
      return true;
    case Kind::disconnect:
      if (out == nullptr) {
        say(a, false, "not connected: nothing to disconnect");
        return false;
      }
      out->close("disconnected by the operator", true);
      say(a, true, "connection closed (no Logout sent)");
      return true;
    default:  // set_seq, reset
      if (s.logged_on() && !c.force) {
        say(a, false,
            "logged on: log it out first, or add --force (the counterparty then sees the new numbers "
            "on the next message)");
        return false;
      }
      if (c.kind == Kind::reset) {
        s.reset_sequences();
      } else {
        if (c.next_in != 0) s.set_next_target_seq(c.next_in);
        if (c.next_out != 0) s.set_next_sender_seq(c.next_out);
      }
      say(a, true, "next_in %llu, next_out %llu", static_cast<unsigned long long>(s.next_target_seq()),
          static_cast<unsigned long long>(s.next_sender_seq()));
      return true;
  }
}
}  // namespace

bool run_command(Session& s, const Command& c, engine::Outbound* out, session::Logger& log, Answer& a) noexcept {
  switch (c.kind) {
    case Kind::send: {
      const session::SendResult r = s.send(c.msg_type, [&](codec::MessageWriter& w) { w.add_raw(c.text); });
      if (r == session::SendResult::back_pressured) return false;
      // Not logged on: dropped, as the C API says; too large: its caller heard KITE_OK.
      if (r == session::SendResult::too_large)
        log.logf(LogLevel::error, s.id(), "queued %.*s not sent: larger than SendClaimBytes",
                 static_cast<int>(c.msg_type.size()), c.msg_type.data());
      a.ok = r == session::SendResult::ok;
      return true;
    }
    case Kind::shutdown:
      // A session still waiting for its Logon answer logs out once it has it.
      if (s.state() == session::SessionState::awaiting_logon) return false;
      if (s.logged_on()) s.logout(c.text);
      a.ok = true;
      return true;
    case Kind::skip_out:
      if (s.logged_on()) {
        s.set_next_sender_seq(s.next_sender_seq() + c.next_out);
        log.logf(LogLevel::warn, s.id(), "operator: outbound sequence skipped by %llu to %llu",
                 static_cast<unsigned long long>(c.next_out), static_cast<unsigned long long>(s.next_sender_seq()));
      }
      a.ok = true;
      return true;
    default:
      if (operate(s, c, out, a)) log.logf(LogLevel::warn, s.id(), "operator: %s", a.text);
      return true;
  }
}

}  // namespace kite::link
