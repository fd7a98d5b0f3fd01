#include "kite/session/store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "kite/session/clock.hpp"
#ifdef KITE_HAVE_POSTGRESQL
#include "kite/session/pg_store.hpp"
#endif

namespace kite::session {

// ---------------------------------------------------------------- MemoryStore

MemoryStore::MemoryStore(std::size_t reserve_bytes, std::size_t reserve_messages) {
  bytes_.reserve(reserve_bytes);
  slots_.reserve(reserve_messages);
}

bool MemoryStore::store(std::uint64_t seq, std::string_view message) noexcept {
  sender_ = seq + 1;
  try {
    if (slots_.empty()) first_seq_ = seq;
    if (seq < first_seq_) return false;
    const std::uint64_t at = seq - first_seq_;
    if (at > slots_.size() + (1u << 20)) return false;  // absurd jump: refuse rather than allocate
    const std::uint64_t off = bytes_.size();
    bytes_.insert(bytes_.end(), message.begin(), message.end());
    if (at >= slots_.size()) slots_.resize(at + 1, Slot{0, 0});
    slots_[at] = {off, static_cast<std::uint32_t>(message.size())};
    return true;
  } catch (...) {
    return false;
  }
}

std::string_view MemoryStore::get(std::uint64_t seq) const noexcept {
  if (slots_.empty() || seq < first_seq_ || seq - first_seq_ >= slots_.size()) return {};
  const Slot& s = slots_[seq - first_seq_];
  if (s.length == 0) return {};
  return {bytes_.data() + s.offset, s.length};
}

void MemoryStore::reset(std::int64_t creation_ns) noexcept {
  bytes_.clear();
  slots_.clear();
  first_seq_ = 0;
  sender_ = target_ = 1;
  created_ = creation_ns;
}

// ------------------------------------------------------------------ FileStore

namespace {

constexpr std::uint64_t kFileMagic = 0x4c4e524a4554494bull;  // "KITEJRNL"
constexpr std::uint32_t kVersion = 2;                        // 2: records carry the inbound commit
constexpr std::uint32_t kRecordMagic = 0x4b524543u;          // "KREC"
constexpr std::size_t kPageSize = 4096;

struct RecordHeader {
  std::uint32_t length;
  std::uint32_t hash;
  std::uint64_t seq;
  std::uint32_t generation;
  std::uint32_t magic;
  std::uint64_t commit;  // inbound next number once complete; 0 inside an unfinished batch
};
static_assert(sizeof(RecordHeader) == 32);

constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

// A cheap word-at-a-time hash: enough to detect a torn or stale record.
std::uint32_t record_hash(std::uint64_t seq, std::uint32_t generation, const char* p, std::size_t n) noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ seq ^ (static_cast<std::uint64_t>(generation) << 32) ^ n;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  std::uint64_t w = 0;
  std::memcpy(&w, p + i, n - i);
  h = (h ^ w) * 0x100000001b3ull;
  h ^= h >> 32;
  return static_cast<std::uint32_t>(h);
}

}  // namespace

struct FileStore::Page {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t generation;
  std::uint64_t next_sender;
  std::uint64_t next_target;
  std::int64_t creation_ns;
  // Journal offset the records had when next_target was last written: a
  // committed record ending after it is newer than next_target.
  std::uint64_t commit_tail;
};

FileStore::Page* FileStore::page() const noexcept { return reinterpret_cast<Page*>(base_); }

std::string FileStore::file_name_for(std::string_view id) {
  std::string out;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    if (c == '-' && i + 1 < id.size() && id[i + 1] == '>') {
      out += '-';
      ++i;
    } else if (c == ':' || c == '/' || c == '\\') {
      out += '-';
    } else {
      out += c;
    }
  }
  return out;
}

