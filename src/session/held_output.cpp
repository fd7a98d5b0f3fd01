#include "kite/session/held_output.hpp"

#include <algorithm>
#include <cstring>

namespace kite::session {

HeldOutput::HeldOutput(const MessageStore& store, std::size_t capacity, std::size_t chunk)
    : store_(store),
      capacity_(capacity),
      chunk_(chunk),
      bytes_(new char[capacity]),
      runs_(new Run[std::max<std::size_t>(capacity / 64, 16)]),
      run_capacity_(std::max<std::size_t>(capacity / 64, 16)) {}

void HeldOutput::bind(SessionOutput* out) noexcept {
  out_ = out;
  len_ = sealed_ = runs_count_ = 0;
}

char* HeldOutput::claim(std::size_t min) noexcept {
  if (out_ == nullptr) return nullptr;
  if (capacity_ - len_ < min) release();
  return capacity_ - len_ < min ? nullptr : bytes_.get() + len_;
}

void HeldOutput::seal() noexcept {
  if (len_ == sealed_) return;
  const std::uint64_t t = store_.send_mark();
  // A full table widens the last run: its later ticket covers the earlier bytes too.
  if (runs_count_ == run_capacity_)
    runs_[runs_count_ - 1] = {len_, t};
  else
    runs_[runs_count_++] = {len_, t};
  sealed_ = len_;
}

std::size_t HeldOutput::release() noexcept {
  if (out_ == nullptr || runs_count_ == 0) return 0;
  std::size_t done = 0;  // bytes handed over, from the front
  std::size_t runs_done = 0;
  while (runs_done < runs_count_ && store_.may_send(runs_[runs_done].ticket)) {
    const std::size_t end = runs_[runs_done].end;
    while (done < end) {
      const std::size_t n = std::min(end - done, chunk_);
      char* p = out_->claim(n);
      if (p == nullptr) break;
      std::memcpy(p, bytes_.get() + done, n);
      out_->commit(n);
      done += n;
    }
    if (done < end) break;  // the connection is full: the rest waits
    ++runs_done;
  }
  if (done == 0) return 0;
  std::memmove(bytes_.get(), bytes_.get() + done, len_ - done);
  len_ -= done;
  sealed_ -= done;
  std::size_t k = 0;
  for (std::size_t i = runs_done; i < runs_count_; ++i) runs_[k++] = {runs_[i].end - done, runs_[i].ticket};
  // A run cut by a full connection keeps its ticket (durable already).
  runs_count_ = k;
  return done;
}

void HeldOutput::disconnect(const char* reason) noexcept {
  if (out_ == nullptr) return;
  seal();
  release();
  SessionOutput* out = out_;
  bind(nullptr);
  out->disconnect(reason);
}

}  // namespace kite::session
