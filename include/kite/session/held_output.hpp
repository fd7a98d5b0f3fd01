// HeldOutput: a SessionOutput that keeps what a session writes until its
// store says it may go (a store that commits behind the session's thread,
// MessageStore::holds_sends(): postgresql; under "sync" once committed,
// under "async" once within its window of the committed numbers).
//
// The session writes into it as into the connection. seal() tags the bytes
// written since the last seal with the store's send_mark(); the session seals
// only where everything those bytes depend on is in the store (after an
// inbound batch ended, or outside one). release() hands to the connection,
// in order, every sealed run whose mark the store reports may_send(). Under
// "sync" (mark = ticket, may_send = durable) an
// answer reaches the peer only after the transaction holding it and the
// inbound MsgSeqNum that caused it commits; while the database is away
// nothing is released and the buffer fills: claim() then returns nullptr,
// which the session treats as back-pressure (application sends report
// back_pressured; nothing is lost: every message is in the store).
//
// The buffer and the run table are allocated at construction; nothing on
// the hot path allocates. Called only from the session's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kite/session/session.hpp"
#include "kite/session/store.hpp"

namespace kite::session {

class HeldOutput final : public SessionOutput {
 public:
  // `capacity`: bytes held at most; `chunk`: most bytes handed to the
  // connection per claim (SendClaimBytes).
  HeldOutput(const MessageStore& store, std::size_t capacity, std::size_t chunk);

  // The connection the bytes go to (nullptr: none; what is held is dropped:
  // the peer gets it by resend, it is in the store).
  void bind(SessionOutput* out) noexcept;
  SessionOutput* bound() const noexcept { return out_; }

  char* claim(std::size_t min) noexcept override;
  void commit(std::size_t n) noexcept override { len_ += n; }
  // Releases what is durable, drops the rest (in the store: the peer asks
  // for it again), and closes the connection.
  void disconnect(const char* reason) noexcept override;

  // Tags the bytes committed since the last seal with the store's ticket now.
  void seal() noexcept;
  // Hands every durable sealed run to the connection, as far as it takes
  // them. Returns the bytes handed over.
  std::size_t release() noexcept;

  std::size_t held() const noexcept { return len_; }

 private:
  struct Run {
    std::size_t end;  // offset just past the run's bytes
    std::uint64_t ticket;
  };
  const MessageStore& store_;
  SessionOutput* out_ = nullptr;
  std::size_t capacity_;
  std::size_t chunk_;
  std::unique_ptr<char[]> bytes_;
  std::size_t len_ = 0;     // bytes committed
  std::size_t sealed_ = 0;  // bytes sealed (the last run's end)
  std::unique_ptr<Run[]> runs_;
  std::size_t run_capacity_;
  std::size_t runs_count_ = 0;
};

}  // namespace kite::session
