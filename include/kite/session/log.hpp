// Session events (logons, refusals, limits, sequence problems) go to a Logger
// as one readable line each. The session builds the line in a stack buffer, so
// logging allocates nothing; events are rare, never one per application message.
#pragma once

#include <cstdarg>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kite::session {

enum class LogLevel : unsigned char { info, warn, error };

const char* to_string(LogLevel l) noexcept;

class Logger {
 public:
  virtual ~Logger() = default;
  // `who` names the session ("FIX.4.4:KITE->PEER") or the connection
  // ("conn 7") the event concerns; `text` is one line without a newline.
  virtual void log(LogLevel level, std::string_view who, std::string_view text) noexcept = 0;

  // printf-style helper: formats into a stack buffer (truncating at 512 bytes).
  // Cold: events, never per message, so the code around a call stays compact.
  [[gnu::cold]] void logf(LogLevel level, std::string_view who, const char* fmt, ...) noexcept
      __attribute__((format(printf, 4, 5)));
};

// Writes "2026-11-30T03:52:18.123Z INFO FIX.4.4:KITE->PEER text" lines to stderr.
class StderrLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view who, std::string_view text) noexcept override;
};

// Writes one JSON object per line to stderr, for log shippers:
// {"time":"2026-11-30T03:52:18.123Z","level":"info","who":"FIX.4.4:KITE->PEER","text":"..."}
class JsonLinesLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view who, std::string_view text) noexcept override;
};

// Drops everything.
class NullLogger final : public Logger {
 public:
  void log(LogLevel, std::string_view, std::string_view) noexcept override {}
};

// Keeps every line in memory (tests; the daemon's self-check). Thread safe.
class MemoryLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view who, std::string_view text) noexcept override;
  std::vector<std::string> lines() const;
  // Whether any line contains `needle`.
  bool contains(std::string_view needle) const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace kite::session