FileStore::FileStore(const std::string& dir, const std::string& name, const StoreSettings& settings,
                     std::int64_t now_ns)
    : settings_(settings), last_sync_ns_(now_ns), now_hint_ns_(now_ns) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("store: cannot create folder " + dir + ": " + std::strerror(errno));
  path_ = dir + "/" + name + ".journal";
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("store: cannot open " + path_ + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd_, &st);
  const bool fresh = st.st_size == 0;
  size_ = settings.capacity_bytes < 2 * kPageSize ? 2 * kPageSize : settings.capacity_bytes;
  size_ = (size_ + kPageSize - 1) / kPageSize * kPageSize;
  if (static_cast<std::size_t>(st.st_size) > size_) size_ = static_cast<std::size_t>(st.st_size);
  // The blocks are allocated and the pages mapped now, at set-up, so that the
  // send path never takes a page fault or waits on block allocation.
  if (static_cast<std::size_t>(st.st_size) < size_ && ::posix_fallocate(fd_, 0, static_cast<off_t>(size_)) != 0 &&
      ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    ::close(fd_);
    throw std::runtime_error("store: cannot size " + path_ + ": " + std::strerror(errno));
  }
  void* m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (m == MAP_FAILED) {
    ::close(fd_);
    throw std::runtime_error("store: cannot map " + path_ + ": " + std::strerror(errno));
  }
  base_ = static_cast<char*>(m);
  // A record takes at least a header and 8 bytes; a typical FIX record a few hundred.
  const std::size_t records = size_ - kPageSize;
  if (!index_.map(records / (sizeof(RecordHeader) + 8) + 1, records / 256)) {
    const int err = errno;
    ::munmap(base_, size_);
    ::close(fd_);
    throw std::runtime_error("store: cannot map the index of " + path_ + ": " + std::strerror(err));
  }
  Page* pg = page();
  if (fresh || pg->magic == 0) {
    pg->version = kVersion;
    pg->generation = 1;
    pg->next_sender = 1;
    pg->next_target = 1;
    pg->creation_ns = now_ns;
    pg->commit_tail = kPageSize;
    pg->magic = kFileMagic;
    tail_ = kPageSize;
    flush();
  } else {
    if (pg->magic != kFileMagic || pg->version != kVersion) {
      const bool old = pg->magic == kFileMagic && pg->version < kVersion;
      ::munmap(base_, size_);
      ::close(fd_);
      throw std::runtime_error("store: " + path_ +
                               (old ? " is a journal of an older Kite (version 1, no inbound commits): move it away "
                                      "or reset the session"
                                    : " is not a Kite journal (bad magic or version)"));
    }
    recover();
  }
  target_ = pg->next_target;
  synced_to_ = tail_;
}

namespace {

// Walks valid records from the first page on, up to `limit`; returns where
// they end. each(seq, body offset, length, commit).
template <class F>
std::size_t scan_records(const char* base, std::size_t size, std::uint32_t generation, std::size_t limit, F&& each) {
  std::size_t at = kPageSize;
  std::uint64_t last_seq = 0;
  while (at + sizeof(RecordHeader) <= size && at < limit) {
    RecordHeader h;
    std::memcpy(&h, base + at, sizeof h);
    if (h.magic != kRecordMagic || h.generation != generation) break;
    const std::size_t body = at + sizeof h;
    if (h.length == 0 || h.length > size - body) break;
    if (record_hash(h.seq, h.generation, base + body, h.length) != h.hash) break;
    if (h.seq <= last_seq) break;  // seqs rise within a generation
    each(h.seq, body, h.length, h.commit);
    last_seq = h.seq;
    at = body + align8(h.length);
  }
  return at;
}

// Where the complete records end and which numbers hold, by the rule of
// docs/store.md: records after the last committed one are an unfinished
// inbound batch; a committed record newer than the page's commit_tail
// carries a newer inbound number than the page.
struct Committed {
  std::size_t valid_end = kPageSize;  // end of every valid record
  std::size_t end = kPageSize;        // end of the last committed record
  std::uint64_t next_target = 0;
  std::uint64_t last_seq = 0;        // of the last committed record
  std::uint64_t first_open_seq = 0;  // first record of the unfinished batch, 0 if none
  std::size_t records = 0;           // committed records
  std::size_t open_records = 0;
};

Committed find_committed(const char* base, std::size_t size, const FileStore::Page& pg) {
  Committed c;
  std::uint64_t last_commit = 0;
  c.valid_end = scan_records(base, size, pg.generation, size,
                             [&](std::uint64_t seq, std::size_t body, std::uint32_t len, std::uint64_t commit) {
                               if (c.open_records == 0) c.first_open_seq = seq;
                               ++c.open_records;
                               if (commit != 0) {
                                 c.records += c.open_records;
                                 c.open_records = 0;
                                 c.first_open_seq = 0;
                                 c.end = body + align8(len);
                                 c.last_seq = seq;
                                 last_commit = commit;
                               }
                             });
  c.next_target = pg.next_target;
  if (last_commit != 0 && c.end > pg.commit_tail) c.next_target = last_commit;
  return c;
}

}  // namespace

