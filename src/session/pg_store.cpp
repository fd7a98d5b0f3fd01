#include "kite/session/pg_store.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kite::session {
namespace {

// QuickFIX's tables (its src/sql/postgresql), created only where missing:
// the same columns, types and keys, nothing added.
constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS sessions ("
    " beginstring CHAR(8) NOT NULL, sendercompid VARCHAR(64) NOT NULL,"
    " targetcompid VARCHAR(64) NOT NULL, session_qualifier VARCHAR(64) NOT NULL,"
    " creation_time TIMESTAMP NOT NULL, incoming_seqnum INTEGER NOT NULL, outgoing_seqnum INTEGER NOT NULL,"
    " PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier));"
    "CREATE TABLE IF NOT EXISTS messages ("
    " beginstring CHAR(8) NOT NULL, sendercompid VARCHAR(64) NOT NULL,"
    " targetcompid VARCHAR(64) NOT NULL, session_qualifier VARCHAR(64) NOT NULL,"
    " msgseqnum INTEGER NOT NULL, message TEXT NOT NULL,"
    " PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum));";

// Serialises schema creation between processes opening at once (CREATE
// TABLE IF NOT EXISTS can still race on the catalog).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(4943968395315938123)";

constexpr std::size_t kRecord = 24;
// On a record's kind: the record belongs to an inbound batch that goes on
// after it (the store thread does not end a transaction there).
constexpr std::uint32_t kOpenBatch = 0x100;
constexpr std::uint32_t kKindMask = 0xff;
static_assert(sizeof(std::uint32_t) * 2 + sizeof(std::uint64_t) * 2 == kRecord);

std::size_t padded(std::size_t n) noexcept { return (n + 7) & ~std::size_t{7}; }

void log_line(const std::string& s) noexcept { std::fprintf(stderr, "kite store postgresql: %s\n", s.c_str()); }

std::string error_of(pg_conn* c) {
  std::string e = c != nullptr ? PQerrorMessage(c) : "no connection";
  while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
  return e;
}

// Runs a statement that returns no rows or rows we ignore; "" or the error.
std::string exec(pg_conn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  const ExecStatusType st = PQresultStatus(r);
  std::string err;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    err = PQresultErrorMessage(r);
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    if (err.empty()) err = error_of(c);
  }
  PQclear(r);
  return err;
}

std::string literal(pg_conn* c, std::string_view v) {
  std::string out(v.size() * 2 + 3, '\0');
  int err = 0;
  out[0] = '\'';
  const std::size_t n = PQescapeStringConn(c, out.data() + 1, v.data(), v.size(), &err);
  if (err != 0) throw std::runtime_error("cannot quote a value: " + error_of(c));
  out.resize(n + 1);
  out += '\'';
  return out;
}

std::string seconds_text(std::int64_t ns) {
  char b[48];
  std::snprintf(b, sizeof b, "%lld.%06lld", static_cast<long long>(ns / 1'000'000'000),
                static_cast<long long>((ns % 1'000'000'000) / 1000));
  return b;
}

}  // namespace

PgSessionKey PgSessionKey::from_id(std::string_view id) {
  const auto colon = id.find(':');
  const auto arrow = id.find("->");
  if (colon == std::string_view::npos || arrow == std::string_view::npos || arrow < colon)
    throw std::invalid_argument("\"" + std::string(id) + "\" is not a session id BEGIN:SENDER->TARGET");
  return {std::string(id.substr(0, colon)), std::string(id.substr(colon + 1, arrow - colon - 1)),
          std::string(id.substr(arrow + 2)), ""};
}

std::int64_t PgSessionKey::lock_key() const noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](std::string_view s) {
    for (const unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  };
  mix(beginstring);
  mix(":");
  mix(sendercompid);
  mix("->");
  mix(targetcompid);
  mix(":");
  mix(qualifier);
  return static_cast<std::int64_t>(h);
}

std::string pg_conninfo_for(const StoreSettings& s) {
  // Values quoted as libpq's key='value' form wants: \ and ' escaped.
  const auto q = [](const std::string& v) {
    std::string o = "'";
    for (const char ch : v) {
      if (ch == '\\' || ch == '\'') o += '\\';
      o += ch;
    }
    return o + "'";
  };
  std::string c;
  std::string options;
  // A URI cannot be followed by key=value pairs: the keys below are added
  // as a second pass over PQconninfoParse's result instead.
  PQconninfoOption* base = nullptr;
  if (!s.pg_conninfo.empty()) {
    char* err = nullptr;
    base = PQconninfoParse(s.pg_conninfo.c_str(), &err);
    if (base == nullptr) {
      std::string e = err != nullptr ? err : "cannot parse it";
      PQfreemem(err);
      throw std::runtime_error("PostgreSQLStoreConnectionString: " + e);
    }
    for (PQconninfoOption* o = base; o->keyword != nullptr; ++o) {
      if (o->val == nullptr || *o->val == '\0') continue;
      if (std::string_view(o->keyword) == "options")
        options = o->val;
      else
        c += std::string(o->keyword) + "=" + q(o->val) + " ";
    }
    PQconninfoFree(base);
  }
  if (!s.pg_host.empty()) c += "host=" + q(s.pg_host) + " ";
  if (s.pg_port != 0) c += "port=" + std::to_string(s.pg_port) + " ";
  if (!s.pg_database.empty()) c += "dbname=" + q(s.pg_database) + " ";
  if (!s.pg_user.empty()) c += "user=" + q(s.pg_user) + " ";
  if (!s.pg_password.empty()) c += "password=" + q(s.pg_password) + " ";
  // Later keys win in libpq's key=value form, so these hold whatever the string said.
  const std::uint32_t bound_s = s.pg_keepalive_idle_s + s.pg_keepalive_interval_s * s.pg_keepalive_count;
  c += "keepalives=1 keepalives_idle=" + std::to_string(s.pg_keepalive_idle_s) +
       " keepalives_interval=" + std::to_string(s.pg_keepalive_interval_s) +
       " keepalives_count=" + std::to_string(s.pg_keepalive_count) +
       " tcp_user_timeout=" + std::to_string(bound_s * 1000) + " connect_timeout=5 application_name=kite";
  // The same bound on the server's side of the connection: it is the server
  // that must notice a dead Kite host to free the session's lock.
  if (!options.empty()) options += ' ';
  options += "-c tcp_keepalives_idle=" + std::to_string(s.pg_keepalive_idle_s) +
             " -c tcp_keepalives_interval=" + std::to_string(s.pg_keepalive_interval_s) +
             " -c tcp_keepalives_count=" + std::to_string(s.pg_keepalive_count) +
             " -c tcp_user_timeout=" + std::to_string(bound_s * 1000);
  c += " options=" + q(options);
  return c;
}

PgStore::PgStore(const StoreSettings& settings, const PgSessionKey& key, std::int64_t now_ns)
    : settings_(settings),
      key_(key),
      conninfo_(pg_conninfo_for(settings)),
      copy_(settings.capacity_bytes, settings.capacity_bytes / 128),
      lazy_(settings.refresh_on_logon),
      sync_(settings.pg_commit == CommitPolicy::sync),
      open_ns_(now_ns) {
  who_ = key_.beginstring + ":" + key_.sendercompid + "->" + key_.targetcompid;
  const auto fail = [&](const std::string& what) {
    const std::string e = "session " + who_ + ": " + what;
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = nullptr;
    throw std::runtime_error(e);
  };
  conn_ = PQconnectdb(conninfo_.c_str());
  if (PQstatus(conn_) != CONNECTION_OK) fail("cannot connect to the database: " + error_of(conn_));
  // "relation already exists, skipping" and the like: not worth a log line.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  key_sql_ = literal(conn_, key_.beginstring) + "," + literal(conn_, key_.sendercompid) + "," +
             literal(conn_, key_.targetcompid) + "," + literal(conn_, key_.qualifier);

  const std::string e = exec(conn_, std::string("BEGIN;") + kSchemaLock + ";" + kSchema + "COMMIT;");
  if (!e.empty()) fail("cannot create the sessions and messages tables: " + e);

  copy_.reset(now_ns);
  if (!lazy_) {
    const std::string why = take_and_load(copy_, loaded_, now_ns);
    if (!why.empty()) fail(why);
    holding_.store(true, std::memory_order_release);
  }
  ring_.assign(padded(settings.capacity_bytes), '\0');
  log_line("session " + who_ + " opened: " +
           (lazy_ ? std::string("RefreshOnLogon (the session is taken and loaded at each Logon)")
                  : "next in " + std::to_string(copy_.next_target_seq()) + ", next out " +
                        std::to_string(copy_.next_sender_seq()) + ", " + std::to_string(loaded_) + " messages") +
           "; commit policy " +
           (sync_ ? std::string("sync") : "async (window " + std::to_string(settings.pg_async_window) + ")") +
           ", group up to " + std::to_string(settings.pg_group_max));
  thread_ = std::thread([this] { run(); });
}

bool PgStore::try_lock() noexcept {
  PGresult* r = PQexec(conn_, ("SELECT pg_try_advisory_lock(" + std::to_string(key_.lock_key()) + ")").c_str());
  const bool got = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  return got;
}

std::string PgStore::take_and_load(MemoryStore& into, std::size_t& loaded, std::int64_t now_ns) {
  if (!try_lock()) {
    if (PQstatus(conn_) != CONNECTION_OK) return "cannot reach the database: " + error_of(conn_);
    return "held by another process (its advisory lock is taken): refusing to open it twice";
  }
  const auto unlock_with = [&](const std::string& why) {
    exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
    return why;
  };
  const std::string where = " WHERE (beginstring,sendercompid,targetcompid,session_qualifier)=(" + key_sql_ + ")";
  PGresult* r = PQexec(conn_, ("SELECT incoming_seqnum::bigint, outgoing_seqnum::bigint,"
                               " (extract(epoch from creation_time) * 1000000)::bigint FROM sessions" +
                               where)
                                  .c_str());
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    PQclear(r);
    return unlock_with("cannot read its row of sessions: " + error_of(conn_));
  }
  std::uint64_t in = 1, out = 1;
  std::int64_t created = now_ns;
  const bool found = PQntuples(r) == 1;
  loaded_new_ = !found;
  if (found) {
    in = std::strtoull(PQgetvalue(r, 0, 0), nullptr, 10);
    out = std::strtoull(PQgetvalue(r, 0, 1), nullptr, 10);
    created = std::strtoll(PQgetvalue(r, 0, 2), nullptr, 10) * 1000;
  }
  PQclear(r);
  if (!found) {
    const std::string e = exec(conn_, "INSERT INTO sessions VALUES (" + key_sql_ + ", to_timestamp(" +
                                          seconds_text(now_ns) + ") AT TIME ZONE 'UTC', 1, 1)");
    if (!e.empty()) return unlock_with("cannot insert its row of sessions: " + e);
  }
  into.reset(created);
  loaded = 0;
  r = PQexec(conn_, ("SELECT msgseqnum::bigint, message FROM messages" + where + " ORDER BY msgseqnum").c_str());
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    PQclear(r);
    return unlock_with("cannot read its messages: " + error_of(conn_));
  }
  for (int i = 0; i < PQntuples(r); ++i) {
    const std::uint64_t seq = std::strtoull(PQgetvalue(r, i, 0), nullptr, 10);
    if (into.store(seq, std::string_view(PQgetvalue(r, i, 1), static_cast<std::size_t>(PQgetlength(r, i, 1)))))
      ++loaded;
  }
  PQclear(r);
  into.set_next_sender_seq(out);
  into.set_next_target_seq(in);
  written_ = attempted_ = Row{in, out, created / 1000};
  committed_out_.store(out, std::memory_order_release);
  retaking_ = false;
  return {};
}

bool PgStore::begin_refresh() noexcept {
  if (!lazy_) return false;
  refresh_.store(refresh_requested, std::memory_order_release);
  return true;
}

MessageStore::Refresh PgStore::poll_refresh() noexcept {
  switch (refresh_.load(std::memory_order_acquire)) {
    case refresh_ready:
      taken_ = true;
      copy_ = std::move(staged_);
      staged_ = MemoryStore(0, 0);
      loaded_ = staged_loaded_;
      taken_new_ = loaded_new_;
      refresh_.store(refresh_idle, std::memory_order_relaxed);
      log_line("session " + who_ + " taken at Logon: next in " + std::to_string(copy_.next_target_seq()) +
               ", next out " + std::to_string(copy_.next_sender_seq()) + ", " + std::to_string(loaded_) + " messages");
      return Refresh::done;
    case refresh_failed: refresh_.store(refresh_idle, std::memory_order_relaxed); return Refresh::failed;
    case refresh_idle: return Refresh::done;
    default: return Refresh::pending;
  }
}

void PgStore::release() noexcept {
  if (!lazy_) return;
  taken_ = false;
  release_.store(true, std::memory_order_release);
}

// The store thread: a refresh asked for by the session's thread.
void PgStore::serve_refresh() noexcept {
  if (!holding_) {
    // Whatever was queued while the session was not held came from stale
    // numbers (a schedule reset before the Logon): not written.
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    tail_.store(head, std::memory_order_release);
    committed_.store(appended_.load(std::memory_order_acquire), std::memory_order_release);
    if (PQstatus(conn_) != CONNECTION_OK) PQreset(conn_);
  }
  staged_ = MemoryStore(settings_.capacity_bytes, settings_.capacity_bytes / 128);
  std::string why;
  if (holding_) {
    // Still ours (a Logon right after a disconnect): reload what we wrote.
    exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
    holding_.store(false, std::memory_order_release);
  }
  try {
    why = take_and_load(staged_, staged_loaded_, open_ns_);
  } catch (...) {
    why = "out of memory loading it";
  }
  release_.store(false, std::memory_order_relaxed);
  if (why.empty()) {
    holding_.store(true, std::memory_order_release);
    fenced_.store(false, std::memory_order_release);
    refresh_.store(refresh_ready, std::memory_order_release);
  } else {
    refresh_error_ = why;
    log_line("session " + who_ + ": cannot take it at Logon: " + why);
    refresh_.store(refresh_failed, std::memory_order_release);
  }
}

const char* PgStore::refresh_error() const noexcept { return refresh_error_.c_str(); }

PgStore::~PgStore() {
  wait_committed(5000);
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  if (head_.load() != tail_.load())
    log_line(fenced() ? "closed with changes not written (another holder took the session)"
                      : "closed with changes not written (the database did not come back)");
  // Let go of the lock before closing: the server frees a closed
  // connection's locks only when its backend has exited, a moment later,
  // and a restarted process must not find its own session still held.
  if (conn_ != nullptr && holding_.load(std::memory_order_acquire) && PQstatus(conn_) == CONNECTION_OK)
    exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
  if (conn_ != nullptr) PQfinish(conn_);
}

void PgStore::append(Kind kind, std::uint64_t a, std::uint64_t b, std::string_view bytes) noexcept {
  // RefreshOnLogon: until the session is taken, its numbers are stale; nothing is written.
  if (lazy_ && !taken_) return;
  const std::size_t size = ring_.size();
  const std::size_t need = kRecord + padded(bytes.size());
  std::uint64_t head = write_head_;
  const std::uint64_t tail = tail_.load(std::memory_order_acquire);
  std::size_t at = static_cast<std::size_t>(head % size);
  // A record never wraps: the rest of the ring is padding when it does not fit.
  const std::size_t skip = size - at < need ? size - at : 0;
  if (head + skip + need - tail > size) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (skip != 0) {
    if (skip >= kRecord) {
      const Record pad_record{pad, static_cast<std::uint32_t>(skip - kRecord), 0, 0};
      std::memcpy(ring_.data() + at, &pad_record, kRecord);
    }
    head += skip;
    at = 0;
  }
  const std::uint32_t flags = in_batch_ ? kOpenBatch : 0;
  const Record r{kind | flags, static_cast<std::uint32_t>(bytes.size()), a, b};
  std::memcpy(ring_.data() + at, &r, kRecord);
  if (!bytes.empty()) std::memcpy(ring_.data() + at + kRecord, bytes.data(), bytes.size());
  appended_.fetch_add(1, std::memory_order_relaxed);
  write_head_ = head + need;
  // A batch is published whole at end_inbound: the store thread never sees half of one.
  if (!in_batch_) head_.store(write_head_, std::memory_order_release);
}

void PgStore::set_next_sender_seq(std::uint64_t s) noexcept {
  copy_.set_next_sender_seq(s);
  if (!in_batch_) append(numbers, s, copy_.next_target_seq(), {});
}

void PgStore::set_next_target_seq(std::uint64_t s) noexcept {
  copy_.set_next_target_seq(s);
  if (!in_batch_) append(numbers, copy_.next_sender_seq(), s, {});
}

bool PgStore::store(std::uint64_t seq, std::string_view message) noexcept {
  const bool kept = copy_.store(seq, message);
  append(Kind::message, seq, 0, message);
  if (!in_batch_) append(numbers, copy_.next_sender_seq(), copy_.next_target_seq(), {});
  return kept;
}

void PgStore::reset(std::int64_t creation_ns) noexcept {
  copy_.reset(creation_ns);
  append(wipe, static_cast<std::uint64_t>(creation_ns), 0, {});
}

void PgStore::flush() noexcept { wait_committed(5000); }

void PgStore::end_inbound() noexcept {
  in_batch_ = false;
  // The batch's messages and its inbound number land in one transaction:
  // the batch is published at once, and the group limit never splits it
  // (its records but the last carry kOpenBatch).
  append(numbers, copy_.next_sender_seq(), copy_.next_target_seq(), {});
}

const char* PgStore::unavailable() const noexcept {
  if (fenced()) return "its postgresql store lost the session's lock to another holder";
  if (database_down()) return "its postgresql store cannot reach the database";
  return nullptr;
}

bool PgStore::wait_committed(int timeout_ms) const noexcept {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (committed() < appended()) {
    if (fenced() || !holding_.load(std::memory_order_acquire)) return false;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

bool PgStore::write_group(std::uint64_t from, std::uint64_t to, std::string& sql) noexcept {
  try {
    sql.assign("BEGIN;");
    std::string values;
    bool numbers_seen = false;
    std::uint64_t out = 0, in = 0;
    Row after = written_;
    std::uint64_t last_seq = 0;
    std::string_view last_body;
    const std::size_t size = ring_.size();
    const auto flush_messages = [&] {
      if (values.empty()) return;
      sql += "INSERT INTO messages VALUES " + values +
             " ON CONFLICT (beginstring,sendercompid,targetcompid,session_qualifier,msgseqnum)"
             " DO UPDATE SET message = EXCLUDED.message;";
      values.clear();
    };
    const std::string where = " WHERE (beginstring,sendercompid,targetcompid,session_qualifier)=(" + key_sql_ + ");";
    for (std::uint64_t p = from; p < to;) {
      const std::size_t at = static_cast<std::size_t>(p % size);
      if (size - at < kRecord) {  // a tail too short for a pad record
        p += size - at;
        continue;
      }
      Record r;
      std::memcpy(&r, ring_.data() + at, kRecord);
      const std::string_view body(ring_.data() + at + kRecord, r.length);
      switch (r.kind & kKindMask) {
        case message:
          last_seq = r.a;
          last_body = body;
          if (!values.empty()) values += ',';
          values += "(" + key_sql_ + "," + std::to_string(r.a) + "," + literal(conn_, body) + ")";
          break;
        case numbers:
          numbers_seen = true;
          out = r.a;
          in = r.b;
          break;
        case wipe:
          flush_messages();
          sql += "DELETE FROM messages" + where;
          sql += "UPDATE sessions SET creation_time = to_timestamp(" + seconds_text(static_cast<std::int64_t>(r.a)) +
                 ") AT TIME ZONE 'UTC', incoming_seqnum = 1, outgoing_seqnum = 1" + where;
          numbers_seen = false;
          after = Row{1, 1, static_cast<std::int64_t>(r.a) / 1000};
          break;
        default: break;
      }
      p += kRecord + padded(r.length);
    }
    flush_messages();
    if (numbers_seen) {
      sql += "UPDATE sessions SET incoming_seqnum = " + std::to_string(in) +
             ", outgoing_seqnum = " + std::to_string(out) + where;
      after.in = in;
      after.out = out;
    }
    sql += "COMMIT;";
    attempted_ = after;
    attempted_seq_ = last_seq;
    attempted_message_.assign(last_body);
    const std::string e = exec(conn_, sql);
    if (e.empty()) {
      written_ = after;
      committed_out_.store(after.out, std::memory_order_release);
      return true;
    }
    exec(conn_, "ROLLBACK");
    if (!down_.exchange(true)) log_line("write failed, retrying until the database is back: " + e);
    return false;
  } catch (...) {  // out of memory building the statement: try again later
    return false;
  }
}

bool PgStore::reconnect() noexcept {
  if (PQstatus(conn_) == CONNECTION_OK && !retaking_) return true;
  if (PQstatus(conn_) != CONNECTION_OK) {
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) return false;
  }
  if (!holding_.load(std::memory_order_relaxed)) {  // RefreshOnLogon between sessions: no lock to take back
    retaking_ = false;
    return true;
  }
  retaking_ = true;  // until the lock is ours again and the row checked
  // The lock went with the old connection: take it again, or stop writing
  // (another holder owns the session now).
  if (!try_lock()) {
    if (PQstatus(conn_) != CONNECTION_OK) return false;  // gone again: the next turn tries again
    log_line("session " + who_ + ": reconnected but the session's lock is held elsewhere: this store stops writing");
    holding_.store(false, std::memory_order_release);
    fenced_.store(true, std::memory_order_release);
    retaking_ = false;
    return false;
  }
  // A free lock is not enough: another holder may have taken the session
  // while we were away and let it go since. Its writes are newer than what
  // is queued here; writing ours would roll the session back.
  std::string what;
  const RowCheck row = check_row(what);
  if (row == RowCheck::unknown) {  // not read: let go and try both again at the next turn
    exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
    return false;
  }
  if (row == RowCheck::changed) {
    exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
    log_line("session " + who_ + ": reconnected, but another holder wrote the session meanwhile (" + what +
             "): this store stops writing");
    holding_.store(false, std::memory_order_release);
    fenced_.store(true, std::memory_order_release);
    retaking_ = false;
    return false;
  }
  retaking_ = false;
  log_line("session " + who_ + ": reconnected; the session's lock is taken again");
  return true;
}

PgStore::RowCheck PgStore::check_row(std::string& what) noexcept {
  try {
    PGresult* r = PQexec(conn_, ("SELECT incoming_seqnum::bigint, outgoing_seqnum::bigint,"
                                 " (extract(epoch from creation_time) * 1000000)::bigint FROM sessions"
                                 " WHERE (beginstring,sendercompid,targetcompid,session_qualifier)=(" +
                                 key_sql_ + ")")
                                    .c_str());
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      PQclear(r);
      return RowCheck::unknown;
    }
    if (PQntuples(r) != 1) {
      PQclear(r);
      what = "its row of sessions is gone";
      return RowCheck::changed;
    }
    const Row now{std::strtoull(PQgetvalue(r, 0, 0), nullptr, 10), std::strtoull(PQgetvalue(r, 0, 1), nullptr, 10),
                  std::strtoll(PQgetvalue(r, 0, 2), nullptr, 10)};
    PQclear(r);
    // The creation time goes through a double in to_timestamp: a microsecond either way is the same time.
    const auto same = [](const Row& a, const Row& b) {
      return a.in == b.in && a.out == b.out && a.created_us - b.created_us <= 1 && b.created_us - a.created_us <= 1;
    };
    if (same(now, written_)) return RowCheck::same;
    if (same(now, attempted_)) {
      if (attempted_seq_ == 0) return RowCheck::same;
      // The numbers the failed transaction would have left: it committed if
      // its last message is there as we sent it.
      r = PQexec(conn_, ("SELECT message FROM messages WHERE (beginstring,sendercompid,targetcompid,"
                         "session_qualifier,msgseqnum)=(" +
                         key_sql_ + "," + std::to_string(attempted_seq_) + ")")
                            .c_str());
      if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        PQclear(r);
        return RowCheck::unknown;
      }
      const bool ours = PQntuples(r) == 1 &&
                        std::string_view(PQgetvalue(r, 0, 0), static_cast<std::size_t>(PQgetlength(r, 0, 0))) ==
                            attempted_message_;
      PQclear(r);
      if (ours) return RowCheck::same;
      what = "message " + std::to_string(attempted_seq_) + " in the database is not the one sent here";
      return RowCheck::changed;
    }
    what = "next in " + std::to_string(now.in) + ", out " + std::to_string(now.out) + " in the database, " +
           std::to_string(written_.in) + " and " + std::to_string(written_.out) + " as last written here";
    return RowCheck::changed;
  } catch (...) {  // out of memory building the text
    return RowCheck::unknown;
  }
}

