// A session's FIX message log: every message in and out, one line each,
//   2026-12-01T17:45:12.123456Z IN  8=FIX.4.4<SOH>9=...<SOH>10=123<SOH>
// appended to DIR/<session>.messages and rotated by size (the full file
// becomes .1, .1 becomes .2, ... up to `keep` old files). kite-fixprint reads
// it as it is (the timestamp and direction are each message's prefix).
//
// Threading: write() and flush() are called only by the thread that owns the
// session's connection (the same hand-over as SessionMetrics); the file is
// opened by that thread on its first write. prepare() (set-up, or the admin
// thread before it switches the log on) allocates the buffer: writing
// allocates nothing. A write costs a copy into the buffer; the file gets a
// write(2) when the buffer is half full or on a timer turn 50 ms after the
// last one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kite::link {

class MessageLog {
 public:
  static constexpr std::size_t kBufferBytes = 256 * 1024;

  MessageLog(std::string path, std::uint64_t max_bytes, int keep) noexcept;
  ~MessageLog();
  MessageLog(const MessageLog&) = delete;
  MessageLog& operator=(const MessageLog&) = delete;

  // Allocates the buffer (idempotent). Not on the hot path.
  void prepare();
  bool prepared() const noexcept { return buf_ != nullptr; }
  const std::string& path() const noexcept { return path_; }

  void write(bool inbound, std::int64_t utc_ns, std::string_view msg) noexcept;
  // Writes what is buffered when `force` or 50 ms have passed since the last
  // flush (monotonic `now_ns`). Returns whether it wrote.
  bool flush(std::int64_t now_ns, bool force) noexcept;
  // Flushes and closes the file (reopened by the next write).
  void close() noexcept;
  // Set when opening or writing failed (logged once by the caller).
  const char* error() const noexcept { return error_; }

 private:
  bool open_file() noexcept;
  void rotate() noexcept;
  std::string path_;
  std::uint64_t max_bytes_;
  int keep_;
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;
  int fd_ = -1;
  std::uint64_t file_bytes_ = 0;
  std::int64_t last_flush_ns_ = 0;
  std::int64_t stamp_second_ = -1;  // the second stamp_ holds
  char stamp_[32] = {};             // "2026-12-01T17:45:12."
  const char* error_ = nullptr;
};

// The file name of a session's log inside DIR: the session ID with ':' and
// '>' replaced ("FIX.4.4:KITE->PEER" -> "FIX.4.4_KITE-PEER.messages").
std::string message_log_name(std::string_view session_id);

}  // namespace kite::link