void FileStore::recover() {
  Page* pg = page();
  const Committed c = find_committed(base_, size_, *pg);
  scan_records(base_, size_, pg->generation, c.end,
               [&](std::uint64_t seq, std::size_t body, std::uint32_t len, std::uint64_t) {
                 index_.push_back({seq, body, len});
               });
  // An unfinished batch (killed while an inbound message was being handled)
  // was never handed to the socket: its records go, its numbers are reused,
  // and the inbound number stays where the batch found it.
  tail_ = c.end;
  discarded_batch_ = c.open_records;
  recovered_ = index_.size();
  const std::uint64_t last_seq = c.last_seq;
  if (c.first_open_seq != 0) pg->next_sender = c.first_open_seq;
  if (c.next_target != pg->next_target) pg->next_target = c.next_target;
  pg->commit_tail = tail_;
  // Whatever lies after the last good record (a torn write) is wiped so that
  // a later, shorter record cannot be followed by stale bytes that look valid.
  std::size_t end = tail_;
  while (end + sizeof(RecordHeader) <= size_) {
    std::uint32_t magic;
    std::memcpy(&magic, base_ + end + offsetof(RecordHeader, magic), sizeof magic);
    if (magic != kRecordMagic) break;
    end += sizeof(RecordHeader);
    RecordHeader h;
    std::memcpy(&h, base_ + end - sizeof h, sizeof h);
    end += h.length <= size_ - end ? align8(h.length) : 0;
  }
  if (end > tail_) {
    discarded_ = end - tail_;
    std::memset(base_ + tail_, 0, end - tail_);
  } else if (tail_ + sizeof(RecordHeader) <= size_) {
    // A torn header without magic can still hold junk: clear one header's worth.
    char zero[sizeof(RecordHeader)] = {};
    if (std::memcmp(base_ + tail_, zero, sizeof zero) != 0) {
      discarded_ = sizeof zero;
      std::memset(base_ + tail_, 0, sizeof zero);
    }
  }
  // A record stored but its number not yet advanced (killed in between).
  if (last_seq + 1 > pg->next_sender) pg->next_sender = last_seq + 1;
}

