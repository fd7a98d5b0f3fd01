// One session's command port: what other threads ask of a session (an
// operator's command, the Logout at shutdown, an application message to
// send) queued in order and run by the thread that holds the session, at its
// connection's next timer turn (SessionConnection::on_timer).
//
// Threads: post() and call() from any thread (producers take a mutex among
// themselves). pending(), drain() and discard() only from the thread that
// holds the session (Session::try_bind): its connection's thread, or a caller
// that bound an unconnected session; try_bind's acquire/release hands the
// consumer's side from one holder to the next. With nothing queued, pending()
// is one acquire load: no locked instruction on the holder's thread.
//
// Bounded and allocation-free after construction: a full port refuses
// (PortStatus::full) and the caller hears it; nothing queued is dropped except
// by discard(), whose waiting callers are told (CallOutcome::dropped).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "kite/session/log.hpp"
#include "kite/session/session.hpp"

namespace kite::engine {
class Engine;
class Outbound;
}  // namespace kite::engine

namespace kite::link {

struct Command {
  enum class Kind : std::uint8_t {
    logout,      // operator: Logout(text, or a default); refused when not logged on
    disconnect,  // operator: close the connection, no Logout
    set_seq,     // operator: next_in / next_out (0 leaves one); refused while logged on unless force
    reset,       // operator: both numbers back to 1; the same rule
    skip_out,    // next_out += next_out while logged on: the peer sees a gap (interop tests)
    shutdown,    // Logout(text) once logged on (waits while the Logon is unanswered); nothing when not
    send,        // an application message: msg_type, body in text ("tag=value\x01" bytes)
  };
  Kind kind = Kind::logout;
  std::string_view text;
  std::string_view msg_type;  // send
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  bool force = false;
};

enum class PortStatus : std::uint8_t {
  ok,
  full,       // no room now: nothing queued
  too_large,  // can never fit this port: nothing queued
};

// What a command answered (operators see `text`).
struct Answer {
  bool ok = false;
  char text[192] = {};
};

// Runs `c` on `s` from the thread that holds it; `out` is its connection
// (nullptr: none). False when it cannot run yet (a send under back-pressure,
// a shutdown Logout before the Logon's answer): it stays first in the port.
// Allocation-free.
bool run_command(session::Session& s, const Command& c, engine::Outbound* out, session::Logger& log,
                 Answer& a) noexcept;

class CommandPort {
 public:
  // Room kept for commands other than sends: a full queue of sends never
  // keeps an operator's command or the shutdown Logout out.
  static constexpr std::size_t kCommandBytes = 4096;
  // `send_bytes`: room for queued sends (0: sends are refused as too large).
  explicit CommandPort(std::size_t send_bytes = 0);
  CommandPort(const CommandPort&) = delete;
  CommandPort& operator=(const CommandPort&) = delete;

  // Any thread: queues a copy of `c` (its text and type copied) and wakes
  // the engine, when one is set, so that a quiet connection gets its turn.
  PortStatus post(const Command& c) noexcept;

  enum class CallOutcome : std::uint8_t { done, dropped, unheld, timed_out, full, too_large };
  // Any thread but the holder's: post(), then wait up to timeout_ms for the
  // holder of `s` (this port's session) to run it. done: `a` holds its
  // answer; dropped: a new holder took the session first (not run); unheld:
  // nobody holds the session now (not run: the next holder drops it);
  // timed_out: not run yet (it may still be). One caller at a time per port.
  CallOutcome call(const Command& c, const session::Session& s, int timeout_ms, Answer& a) noexcept;

  // The engine whose wake_timers() post() calls (nullptr: none; the holder
  // then polls every turn). Set-up only.
  void set_waker(engine::Engine* e) noexcept { waker_ = e; }

  // --- the holder's thread ----------------------------------------------------
  bool pending() const noexcept { return tail_.load(std::memory_order_acquire) != head_; }
  class Runner {
   public:
    virtual ~Runner() = default;
    // As run_command: false leaves `c` first in the port for the next turn.
    virtual bool run(const Command& c, Answer& a) noexcept = 0;
  };
  // Runs what is queued, in order, up to the first command that cannot run
  // yet. Returns the commands run.
  int drain(Runner& r) noexcept;
  // Drops what is queued (a new holder: requests made before it took the
  // session were not for it); their callers hear `dropped`.
  void discard() noexcept;

 private:
  struct Record;
  PortStatus push(const Command& c, bool answers, std::uint64_t& ticket) noexcept;
  std::uint64_t skip_end(std::uint64_t at) const noexcept;
  void finish(std::uint64_t ticket, const Answer* a) noexcept;

  std::size_t capacity_;
  std::size_t send_limit_;
  std::unique_ptr<char[]> ring_;
  engine::Engine* waker_ = nullptr;
  // Producers.
  std::mutex mu_;
  std::uint64_t next_ticket_ = 0;
  std::atomic<std::uint64_t> tail_{0};  // bytes published (monotonic)
  // The holder: head_ is its own; head_pub_ tells producers the room freed.
  alignas(64) std::uint64_t head_ = 0;
  std::atomic<std::uint64_t> head_pub_{0};
  // Callers: the last ticket finished (run or dropped), and whose answer
  // answer_ holds.
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> answered_{0};
  Answer answer_;
  std::mutex call_mu_;
};

}  // namespace kite::link
