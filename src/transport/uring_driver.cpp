// UringDriver: io_uring with a provided-buffer ring registered with the
// kernel (group 0). Listeners use multishot accept. Each connection has at
// most one recv in flight that picks a buffer from the ring; bytes are handed
// to the sink straight from that buffer (whole frames are consumed there,
// only a partial tail is copied into the connection's RecvBuffer) and the
// buffer goes back to the ring at once. Receives are single-shot on purpose:
// a multishot recv keeps pulling bytes whether or not the protocol can take
// them, while re-arming only when rx has room for a whole buffer keeps the
// same back-pressure a kernel socket gets (the peer's TCP window closes).
// Sends go from the connection's SendBuffer, one in flight per connection
// (the buffer is locked meanwhile). SQEs are submitted at the start and end
// of each poll; with SQPOLL a kernel thread submits them instead (it needs a
// core of its own: on a 2-core machine it competes with the engine thread).
#include <liburing.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "kite/transport/driver.hpp"

namespace kite::transport {
namespace {

enum Op : std::uint64_t { kAccept = 1, kRecv = 2, kSend = 3, kCancel = 4 };

constexpr std::uint64_t encode(Op op, std::uint32_t gen, std::uint32_t slot) noexcept {
  return (static_cast<std::uint64_t>(op) << 56) | (static_cast<std::uint64_t>(gen & 0xffffffu) << 32) | slot;
}
constexpr Op op_of(std::uint64_t u) noexcept { return static_cast<Op>(u >> 56); }
constexpr std::uint32_t gen_of(std::uint64_t u) noexcept { return static_cast<std::uint32_t>((u >> 32) & 0xffffffu); }
constexpr std::uint32_t slot_of(std::uint64_t u) noexcept { return static_cast<std::uint32_t>(u); }

class UringDriver final : public Driver {
 public:
  explicit UringDriver(const DriverConfig& c) : cfg_(c) {}

  ~UringDriver() override {
    if (ring_ok_) io_uring_queue_exit(&ring_);
    if (br_ != nullptr) ::munmap(br_, br_bytes_);
    std::free(bufs_);
  }

