// The echo protocol and the pinger that engine_cost measures (kite_bench,
// header only; the user links kite_engine), also the engine tests' protocols
// (tests/support/engine_testing.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kite/engine/protocol.hpp"

namespace kite::bench {

// Answers every '\n'-terminated record with the same bytes; consumes only
// what it could answer (back-pressure leaves the rest for later).
class EchoProtocol final : public engine::Protocol {
 public:
  void on_connected(engine::Outbound& out, std::int64_t) noexcept override { out_ = &out; }
  std::size_t on_data(const char* data, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (used < n) {
      const void* nl = std::memchr(data + used, '\n', n - used);
      if (nl == nullptr) break;
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - (data + used)) + 1;
      char* p = out_->claim(len);
      if (p == nullptr) break;
      std::memcpy(p, data + used, len);
      out_->commit(len);
      used += len;
      ++records;
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override { return 0; }
  void on_disconnected(const char* why, std::int64_t) noexcept override {
    reason = why;
    out_ = nullptr;
  }
  std::uint64_t records = 0;
  std::string reason;

 private:
  engine::Outbound* out_ = nullptr;
};

// Hands out echo protocols and remembers how each connection ended.
class EchoFactory final : public engine::ProtocolFactory {
 public:
  engine::Protocol* open(int) noexcept override {
    std::lock_guard<std::mutex> g(mu);
    ++opened;
    return new EchoProtocol();
  }
  void release(engine::Protocol* p) noexcept override {
    std::lock_guard<std::mutex> g(mu);
    auto* e = static_cast<EchoProtocol*>(p);
    ++reasons[e->reason];
    ++released;
    records += e->records;
    delete e;
  }
  int released_count() {
    std::lock_guard<std::mutex> g(mu);
    return released;
  }
  int reason_count(const std::string& r) {
    std::lock_guard<std::mutex> g(mu);
    return reasons[r];
  }
  std::mutex mu;
  int opened = 0;
  int released = 0;
  std::uint64_t records = 0;  // echoed by the released protocols
  std::map<std::string, int> reasons;
};

// Concatenation that sidesteps g++ 12's false -Wrestrict on "lit" + std::string.
inline void append_one(std::string& s, const std::string& v) { s.append(v); }
inline void append_one(std::string& s, const char* v) { s.append(v); }
inline void append_one(std::string& s, int v) { s.append(std::to_string(v)); }
template <class... A>
std::string cat(const A&... a) {
  std::string s;
  (append_one(s, a), ...);
  return s;
}

// Sends numbered records one at a time, each after the previous reply, then
// closes. Checks every reply is the record it sent. Records are padded with
// '.' to `record_size` bytes (newline included) when they are shorter.
class Pinger final : public engine::Protocol {
 public:
  Pinger(int id, int count, std::size_t record_size = 0) : id_(id), count_(count), record_size_(record_size) {}
  void on_connected(engine::Outbound& out, std::int64_t) noexcept override {
    out_ = &out;
    send_next();
  }
  std::size_t on_data(const char* d, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (const void* nl = std::memchr(d + used, '\n', n - used)) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - (d + used)) + 1;
      if (std::string_view(d + used, len) == expected_)
        ++answered;
      else
        ++wrong;
      used += len;
      if (answered + wrong == count_)
        out_->close("done", true);
      else
        send_next();
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override {
    ++timer_turns;
    return 0;
  }
  void on_disconnected(const char* why, std::int64_t) noexcept override { reason = why; }

  int answered = 0, wrong = 0;
  std::uint64_t timer_turns = 0;
  std::string reason;

 private:
  void send_next() {
    expected_ = cat("s", id_, "-", answered + wrong);
    if (expected_.size() + 1 < record_size_) expected_.append(record_size_ - 1 - expected_.size(), '.');
    expected_.push_back('\n');
    char* p = out_->claim(expected_.size());
    if (p == nullptr) return;
    std::memcpy(p, expected_.data(), expected_.size());
    out_->commit(expected_.size());
  }
  int id_, count_;
  std::size_t record_size_;
  engine::Outbound* out_ = nullptr;
  std::string expected_;
};

// A Pinger for each connection, kept for the checks.
class PingerFactory final : public engine::ProtocolFactory {
 public:
  explicit PingerFactory(int count, std::size_t record_size = 0) : count_(count), record_size_(record_size) {}
  engine::Protocol* open(int id) noexcept override {
    all.push_back(std::make_unique<Pinger>(id, count_, record_size_));
    return all.back().get();
  }
  void release(engine::Protocol*) noexcept override { ++released; }
  std::vector<std::unique_ptr<Pinger>> all;
  int released = 0;

 private:
  int count_;
  std::size_t record_size_;
};

}  // namespace kite::bench
