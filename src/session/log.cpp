#include "kite/session/log.hpp"

#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "kite/session/clock.hpp"

namespace kite::session {

const char* to_string(LogLevel l) noexcept {
  switch (l) {
    case LogLevel::info: return "INFO";
    case LogLevel::warn: return "WARN";
    case LogLevel::error: return "ERROR";
  }
  return "?";
}

void Logger::logf(LogLevel level, std::string_view who, const char* fmt, ...) noexcept {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  log(level, who,
      std::string_view(buf, static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n) : sizeof buf - 1));
}

std::int64_t SystemClock::now_ns() const noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

void StderrLogger::log(LogLevel level, std::string_view who, std::string_view text) noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t;
  gmtime_r(&ts.tv_sec, &t);
  char line[768];
  const int n =
      std::snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %.*s %.*s\n", t.tm_year + 1900,
                    t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1'000'000, to_string(level),
                    static_cast<int>(who.size()), who.data(), static_cast<int>(text.size()), text.data());
  if (n > 0) {
    // One write per line so that lines from several threads do not interleave.
    const std::size_t len = static_cast<std::size_t>(n) < sizeof line ? static_cast<std::size_t>(n) : sizeof line - 1;
    [[maybe_unused]] const ssize_t w = ::write(2, line, len);
  }
}

namespace {
// Appends `s` as the inside of a JSON string; false when it does not fit.
bool json_escape(char*& p, char* end, std::string_view s) noexcept {
  for (const char c : s) {
    if (end - p < 7) return false;
    switch (c) {
      case '"':
        *p++ = '\\';
        *p++ = '"';
        break;
      case '\\':
        *p++ = '\\';
        *p++ = '\\';
        break;
      case '\n':
        *p++ = '\\';
        *p++ = 'n';
        break;
      case '\t':
        *p++ = '\\';
        *p++ = 't';
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          p += std::snprintf(p, static_cast<std::size_t>(end - p), "\\u%04x", static_cast<unsigned>(c));
        } else {
          *p++ = c;
        }
    }
  }
  return true;
}
}  // namespace

void JsonLinesLogger::log(LogLevel level, std::string_view who, std::string_view text) noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t;
  gmtime_r(&ts.tv_sec, &t);
  char line[1536];
  char* p = line;
  char* const end = line + sizeof line - 4;
  const char* lv = level == LogLevel::info ? "info" : level == LogLevel::warn ? "warn" : "error";
  p += std::snprintf(p, static_cast<std::size_t>(end - p),
                     "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\",\"who\":\"",
                     (t.tm_year + 1900) % 10000, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                     ts.tv_nsec / 1'000'000, lv);
  json_escape(p, end, who);
  const char mid[] = "\",\"text\":\"";
  std::memcpy(p, mid, sizeof mid - 1);
  p += sizeof mid - 1;
  json_escape(p, end, text);  // a text too long for the line is cut; the object stays valid
  *p++ = '"';
  *p++ = '}';
  *p++ = '\n';
  [[maybe_unused]] const ssize_t w = ::write(2, line, static_cast<std::size_t>(p - line));
}

void MemoryLogger::log(LogLevel level, std::string_view who, std::string_view text) noexcept {
  try {
    std::string line = to_string(level);
    line += ' ';
    line += who;
    line += ' ';
    line += text;
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
  } catch (...) {}
}

std::vector<std::string> MemoryLogger::lines() const {
  std::lock_guard lock(mu_);
  return lines_;
}

bool MemoryLogger::contains(std::string_view needle) const {
  std::lock_guard lock(mu_);
  for (const auto& l : lines_)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

void MemoryLogger::clear() {
  std::lock_guard lock(mu_);
  lines_.clear();
}

}  // namespace kite::session
