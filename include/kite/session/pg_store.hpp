// StoreKind "postgresql": a session's numbers and sent messages in
// QuickFIX's `sessions` and `messages` tables, through libpq.
//
// The session's thread never waits on the database. It works on an
// in-process copy (numbers and messages, read by get() for resends) and
// appends every change to a bounded byte ring allocated at open; a store
// thread drains the ring and writes what it finds in one transaction per
// turn (group commit: up to PostgreSQLStoreGroupMax changes). A failed
// transaction is retried after reconnecting, so a database that goes away
// loses nothing that fits in the ring; a full ring drops the change from
// the database (the copy keeps it) and counts it (lost_writes()).
//
// One holder per session: open takes a session-level advisory lock
// (pg_try_advisory_lock) keyed on the session's identity and throws when
// another connection holds it. The lock goes with the connection: on close,
// on the process's death (the server sees the socket close), and on the
// host's loss within the TCP keepalive bound (docs/store.md).
//
// Built only where libpq is found (KITE_HAVE_POSTGRESQL); elsewhere
// make_store refuses StoreKind "postgresql" with a message saying so.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kite/session/settings.hpp"
#include "kite/session/store.hpp"

struct pg_conn;

namespace kite::session {

// The key of a session's rows: QuickFIX's four columns.
struct PgSessionKey {
  std::string beginstring;
  std::string sendercompid;
  std::string targetcompid;
  std::string qualifier;  // session_qualifier: "" for Kite's sessions
  // From "FIX.4.4:SENDER->TARGET"; throws std::invalid_argument otherwise.
  static PgSessionKey from_id(std::string_view session_id);
  // The advisory lock's key: FNV-1a 64 of "begin:sender->target:qualifier".
  std::int64_t lock_key() const noexcept;
};

// The libpq connection string the settings make (keepalives included).
std::string pg_conninfo_for(const StoreSettings& s);

class PgStore final : public MessageStore {
 public:
  // Connects, creates the two tables if missing, takes the session's lock,
  // loads its numbers and messages (a new session gets a row with 1, 1) and
  // starts the store thread. Throws std::runtime_error saying what failed.
  PgStore(const StoreSettings& settings, const PgSessionKey& key, std::int64_t now_ns);
  // Writes what is queued (waiting for the database at most ~5 s), then
  // closes the connection, which releases the lock.
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  std::uint64_t next_sender_seq() const noexcept override { return copy_.next_sender_seq(); }
  std::uint64_t next_target_seq() const noexcept override { return copy_.next_target_seq(); }
  void set_next_sender_seq(std::uint64_t s) noexcept override;
  void set_next_target_seq(std::uint64_t s) noexcept override;
  bool store(std::uint64_t seq, std::string_view message) noexcept override;
  std::string_view get(std::uint64_t seq) const noexcept override { return copy_.get(seq); }
  void reset(std::int64_t creation_ns) noexcept override;
  std::int64_t creation_time() const noexcept override { return copy_.creation_time(); }
  void flush() noexcept override;
  void begin_inbound() noexcept override { in_batch_ = true; }
  void end_inbound() noexcept override;
  // Both policies hold sends: "sync" until committed, "async" only past
  // its window (PostgreSQLStoreAsyncWindow): a message numbered s goes out
  // once s < the committed outgoing_seqnum + the window, so a standby that
  // skips the window never reuses a number the peer has seen.
  bool holds_sends() const noexcept override { return true; }
  std::uint64_t ticket() const noexcept override { return appended_.load(std::memory_order_relaxed); }
  bool durable(std::uint64_t ticket) const noexcept override { return committed() >= ticket; }
  std::uint64_t send_mark() const noexcept override { return sync_ ? ticket() : copy_.next_sender_seq(); }
  bool may_send(std::uint64_t mark) const noexcept override {
    return sync_ ? durable(mark) : mark <= committed_out() + settings_.pg_async_window;
  }
  // A session new to the database (no row yet) was never sent on: nothing to skip.
  std::uint64_t unsure_sent() const noexcept override {
    return lazy_ && !sync_ && !taken_new_ ? settings_.pg_async_window : 0;
  }
  const char* unavailable() const noexcept override;
  bool begin_refresh() noexcept override;
  Refresh poll_refresh() noexcept override;
  const char* refresh_error() const noexcept override;
  void release() noexcept override;

