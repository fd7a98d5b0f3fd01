// Per-connection buffers, allocated once at set-up and never grown.
//
// RecvBuffer holds bytes read from the socket that the protocol has not yet
// consumed. Complete frames are consumed in place (the protocol reads them
// where the socket wrote them); only an incomplete frame left at the end is
// ever moved, by compact(), and only when the free tail is short. When the
// protocol consumes everything the buffer rewinds in O(1), without copying.
//
// SendBuffer is the bounded byte queue behind engine::Outbound: claim() gives
// contiguous room at the tail, commit() publishes it, the transport drains
// from the front with data()/consume(). It never grows: when room cannot be
// made, claim() returns nullptr (back-pressure). While an asynchronous send
// (io_uring) reads from data(), lock() forbids moving the pending bytes.
//
// Both rewind to their start when drained, so a connection's traffic lives in
// the first few cache lines of each buffer. `color` (bytes, below 4096)
// starts the buffer that far into a 64-byte-aligned allocation: a thread's
// connections given different colours keep those lines in different L1 sets
// instead of all in the sets of a page-aligned start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace kite::transport {

namespace detail {
// Room for `capacity` bytes starting `color` bytes past a 64-byte boundary.
inline char* colored(std::unique_ptr<char[]>& owner, std::size_t capacity, std::size_t color) {
  if (capacity == 0) {
    owner.reset();
    return nullptr;
  }
  owner.reset(new char[capacity + color + 64]);
  const auto at = reinterpret_cast<std::uintptr_t>(owner.get());
  return owner.get() + ((64 - (at & 63)) & 63) + color;
}
}  // namespace detail

class RecvBuffer {
 public:
  explicit RecvBuffer(std::size_t capacity = 0) { reset_capacity(capacity); }
  void reset_capacity(std::size_t capacity, std::size_t color = 0) {
    base_ = detail::colored(buf_, capacity, color);
    cap_ = capacity;
    head_ = tail_ = 0;
  }

  const char* data() const noexcept { return base_ + head_; }
  std::size_t size() const noexcept { return tail_ - head_; }
  std::size_t capacity() const noexcept { return cap_; }
  bool empty() const noexcept { return head_ == tail_; }

  // Where the next read may write, and how much.
  char* write_ptr() noexcept { return base_ + tail_; }
  std::size_t write_room() const noexcept { return cap_ - tail_; }
  void produced(std::size_t n) noexcept { tail_ += n; }

  // Drops n bytes from the front; rewinds to the start when nothing is left.
  void consume(std::size_t n) noexcept {
    head_ += n;
    if (head_ == tail_) head_ = tail_ = 0;
  }

  // Appends bytes from elsewhere (io_uring provided buffers). Returns false
  // when they do not fit even after compacting.
  bool append(const char* p, std::size_t n) noexcept {
    if (write_room() < n) compact();
    if (write_room() < n) return false;
    std::memcpy(write_ptr(), p, n);
    tail_ += n;
    return true;
  }

  // Makes room at the tail when it is shorter than `want`: moves the
  // unconsumed (partial-frame) bytes to the front. Returns true if it moved.
  bool make_room(std::size_t want) noexcept {
    if (write_room() >= want || head_ == 0) return false;
    compact();
    return true;
  }
  void compact() noexcept {
    if (head_ == 0) return;
    std::memmove(base_, base_ + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
    ++compactions_;
  }
  std::uint64_t compactions() const noexcept { return compactions_; }
  void clear() noexcept { head_ = tail_ = 0; }

 private:
  // head_ and tail_ first: the engine's per-cycle checks read only them.
  std::size_t head_ = 0, tail_ = 0;
  char* base_ = nullptr;
  std::size_t cap_ = 0;
  std::unique_ptr<char[]> buf_;
  std::uint64_t compactions_ = 0;
};

class SendBuffer {
 public:
  explicit SendBuffer(std::size_t capacity = 0) { reset_capacity(capacity); }
  void reset_capacity(std::size_t capacity, std::size_t color = 0) {
    base_ = own_ = detail::colored(buf_, capacity, color);
    cap_ = capacity;
    head_ = tail_ = 0;
    locked_ = false;
    claimed_ = 0;
  }

  // Borrowed room: an empty, unlocked buffer may work in `stage` (capacity()
  // bytes lent by its owner, e.g. a thread's room shared by its connections,
  // so their replies stay in the same few lines) until reclaim(), which
  // moves what is still pending back into the buffer's own room.
  void lend(char* stage) noexcept { base_ = stage; }
  bool lent() const noexcept { return base_ != own_; }
  void reclaim() noexcept {
    if (base_ == own_) return;
    const std::size_t n = tail_ - head_;
    if (n != 0) std::memcpy(own_, base_ + head_, n);
    head_ = 0;
    tail_ = n;
    base_ = own_;
  }

  // Contiguous room for at least `min` bytes, or nullptr (full: try later).
  char* claim(std::size_t min) noexcept {
    if (cap_ - tail_ < min) {
      if (locked_ || head_ == 0 || cap_ - (tail_ - head_) < min) return nullptr;
      std::memmove(base_, base_ + head_, tail_ - head_);
      tail_ -= head_;
      head_ = 0;
      ++compactions_;
    }
    claimed_ = cap_ - tail_;
    return base_ + tail_;
  }
  // Publishes n bytes written at the last claim (n <= the room it gave).
  void commit(std::size_t n) noexcept {
    if (n > claimed_) n = claimed_;
    tail_ += n;
    claimed_ = 0;
    if (tail_ - head_ > high_water_) high_water_ = tail_ - head_;
  }

  const char* data() const noexcept { return base_ + head_; }
  std::size_t size() const noexcept { return tail_ - head_; }
  std::size_t capacity() const noexcept { return cap_; }
  bool empty() const noexcept { return head_ == tail_; }
  void consume(std::size_t n) noexcept {
    head_ += n;
    if (head_ == tail_ && !locked_) head_ = tail_ = 0;
  }
  // While locked, pending bytes stay where they are (an async send reads them).
  void lock() noexcept { locked_ = true; }
  void unlock() noexcept {
    locked_ = false;
    if (head_ == tail_) head_ = tail_ = 0;
  }
  bool locked() const noexcept { return locked_; }
  // The most bytes ever pending at once: proof that the buffer stayed bounded.
  std::size_t high_water() const noexcept { return high_water_; }
  std::uint64_t compactions() const noexcept { return compactions_; }
  void clear() noexcept {
    head_ = tail_ = 0;
    locked_ = false;
    claimed_ = 0;
    base_ = own_;
  }

 private:
  std::size_t head_ = 0, tail_ = 0;  // first: the engine's per-cycle checks read only them
  char* base_ = nullptr;
  std::size_t cap_ = 0, claimed_ = 0, high_water_ = 0;
  bool locked_ = false;
  char* own_ = nullptr;  // the buffer's own room (base_ unless lent)
  std::unique_ptr<char[]> buf_;
  std::uint64_t compactions_ = 0;
};

}  // namespace kite::transport