void PgStore::run() noexcept {
  std::string sql;
  sql.reserve(1 << 20);
  int backoff_ms = 50;
  auto last_ok = std::chrono::steady_clock::now();
  for (;;) {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    if (lazy_) {
      if (refresh_.load(std::memory_order_acquire) == refresh_requested && (head == tail || !holding_)) {
        serve_refresh();
        continue;
      }
      if (holding_ && head == tail && release_.load(std::memory_order_acquire)) {
        // The session's connection ended and everything is written: let a standby take it.
        exec(conn_, "SELECT pg_advisory_unlock(" + std::to_string(key_.lock_key()) + ")");
        holding_.store(false, std::memory_order_release);
        release_.store(false, std::memory_order_relaxed);
        log_line("session " + who_ + " released (disconnected)");
      }
    }
    // Fenced: another holder has the session; nothing more is written.
    if (fenced_.load(std::memory_order_acquire)) {
      if (!lazy_ || stop_.load(std::memory_order_acquire)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    // Reconnected without the lock back or the row checked yet: nothing is written.
    if (retaking_ && !reconnect()) {
      if (stop_.load(std::memory_order_acquire)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 1000);
      continue;
    }
    // Not holding the session (RefreshOnLogon, between connections): nothing is written.
    if (!holding_ && head != tail) {
      if (stop_.load(std::memory_order_acquire)) return;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    if (head == tail) {
      if (stop_.load(std::memory_order_acquire)) return;
      // Idle: probe the database once a second, and keep trying while it is
      // away, so database_down() (which refuses Logons) is current without writes.
      const auto now = std::chrono::steady_clock::now();
      if (down_.load(std::memory_order_relaxed) || now - last_ok >= std::chrono::seconds(1)) {
        if (PQstatus(conn_) == CONNECTION_OK && exec(conn_, "SELECT 1").empty()) {
          last_ok = now;
          backoff_ms = 50;
          if (down_.exchange(false)) log_line("database back");
        } else {
          if (!down_.exchange(true)) log_line("database unreachable, retrying: " + error_of(conn_));
          std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
          backoff_ms = std::min(backoff_ms * 2, 1000);
          reconnect();
        }
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    // Up to group_max records from tail, and on to the end of a batch.
    std::uint64_t end = tail;
    std::uint64_t records = 0;
    bool open = false;
    const std::size_t size = ring_.size();
    while (end < head && (records < settings_.pg_group_max || open)) {
      const std::size_t at = static_cast<std::size_t>(end % size);
      if (size - at < kRecord) {
        end += size - at;
        continue;
      }
      Record r;
      std::memcpy(&r, ring_.data() + at, kRecord);
      end += kRecord + padded(r.length);
      if ((r.kind & kKindMask) != pad) {
        ++records;
        open = (r.kind & kOpenBatch) != 0;
      }
    }
    if (write_group(tail, end, sql)) {
      if (down_.exchange(false)) log_line("database back: queued changes written");
      backoff_ms = 50;
      last_ok = std::chrono::steady_clock::now();
      committed_.fetch_add(records, std::memory_order_release);
      transactions_.fetch_add(1, std::memory_order_release);
      tail_.store(end, std::memory_order_release);
      continue;
    }
    down_.store(true, std::memory_order_release);
    if (stop_.load(std::memory_order_acquire) || fenced_.load(std::memory_order_acquire)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, 1000);
    reconnect();
  }
}

}  // namespace kite::session