  // Changes appended so far, and how many of them a committed transaction holds.
  std::uint64_t appended() const noexcept { return appended_.load(std::memory_order_acquire); }
  std::uint64_t committed() const noexcept { return committed_.load(std::memory_order_acquire); }
  // The outgoing_seqnum (next number out) of the session's row as last committed or loaded here.
  std::uint64_t committed_out() const noexcept { return committed_out_.load(std::memory_order_acquire); }
  // Transactions committed by the store thread (group commit: fewer than changes).
  std::uint64_t transactions() const noexcept { return transactions_.load(std::memory_order_acquire); }
  // Changes dropped because the ring was full (the database misses them).
  std::uint64_t lost_writes() const noexcept { return lost_.load(std::memory_order_acquire); }
  // Whether the last database call failed (the store thread is reconnecting).
  bool database_down() const noexcept { return down_.load(std::memory_order_acquire); }
  // Whether another holder took the session's lock while the database was away (no more writes).
  bool fenced() const noexcept { return fenced_.load(std::memory_order_acquire); }
  // Waits (set-up, tests, shutdown) until every appended change is committed; false on timeout.
  bool wait_committed(int timeout_ms) const noexcept;
  std::size_t loaded_messages() const noexcept { return loaded_; }
  // Whether this store's connection holds the session's lock now.
  bool holding() const noexcept { return holding_.load(std::memory_order_acquire); }

 private:
  enum Kind : std::uint32_t { pad = 0, message = 1, numbers = 2, wipe = 3 };
  struct Record {
    std::uint32_t kind;
    std::uint32_t length;
    std::uint64_t a;  // message: seq; numbers: next sender; wipe: creation ns
    std::uint64_t b;  // numbers: next target
  };
  void append(Kind kind, std::uint64_t a, std::uint64_t b, std::string_view bytes) noexcept;
  void run() noexcept;
  bool write_group(std::uint64_t from, std::uint64_t to, std::string& sql) noexcept;
  bool reconnect() noexcept;
  bool try_lock() noexcept;
  // After taking the lock back on a new connection: is the session's row as
  // this store last wrote it (or as its failed transaction would have left
  // it)? `changed` when another holder wrote it meanwhile (`what` says how),
  // `unknown` when it could not be read.
  enum class RowCheck { same, changed, unknown };
  RowCheck check_row(std::string& what) noexcept;
  // Takes the session's lock and reads its row and messages into `into`; "" or why not (the lock not kept).
  std::string take_and_load(MemoryStore& into, std::size_t& loaded, std::int64_t now_ns);
  void serve_refresh() noexcept;

  StoreSettings settings_;
  PgSessionKey key_;
  std::string key_sql_;  // "'FIX.4.4','A','B',''" escaped once at open
  std::string conninfo_;
  pg_conn* conn_ = nullptr;
  MemoryStore copy_;
  std::size_t loaded_ = 0;
  std::string who_;

  // RefreshOnLogon (lazy_): the lock is taken and the session loaded at each
  // Logon by the store thread (into staged_), let go at disconnect.
  enum : int { refresh_idle = 0, refresh_requested = 1, refresh_ready = 2, refresh_failed = 3 };
  bool lazy_ = false;
  bool sync_ = false;                 // PostgreSQLStoreCommit "sync"
  std::int64_t open_ns_ = 0;          // the creation time of a session new to the database
  std::atomic<bool> holding_{false};  // this connection holds the session's lock (set by the store thread)
  std::atomic<int> refresh_{refresh_idle};
  std::atomic<bool> release_{false};
  bool taken_ = false;  // the session's thread: the session is loaded and ours (writes go out)
  MemoryStore staged_{0, 0};
  std::size_t staged_loaded_ = 0;
  bool loaded_new_ = false;  // the store thread: the last load found no row (a new session)
  bool taken_new_ = false;   // the session's thread: the session taken at the last Logon was new
  std::string refresh_error_;
  bool in_batch_ = false;

  // The session's row as this store knows it (the store thread's, or set-up's):
  // as last committed or loaded, and as the transaction that failed would
  // have left it (it may have committed before the connection broke).
  struct Row {
    std::uint64_t in = 0;
    std::uint64_t out = 0;
    std::int64_t created_us = 0;
  };
  Row written_;
  Row attempted_;
  // The last message of the transaction that failed ("" when it had none):
  // found in the database, that transaction committed; another holder that
  // wrote the same numbers wrote another message.
  std::uint64_t attempted_seq_ = 0;
  std::string attempted_message_;
  bool retaking_ = false;  // reconnected, the lock not yet taken back and the row checked

  // The ring: written by the session's thread only, read by the store thread.
  std::vector<char> ring_;
  std::uint64_t write_head_ = 0;                    // the producer's position (head_ lags it inside a batch)
  alignas(64) std::atomic<std::uint64_t> head_{0};  // byte position the producer has published
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // byte position the store thread has committed
  std::atomic<std::uint64_t> appended_{0};
  std::atomic<std::uint64_t> committed_{0};
  std::atomic<std::uint64_t> committed_out_{0};  // written_.out, for the session's thread (async window)
  std::atomic<std::uint64_t> transactions_{0};
  std::atomic<std::uint64_t> lost_{0};
  std::atomic<bool> down_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> fenced_{false};  // another holder took the lock while we were away
  std::thread thread_;
};

}  // namespace kite::session
