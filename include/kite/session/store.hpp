// The message store: per session, both next sequence numbers and every
// outbound message (to serve ResendRequests).
//
// Three kinds:
//   FileStore    a memory-mapped journal file; survives kill -9 of the
//                process (bytes copied into a shared file mapping are in the
//                page cache at once), and, depending on the FlushPolicy, a
//                crash of the machine (docs/store.md).
//   MemoryStore  the same in process memory (lost with the process).
//   NullStore    keeps the numbers only; resends become gap fills (benchmarks).
//
// Store calls are made from the thread that owns the session. store() and
// the sequence setters are on the hot path: they do not throw, and do not
// allocate (but for MemoryStore's arena and index growing geometrically,
// which is rare; a FileStore allocates nothing after open).
// Opening a FileStore is set-up work and throws std::runtime_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/session/settings.hpp"

namespace kite::session {

class MessageStore {
 public:
  virtual ~MessageStore() = default;

  virtual std::uint64_t next_sender_seq() const noexcept = 0;
  virtual std::uint64_t next_target_seq() const noexcept = 0;
  virtual void set_next_sender_seq(std::uint64_t seq) noexcept = 0;
  virtual void set_next_target_seq(std::uint64_t seq) noexcept = 0;

  // Keeps one whole outbound message (as sent, with its original header)
  // under its sequence number and advances next_sender_seq to seq + 1.
  // Returns false when the store is full (the message is not kept; the
  // numbers still advance, and a resend of it becomes a gap fill).
  virtual bool store(std::uint64_t seq, std::string_view message) noexcept = 0;
  // The message stored under seq, or an empty view. The view stays valid
  // until the next store() or reset().
  virtual std::string_view get(std::uint64_t seq) const noexcept = 0;

  // Forgets every message and sets both numbers to 1; `creation_ns` stamps
  // the new period (see creation_time()).
  virtual void reset(std::int64_t creation_ns) noexcept = 0;
  // When the store's sequence numbers were last reset (UTC ns): a scheduled
  // session resets when this falls before the current period's start.
  virtual std::int64_t creation_time() const noexcept = 0;

  // A turn for time-based flushing (FlushPolicy::every_ms). Returns work done.
  virtual int poll(std::int64_t now_ns) noexcept {
    (void)now_ns;
    return 0;
  }
  // Whether poll() may have work (the default, for any store that does not
  // say): the session then asks for every timer turn. Constant for a store.
  virtual bool polls() const noexcept { return true; }
  // Forces everything to disk now (msync for a file store).
  virtual void flush() noexcept {}

  // An inbound batch: the handling of one inbound message (and of queued
  // messages it releases). Between begin_inbound() and end_inbound() the
  // inbound number set by set_next_target_seq() is visible through
  // next_target_seq() at once but made durable only by end_inbound(), in the
  // same step as every message stored in between: after a crash either the
  // number moved and all of the batch's messages are kept, or neither (the
  // peer is then asked for the message again and it is handled once). The
  // runtime must not hand a batch's messages to the socket before
  // end_inbound() (the engine flushes only after Protocol::on_data returns).
  // Stores that do not survive the process need not care (the default).
  virtual void begin_inbound() noexcept {}
  virtual void end_inbound() noexcept {}

  // A store that commits behind the session's thread (postgresql): the
  // session hands a message to the wire only once may_send(m) holds for a
  // send_mark() taken after the message was stored and its inbound batch
  // ended (under "sync": once durable). Stores durable as soon as written
  // need none of it.
  virtual bool holds_sends() const noexcept { return false; }
  // A mark covering every change made so far (the session's thread).
  virtual std::uint64_t ticket() const noexcept { return 0; }
  // Whether every change up to `ticket` is committed.
  virtual bool durable(std::uint64_t ticket) const noexcept {
    (void)ticket;
    return true;
  }
  // What HeldOutput tags and tests (by default the ticket and its commit):
  // a mark taken after the bytes it covers were stored, and whether bytes
  // so marked may reach the peer now. A store may let them go before they
  // commit (postgresql "async", within its window).
  virtual std::uint64_t send_mark() const noexcept { return ticket(); }
  virtual bool may_send(std::uint64_t mark) const noexcept { return durable(mark); }
  // After a RefreshOnLogon reload, under a policy that sends before it
  // commits (postgresql "async"): how many outbound MsgSeqNums past
  // next_sender_seq() the previous holder may have sent without the store
  // knowing. The acceptor skips them at the Logon (docs/store.md). 0: none.
  virtual std::uint64_t unsure_sent() const noexcept { return 0; }
  // Why the store cannot take a Logon now (static text: its database is
  // away), or nullptr.
  virtual const char* unavailable() const noexcept { return nullptr; }