  bool init(std::string& error) {
    io_uring_params p{};
    if (cfg_.uring_sqpoll) {
      p.flags |= IORING_SETUP_SQPOLL;
      p.sq_thread_idle = 1000;
      if (cfg_.uring_sqpoll_cpu >= 0) {
        p.flags |= IORING_SETUP_SQ_AFF;
        p.sq_thread_cpu = static_cast<unsigned>(cfg_.uring_sqpoll_cpu);
      }
    }
    // Completions of receives are finished by task work in this thread. By
    // default the kernel interrupts the thread for it (an IPI per completion
    // when it runs on another core: a VM exit here); cooperative task run
    // leaves it pending with a flag in the SQ ring that the spinning peek
    // sees, and the next io_uring_enter runs it. Older kernels refuse the
    // flags: the ring is then made without them.
    io_uring_params coop = p;
    coop.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    int rc = io_uring_queue_init_params(cfg_.uring_entries, &ring_, &coop);
    if (rc == -EINVAL) rc = io_uring_queue_init_params(cfg_.uring_entries, &ring_, &p);
    if (rc < 0) {
      error = std::string("io_uring_queue_init: ") + std::strerror(-rc);
      return false;
    }
    ring_ok_ = true;
    nbufs_ = 1;
    while (nbufs_ < cfg_.uring_buffers) nbufs_ <<= 1;
    if (nbufs_ > 32768) nbufs_ = 32768;
    br_bytes_ = nbufs_ * sizeof(io_uring_buf);
    void* ring_mem = ::mmap(nullptr, br_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (ring_mem == MAP_FAILED) {
      error = std::string("mmap(buffer ring): ") + std::strerror(errno);
      return false;
    }
    br_ = static_cast<io_uring_buf_ring*>(ring_mem);
    io_uring_buf_ring_init(br_);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uint64_t>(br_);
    reg.ring_entries = nbufs_;
    reg.bgid = 0;
    rc = io_uring_register_buf_ring(&ring_, &reg, 0);
    if (rc < 0) {
      error = std::string("io_uring_register_buf_ring: ") + std::strerror(-rc) + " (needs Linux >= 5.19)";
      return false;
    }
    if (::posix_memalign(reinterpret_cast<void**>(&bufs_), 4096,
                         static_cast<std::size_t>(nbufs_) * cfg_.uring_buffer_size) != 0) {
      error = "cannot allocate provided buffers";
      return false;
    }
    mask_ = io_uring_buf_ring_mask(nbufs_);
    for (unsigned i = 0; i < nbufs_; ++i) {
      io_uring_buf_ring_add(br_, buffer(i), cfg_.uring_buffer_size, static_cast<unsigned short>(i), mask_,
                            static_cast<int>(i));
    }
    io_uring_buf_ring_advance(br_, static_cast<int>(nbufs_));
    cqes_.resize(static_cast<std::size_t>(cfg_.max_events));
    return true;
  }

  const char* name() const noexcept override { return "uring"; }

  bool listen(int fd, std::string& error) override {
    listeners_.push_back(fd);
    if (!arm_accept(static_cast<std::uint32_t>(listeners_.size() - 1))) {
      error = "io_uring: submission queue full";
      return false;
    }
    io_uring_submit(&ring_);
    return true;
  }

  bool add(Conn& c, std::string& error) override {
    last_options_ = apply_options(c.fd, cfg_.socket);
    if (c.slot >= conns_.size()) conns_.resize(c.slot + 1, nullptr);
    conns_[c.slot] = &c;
    c.watching = true;
    c.write_blocked = false;
    c.send_in_flight = false;
    if (!arm_recv(c)) {
      c.watching = false;
      error = "io_uring: submission queue full";
      return false;
    }
    return true;
  }

  Io flush(Conn& c) noexcept override {
    if (c.send_in_flight || c.tx.empty() || c.fd < 0) return Io::ok;
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return Io::retry;
    io_uring_prep_send(sqe, c.fd, c.tx.data(), c.tx.size(), MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, encode(kSend, c.gen, c.slot));
    c.tx.lock();
    c.send_in_flight = true;
    ++c.ops_in_flight;
    return Io::ok;
  }

  void remove(Conn& c) noexcept override {
    if (c.fd >= 0) {
      if (c.ops_in_flight > 0) {
        if (io_uring_sqe* sqe = get_sqe()) {
          io_uring_prep_cancel_fd(sqe, c.fd, IORING_ASYNC_CANCEL_ALL);
          io_uring_sqe_set_data64(sqe, encode(kCancel, 0, 0));
        }
        io_uring_submit(&ring_);  // before close(): the cancel names the fd
      }
      ::close(c.fd);
    }
    c.fd = -1;
    c.watching = false;
  }

  int poll(Sink& sink, int timeout_us) noexcept override {
    if (io_uring_sq_ready(&ring_) > 0) io_uring_submit(&ring_);
    unsigned n = io_uring_peek_batch_cqe(&ring_, cqes_.data(), static_cast<unsigned>(cqes_.size()));
    if (n == 0 && timeout_us > 0) {
      __kernel_timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000LL};
      io_uring_cqe* cqe = nullptr;
      io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
      n = io_uring_peek_batch_cqe(&ring_, cqes_.data(), static_cast<unsigned>(cqes_.size()));
    }
    int work = 0;
    int recycled = 0;
    for (unsigned i = 0; i < n; ++i) work += handle(*cqes_[i], sink, recycled);
    if (n > 0) io_uring_cq_advance(&ring_, n);
    if (recycled > 0) io_uring_buf_ring_advance(br_, recycled);
    if (io_uring_sq_ready(&ring_) > 0) io_uring_submit(&ring_);
    return work;
  }

 private:
  char* buffer(unsigned bid) noexcept { return bufs_ + static_cast<std::size_t>(bid) * cfg_.uring_buffer_size; }

  io_uring_sqe* get_sqe() noexcept {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  bool arm_accept(std::uint32_t index) noexcept {
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return false;
    io_uring_prep_multishot_accept(sqe, listeners_[index], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, encode(kAccept, 0, index));
    return true;
  }

  bool arm_recv(Conn& c) noexcept {
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) return false;
    io_uring_prep_recv(sqe, c.fd, nullptr, cfg_.uring_buffer_size, 0);
    // A receive is re-armed right after the bytes were consumed: the next
    // message is not there yet, so skip the attempt that would fail and wait
    // for readiness at once (Linux >= 5.19, as the buffer ring).
    sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    io_uring_sqe_set_data64(sqe, encode(kRecv, c.gen, c.slot));
    ++c.ops_in_flight;
    c.recv_paused = false;
    return true;
  }

