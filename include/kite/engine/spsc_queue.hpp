// A bounded single-producer single-consumer queue (Lamport ring with cached
// indices). Used to hand accepted connections from the pool's front door to
// one worker. try_push fails when full: the producer keeps its item and
// retries; nothing is dropped and nothing allocates after construction.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>

namespace kite::engine {

template <class T>
class SpscQueue {
 public:
  // Capacity is rounded up to a power of two.
  explicit SpscQueue(std::size_t capacity) {
    std::size_t c = 2;
    while (c < capacity) c <<= 1;
    mask_ = c - 1;
    slots_ = std::make_unique<T[]>(c);
  }

  bool try_push(const T& v) noexcept {
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_cache_ > mask_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t - head_cache_ > mask_) return false;
    }
    slots_[t & mask_] = v;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  bool try_pop(T& out) noexcept {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h == tail_cache_) return false;
    }
    out = slots_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }
  std::size_t size_approx() const noexcept {
    return tail_.load(std::memory_order_acquire) - head_.load(std::memory_order_acquire);
  }

 private:
  static constexpr std::size_t kLine = 64;
  alignas(kLine) std::atomic<std::size_t> head_{0};
  std::size_t tail_cache_ = 0;  // consumer's view of tail
  alignas(kLine) std::atomic<std::size_t> tail_{0};
  std::size_t head_cache_ = 0;  // producer's view of head
  alignas(kLine) std::size_t mask_ = 0;
  std::unique_ptr<T[]> slots_;
};

}  // namespace kite::engine