  // RefreshOnLogon: a store shared with a standby (postgresql) takes the
  // session (its lock) and reloads numbers and messages when a Logon
  // arrives, off the session's thread. begin_refresh() asks for it (false:
  // this store has nothing to reload; go on at once); poll_refresh() tells
  // when it is done (the store then holds the loaded state) or failed
  // (refresh_error() says why). release() lets the session go at disconnect,
  // once what is queued is written.
  enum class Refresh : unsigned char { pending, done, failed };
  virtual bool begin_refresh() noexcept { return false; }
  virtual Refresh poll_refresh() noexcept { return Refresh::done; }
  virtual const char* refresh_error() const noexcept { return ""; }
  virtual void release() noexcept {}
};

class alignas(64) NullStore final : public MessageStore {
 public:
  std::uint64_t next_sender_seq() const noexcept override { return sender_; }
  std::uint64_t next_target_seq() const noexcept override { return target_; }
  void set_next_sender_seq(std::uint64_t s) noexcept override { sender_ = s; }
  void set_next_target_seq(std::uint64_t s) noexcept override { target_ = s; }
  bool store(std::uint64_t seq, std::string_view) noexcept override {
    sender_ = seq + 1;
    return true;
  }
  std::string_view get(std::uint64_t) const noexcept override { return {}; }
  void reset(std::int64_t creation_ns) noexcept override {
    sender_ = target_ = 1;
    created_ = creation_ns;
  }
  std::int64_t creation_time() const noexcept override { return created_; }
  bool polls() const noexcept override { return false; }

 private:
  std::uint64_t sender_ = 1;
  std::uint64_t target_ = 1;
  std::int64_t created_ = 0;
};

// Messages in one growing byte arena with an offset index.
class alignas(64) MemoryStore final : public MessageStore {
 public:
  explicit MemoryStore(std::size_t reserve_bytes = 1u << 20, std::size_t reserve_messages = 8192);
  std::uint64_t next_sender_seq() const noexcept override { return sender_; }
  std::uint64_t next_target_seq() const noexcept override { return target_; }
  void set_next_sender_seq(std::uint64_t s) noexcept override { sender_ = s; }
  void set_next_target_seq(std::uint64_t s) noexcept override { target_ = s; }
  bool store(std::uint64_t seq, std::string_view message) noexcept override;
  std::string_view get(std::uint64_t seq) const noexcept override;
  void reset(std::int64_t creation_ns) noexcept override;
  std::int64_t creation_time() const noexcept override { return created_; }
  bool polls() const noexcept override { return false; }

 private:
  struct Slot {
    std::uint64_t offset;
    std::uint32_t length;
  };
  std::vector<char> bytes_;
  std::vector<Slot> slots_;  // index seq - first_seq_
  std::uint64_t first_seq_ = 0;
  std::uint64_t sender_ = 1;
  std::uint64_t target_ = 1;
  std::int64_t created_ = 0;
};

// The journal file "<dir>/<name>.journal":
//   a 4 KiB header page: magic, version, generation, next sender and target
//   numbers, creation time;
//   then records, each 8-byte aligned: {u32 length, u32 hash, u64 seq,
//   u32 generation, u32 magic, u64 commit} + message bytes. A record is
//   written body first and its header last, and its hash covers header
//   (commit aside) and body, so a torn record at the tail (a kill -9
//   mid-copy, a machine crash with a partial write-back) fails the check and
//   ends the journal there. `commit` is the inbound next number that holds
//   once the record is complete: 0 while the record belongs to an inbound
//   batch still being handled; the batch's last record gets it at
//   end_inbound(). Records after the last committed one are an unfinished
//   batch and are dropped at open (docs/store.md).
// reset() bumps the generation and rewinds: older records stop being read
// because their generation differs.
class FileStore final : public MessageStore {
 public:
  // Opens (or creates) the journal for `name` in `dir` (created if missing)
  // and recovers numbers and messages from it. `capacity_bytes` is the size
  // of the mapping (a sparse file); a full journal refuses further messages.
  FileStore(const std::string& dir, const std::string& name, const StoreSettings& settings, std::int64_t now_ns);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  std::uint64_t next_sender_seq() const noexcept override;
  std::uint64_t next_target_seq() const noexcept override;
  void set_next_sender_seq(std::uint64_t s) noexcept override;
  void set_next_target_seq(std::uint64_t s) noexcept override;
  bool store(std::uint64_t seq, std::string_view message) noexcept override;
  std::string_view get(std::uint64_t seq) const noexcept override;
  void reset(std::int64_t creation_ns) noexcept override;
  std::int64_t creation_time() const noexcept override;
  int poll(std::int64_t now_ns) noexcept override;
  void flush() noexcept override;
  void begin_inbound() noexcept override;
  void end_inbound() noexcept override;