  bool room_for_a_buffer(const Conn& c) const noexcept {
    return c.rx.capacity() - c.rx.size() >= cfg_.uring_buffer_size;
  }
  void rearm(Conn& c) noexcept {
    if (room_for_a_buffer(c)) {
      arm_recv(c);
    } else {
      c.recv_paused = true;
    }
  }

 public:
  void resume(Conn& c) noexcept override {
    if (c.recv_paused && c.watching && c.fd >= 0 && room_for_a_buffer(c)) arm_recv(c);
  }

 private:
  void recycle(unsigned bid, int& recycled) noexcept {
    io_uring_buf_ring_add(br_, buffer(bid), cfg_.uring_buffer_size, static_cast<unsigned short>(bid), mask_, recycled);
    ++recycled;
  }

  int handle(const io_uring_cqe& cqe, Sink& sink, int& recycled) noexcept {
    const std::uint64_t ud = io_uring_cqe_get_data64(&cqe);
    const bool more = (cqe.flags & IORING_CQE_F_MORE) != 0;
    switch (op_of(ud)) {
      case kAccept: {
        const std::uint32_t index = slot_of(ud);
        if (cqe.res >= 0) sink.on_accepted(cqe.res);
        if (!more && index < listeners_.size() && cqe.res != -ECANCELED && cqe.res != -EBADF) arm_accept(index);
        return cqe.res >= 0 ? 1 : 0;
      }
      case kRecv: {
        const std::uint32_t slot = slot_of(ud);
        Conn* c = slot < conns_.size() ? conns_[slot] : nullptr;
        const bool has_buf = (cqe.flags & IORING_CQE_F_BUFFER) != 0;
        const unsigned bid = cqe.flags >> IORING_CQE_BUFFER_SHIFT;
        const bool mine = c != nullptr && (c->gen & 0xffffffu) == gen_of(ud);
        if (mine && !more) --c->ops_in_flight;
        if (!mine) {
          if (has_buf) recycle(bid, recycled);
          return 0;
        }
        if (cqe.res > 0) {
          if (c->watching) sink.on_data(*c, buffer(bid), static_cast<std::size_t>(cqe.res));
          if (has_buf) recycle(bid, recycled);
          if (!more && c->watching) rearm(*c);
          return 1;
        }
        if (has_buf) recycle(bid, recycled);
        if (!c->watching) return 0;
        if (cqe.res == -ENOBUFS) {  // every provided buffer in use: they return below, re-arm
          if (!more) rearm(*c);
          return 0;
        }
        if (cqe.res == 0 || !more) {
          c->watching = false;
          sink.on_closed(*c, cqe.res == 0 ? Io::closed : Io::error, -cqe.res);
        }
        return 1;
      }
      case kSend: {
        const std::uint32_t slot = slot_of(ud);
        Conn* c = slot < conns_.size() ? conns_[slot] : nullptr;
        if (c == nullptr || (c->gen & 0xffffffu) != gen_of(ud)) return 0;
        --c->ops_in_flight;
        c->send_in_flight = false;
        c->tx.unlock();
        if (cqe.res > 0) {
          c->tx.consume(static_cast<std::size_t>(cqe.res));
          c->bytes_sent += static_cast<std::uint64_t>(cqe.res);
          if (c->watching && !c->tx.empty()) flush(*c);
          return 1;
        }
        if (c->watching && cqe.res < 0 && cqe.res != -EAGAIN) {
          c->watching = false;
          sink.on_closed(*c, Io::error, -cqe.res);
        }
        return 0;
      }
      case kCancel: return 0;
    }
    return 0;
  }

  DriverConfig cfg_;
  io_uring ring_{};
  bool ring_ok_ = false;
  io_uring_buf_ring* br_ = nullptr;
  std::size_t br_bytes_ = 0;
  char* bufs_ = nullptr;
  unsigned nbufs_ = 0;
  int mask_ = 0;
  std::vector<int> listeners_;
  std::vector<Conn*> conns_;
  std::vector<io_uring_cqe*> cqes_;
};

}  // namespace

std::unique_ptr<Driver> make_uring_driver(const DriverConfig& c, std::string& error) {
  auto d = std::make_unique<UringDriver>(c);
  if (!d->init(error)) return nullptr;
  return d;
}

}  // namespace kite::transport