bool FileStore::SlotTable::map(std::size_t capacity, std::size_t populate) noexcept {
  void* m = ::mmap(nullptr, capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return false;
  slots_ = static_cast<Slot*>(m);
  capacity_ = capacity;
  size_ = 0;
  // Touched now, at set-up, so the first records' stores take no page fault.
  std::memset(static_cast<void*>(slots_), 0, std::min(populate, capacity) * sizeof(Slot));
  return true;
}

FileStore::SlotTable::~SlotTable() {
  if (slots_ != nullptr) ::munmap(slots_, capacity_ * sizeof(Slot));
}

FileStore::~FileStore() {
  if (base_ != nullptr) {
    if (settings_.flush != FlushPolicy::none) ::msync(base_, size_, MS_SYNC);
    ::munmap(base_, size_);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t FileStore::next_sender_seq() const noexcept { return page()->next_sender; }
std::uint64_t FileStore::next_target_seq() const noexcept { return target_; }
void FileStore::set_next_sender_seq(std::uint64_t s) noexcept { page()->next_sender = s; }
void FileStore::set_next_target_seq(std::uint64_t s) noexcept {
  target_ = s;
  if (in_batch_) return;  // end_inbound() makes it durable with the batch's messages
  Page* pg = page();
  pg->next_target = s;
  std::atomic_signal_fence(std::memory_order_release);
  pg->commit_tail = tail_;
}

void FileStore::begin_inbound() noexcept {
  in_batch_ = true;
  batch_stored_ = false;
}

void FileStore::end_inbound() noexcept {
  if (!in_batch_) return;
  in_batch_ = false;
  Page* pg = page();
  // One aligned 8-byte store commits the batch (its last record, hence all
  // earlier ones, and the inbound number); the page follows.
  if (batch_stored_) {
    std::memcpy(base_ + batch_last_ + offsetof(RecordHeader, commit), &target_, sizeof target_);
    std::atomic_signal_fence(std::memory_order_release);
    if (batch_last_ < synced_to_) synced_to_ = batch_last_;  // the next msync covers the commit word
  }
  if (pg->next_target != target_ || batch_stored_) {
    pg->next_target = target_;
    std::atomic_signal_fence(std::memory_order_release);
    pg->commit_tail = tail_;
    if (settings_.flush == FlushPolicy::every_message) sync_range(batch_stored_ ? batch_last_ : tail_, tail_);
  }
  batch_stored_ = false;
}
std::int64_t FileStore::creation_time() const noexcept { return page()->creation_ns; }

bool FileStore::store(std::uint64_t seq, std::string_view message) noexcept {
  Page* pg = page();
  const std::size_t need = sizeof(RecordHeader) + align8(message.size());
  if (message.empty() || tail_ + need > size_ || (!index_.empty() && seq <= index_.back().seq)) {
    if (seq + 1 > pg->next_sender) pg->next_sender = seq + 1;
    return false;
  }
  const std::size_t body = tail_ + sizeof(RecordHeader);
  std::memcpy(base_ + body, message.data(), message.size());
  RecordHeader h{static_cast<std::uint32_t>(message.size()), 0, seq, pg->generation, 0, in_batch_ ? 0 : target_};
  h.hash = record_hash(seq, h.generation, message.data(), message.size());
  // Header last, magic last of all: a reader never sees a record whose body
  // is not in place yet.
  std::memcpy(base_ + tail_, &h, offsetof(RecordHeader, magic));
  std::memcpy(base_ + tail_ + offsetof(RecordHeader, commit), &h.commit, sizeof h.commit);
  std::atomic_signal_fence(std::memory_order_release);
  std::memcpy(base_ + tail_ + offsetof(RecordHeader, magic), &kRecordMagic, sizeof kRecordMagic);
  if (in_batch_) {
    batch_stored_ = true;
    batch_last_ = tail_;
  }
  tail_ += need;
  index_.push_back({seq, body, h.length});  // cannot be full: sized for the journal's most records
  pg->next_sender = seq + 1;

  switch (settings_.flush) {
    case FlushPolicy::none: break;
    case FlushPolicy::every_message: sync_range(synced_to_, tail_); break;
    case FlushPolicy::every_n:
      if (++unsynced_ >= settings_.flush_every_n) sync_range(synced_to_, tail_);
      break;
    case FlushPolicy::every_ms: ++unsynced_; break;  // poll() does it
  }
  return true;
}

void FileStore::sync_range(std::size_t from, std::size_t to) noexcept {
  // The header page (numbers) and the records written since the last sync.
  const std::size_t start = from / kPageSize * kPageSize;
  ::msync(base_, kPageSize, MS_SYNC);
  if (to > start) ::msync(base_ + start, to - start, MS_SYNC);
  synced_to_ = to;
  unsynced_ = 0;
}

int FileStore::poll(std::int64_t now_ns) noexcept {
  now_hint_ns_ = now_ns;
  if (settings_.flush != FlushPolicy::every_ms || unsynced_ == 0) return 0;
  if (now_ns - last_sync_ns_ < static_cast<std::int64_t>(settings_.flush_every_ms) * kNsPerMs) return 0;
  sync_range(synced_to_, tail_);
  last_sync_ns_ = now_ns;
  return 1;
}

void FileStore::flush() noexcept { sync_range(kPageSize, tail_); }

std::string_view FileStore::get(std::uint64_t seq) const noexcept {
  // Binary search: seqs rise in journal order.
  std::size_t lo = 0, hi = index_.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (index_[mid].seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == index_.size() || index_[lo].seq != seq) return {};
  return {base_ + index_[lo].offset, index_[lo].length};
}

void FileStore::reset(std::int64_t creation_ns) noexcept {
  Page* pg = page();
  pg->generation += 1;
  pg->next_sender = 1;
  pg->next_target = 1;
  pg->creation_ns = creation_ns;
  pg->commit_tail = kPageSize;
  target_ = 1;
  batch_stored_ = false;
  // Old records now carry a stale generation; clear the first header so the
  // scan ends at once even before new records overwrite the old ones.
  std::memset(base_ + kPageSize, 0, sizeof(RecordHeader));
  tail_ = kPageSize;
  synced_to_ = tail_;
  index_.clear();
  if (settings_.flush != FlushPolicy::none) ::msync(base_, 2 * kPageSize, MS_SYNC);
}

JournalSummary read_journal(const std::string& path, const std::function<void(std::uint64_t, std::string_view)>& each) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size < kPageSize) {
    ::close(fd);
    throw std::runtime_error(path + " is not a Kite journal (too short)");
  }
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) throw std::runtime_error("cannot map " + path + ": " + std::strerror(errno));
  const char* base = static_cast<const char*>(m);
  FileStore::Page pg;
  std::memcpy(&pg, base, sizeof pg);
  if (pg.magic != kFileMagic || pg.version != kVersion) {
    ::munmap(m, size);
    throw std::runtime_error(path + " is not a Kite journal (bad magic or version)");
  }
  const Committed c = find_committed(base, size, pg);
  JournalSummary sum{c.first_open_seq != 0 ? c.first_open_seq : std::max(pg.next_sender, c.last_seq + 1),
                     c.next_target,
                     pg.creation_ns,
                     pg.generation,
                     0,
                     c.open_records};
  scan_records(base, size, pg.generation, c.end,
               [&](std::uint64_t seq, std::size_t body, std::uint32_t len, std::uint64_t) {
                 ++sum.messages;
                 each(seq, std::string_view(base + body, len));
               });
  ::munmap(m, size);
  return sum;
}

std::unique_ptr<MessageStore> make_store(const StoreSettings& s, std::string_view session_id, std::int64_t now_ns) {
  switch (s.kind) {
    case StoreKind::file: return std::make_unique<FileStore>(s.path, FileStore::file_name_for(session_id), s, now_ns);
    case StoreKind::memory: {
      auto m = std::make_unique<MemoryStore>();
      m->reset(now_ns);
      return m;
    }
    case StoreKind::null: {
      auto n = std::make_unique<NullStore>();
      n->reset(now_ns);
      return n;
    }
    case StoreKind::postgresql:
#ifdef KITE_HAVE_POSTGRESQL
      return std::make_unique<PgStore>(s, PgSessionKey::from_id(session_id), now_ns);
#else
      throw std::runtime_error(
          "StoreKind \"postgresql\": this build has no postgresql store (libpq was not "
          "found at configure time: install libpq-dev and configure again)");
#endif
  }
  return nullptr;
}

}  // namespace kite::session
