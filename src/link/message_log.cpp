#include "kite/link/message_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

namespace kite::link {

namespace {
constexpr std::int64_t kFlushEveryNs = 50'000'000;
}

MessageLog::MessageLog(std::string path, std::uint64_t max_bytes, int keep) noexcept
    : path_(std::move(path)), max_bytes_(max_bytes), keep_(keep) {}

MessageLog::~MessageLog() { close(); }

void MessageLog::prepare() {
  if (!buf_) buf_ = std::make_unique<char[]>(kBufferBytes);
}

bool MessageLog::open_file() noexcept {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    error_ = "cannot open the message log";
    return false;
  }
  struct stat st {};
  file_bytes_ = ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return true;
}

void MessageLog::write(bool inbound, std::int64_t utc_ns, std::string_view msg) noexcept {
  if (!buf_) return;
  const std::size_t need = 32 + msg.size() + 1;
  if (len_ + need > kBufferBytes) flush(0, true);
  if (need > kBufferBytes) return;  // larger than the buffer: MaxMessageSize keeps this from happening
  const std::int64_t sec = utc_ns / 1'000'000'000;
  if (sec != stamp_second_) {
    const time_t t = static_cast<time_t>(sec);
    tm parts;
    gmtime_r(&t, &parts);
    char tmp[64];
    std::snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.", (parts.tm_year + 1900) % 10000, parts.tm_mon + 1,
                  parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
    std::memcpy(stamp_, tmp, 20);
    stamp_second_ = sec;
  }
  char* p = buf_.get() + len_;
  std::memcpy(p, stamp_, 20);
  p += 20;
  std::uint32_t us = static_cast<std::uint32_t>((utc_ns % 1'000'000'000) / 1000);
  for (int i = 5; i >= 0; --i) {
    p[i] = static_cast<char>('0' + us % 10);
    us /= 10;
  }
  p += 6;
  std::memcpy(p, inbound ? "Z IN  " : "Z OUT ", 6);
  p += 6;
  std::memcpy(p, msg.data(), msg.size());
  p += msg.size();
  *p++ = '\n';
  len_ = static_cast<std::size_t>(p - buf_.get());
  if (len_ > kBufferBytes / 2) flush(0, true);
}

void MessageLog::rotate() noexcept {
  ::close(fd_);
  fd_ = -1;
  char from[4096], to[4096];
  for (int i = keep_ - 1; i >= 1; --i) {
    std::snprintf(from, sizeof from, "%s.%d", path_.c_str(), i);
    std::snprintf(to, sizeof to, "%s.%d", path_.c_str(), i + 1);
    ::rename(from, to);
  }
  if (keep_ >= 1) {
    std::snprintf(to, sizeof to, "%s.1", path_.c_str());
    ::rename(path_.c_str(), to);
  } else {
    ::unlink(path_.c_str());
  }
  open_file();
}

bool MessageLog::flush(std::int64_t now_ns, bool force) noexcept {
  if (len_ == 0) return false;
  if (!force && now_ns - last_flush_ns_ < kFlushEveryNs) return false;
  last_flush_ns_ = now_ns;
  if (fd_ < 0 && !open_file()) {
    len_ = 0;
    return false;
  }
  if (max_bytes_ != 0 && file_bytes_ != 0 && file_bytes_ + len_ > max_bytes_) rotate();
  std::size_t done = 0;
  while (done < len_ && fd_ >= 0) {
    const ssize_t w = ::write(fd_, buf_.get() + done, len_ - done);
    if (w <= 0) {
      error_ = "cannot write the message log";
      break;
    }
    done += static_cast<std::size_t>(w);
  }
  file_bytes_ += done;
  len_ = 0;
  return true;
}

void MessageLog::close() noexcept {
  flush(0, true);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string message_log_name(std::string_view session_id) {
  std::string name;
  for (const char c : session_id) {
    if (c == ':')
      name += '_';
    else if (c == '>' || c == '/')
      continue;
    else
      name += c;
  }
  return name + ".messages";
}

}  // namespace kite::link