  const std::string& path() const noexcept { return path_; }
  // Records recovered at open, and bytes dropped from a torn tail.
  std::size_t recovered_messages() const noexcept { return recovered_; }
  std::size_t discarded_tail_bytes() const noexcept { return discarded_; }
  // Records of an unfinished inbound batch dropped at open.
  std::size_t discarded_batch_messages() const noexcept { return discarded_batch_; }
  // Every stored message in journal order, (seq, bytes) (the inspection tool).
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : index_) f(s.seq, std::string_view(base_ + s.offset, s.length));
  }

  // The journal file name for a session ID ("FIX.4.4:A->B" -> "FIX.4.4-A-B").
  static std::string file_name_for(std::string_view session_id);

  struct Page;  // the header page's layout (store.cpp)

 private:
  struct Slot {
    std::uint64_t seq;
    std::uint64_t offset;  // of the message bytes in the mapping
    std::uint32_t length;
  };
  // The records' index in an anonymous mapping sized at open for the most
  // records the journal can hold, so that storing never allocates or copies.
  class SlotTable {
   public:
    SlotTable() = default;
    SlotTable(const SlotTable&) = delete;
    SlotTable& operator=(const SlotTable&) = delete;
    ~SlotTable();
    // Reserves `capacity` slots and touches the first `populate`; false (errno set) when it cannot.
    bool map(std::size_t capacity, std::size_t populate) noexcept;
    bool push_back(const Slot& s) noexcept {
      if (size_ == capacity_) return false;
      slots_[size_++] = s;
      return true;
    }
    void clear() noexcept { size_ = 0; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    const Slot& operator[](std::size_t i) const noexcept { return slots_[i]; }
    const Slot& back() const noexcept { return slots_[size_ - 1]; }
    const Slot* begin() const noexcept { return slots_; }
    const Slot* end() const noexcept { return slots_ + size_; }

   private:
    Slot* slots_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
  };
  Page* page() const noexcept;
  void sync_range(std::size_t from, std::size_t to) noexcept;
  void recover();

  std::string path_;
  StoreSettings settings_;
  int fd_ = -1;
  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t tail_ = 0;        // where the next record goes
  std::size_t synced_to_ = 0;   // bytes of records known to be msynced
  std::uint32_t unsynced_ = 0;  // messages since the last msync
  std::int64_t last_sync_ns_ = 0;
  std::int64_t now_hint_ns_ = 0;
  SlotTable index_;  // in journal order; seqs increase within a generation
  std::size_t recovered_ = 0;
  std::size_t discarded_ = 0;
  std::size_t discarded_batch_ = 0;
  // The inbound next number as the session sees it (the page holds the
  // committed one) and the batch being handled.
  std::uint64_t target_ = 1;
  bool in_batch_ = false;
  bool batch_stored_ = false;   // a record was stored in this batch
  std::size_t batch_last_ = 0;  // offset of the batch's last record header
};

// What a journal holds, read without changing it (the inspection tool).
struct JournalSummary {
  std::uint64_t next_sender_seq = 0;
  std::uint64_t next_target_seq = 0;
  std::int64_t creation_ns = 0;
  std::uint32_t generation = 0;
  std::size_t messages = 0;
  std::size_t unfinished = 0;  // records of an unfinished inbound batch (not listed)
};
// Calls each(seq, message) for every valid record of the journal at `path`
// in order, up to the last committed one; the numbers are the ones a
// FileStore opening it would recover. Throws std::runtime_error when the file is not a Kite journal.
JournalSummary read_journal(const std::string& path, const std::function<void(std::uint64_t, std::string_view)>& each);

// Makes the store a session's settings ask for (a FileStore under
// settings.path named after `session_id`). Throws at set-up on failure.
std::unique_ptr<MessageStore> make_store(const StoreSettings& settings, std::string_view session_id,
                                         std::int64_t now_ns);

}  // namespace kite::session
