// VMA socketxtreme driver (libvma's vma_extra.h). Compiled only with
// KITE_WITH_SOCKETXTREME=ON and mellanox/vma_extra.h. NOT BUILT OR RUN on the
// development machine (no libvma, no Mellanox NIC): written from the public
// vma_extra.h documentation, untested; no figure is claimed for it.
//
// The process must run under libvma (LD_PRELOAD, see build_launch()): the
// sockets are ordinary descriptors that VMA offloads. Instead of epoll the
// duty cycle calls socketxtreme_poll() on the rings of the listening and
// connected sockets. Connections are accepted by VMA itself
// (VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED: accept() must not be called),
// and received packets arrive as VMA buffers that are offered to the sink in
// place, then freed with socketxtreme_free_vma_packets().
#include <mellanox/vma_extra.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "kite/transport/vendor.hpp"

namespace kite::transport::vendor {
namespace {

class SocketXtremeDriver final : public Driver {
 public:
  explicit SocketXtremeDriver(const DriverConfig& c) : cfg_(c) {}

  bool init(std::string& error) {
    api_ = vma_get_api();
    if (api_ == nullptr) {
      error = "socketxtreme: libvma's extra API is not available (run under LD_PRELOAD=libvma.so with socketxtreme enabled)";
      return false;
    }
    comps_.resize(static_cast<std::size_t>(cfg_.max_events));
    return true;
  }

  const char* name() const noexcept override { return "socketxtreme"; }

  bool listen(int fd, std::string& error) override { return add_rings(fd, error); }

  bool add(Conn& c, std::string& error) override {
    last_options_ = apply_options(c.fd, cfg_.socket);
    if (static_cast<std::size_t>(c.fd) >= by_fd_.size()) by_fd_.resize(static_cast<std::size_t>(c.fd) + 1, nullptr);
    by_fd_[static_cast<std::size_t>(c.fd)] = &c;
    c.watching = true;
    return add_rings(c.fd, error);
  }

  Io flush(Conn& c) noexcept override {
    while (!c.tx.empty()) {
      const ssize_t n = ::send(c.fd, c.tx.data(), c.tx.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        c.tx.consume(static_cast<std::size_t>(n));
        c.bytes_sent += static_cast<std::uint64_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        c.write_blocked = true;
        return Io::retry;
      }
      return Io::error;
    }
    c.write_blocked = false;
    return Io::ok;
  }

  void remove(Conn& c) noexcept override {
    if (c.fd >= 0) {
      if (static_cast<std::size_t>(c.fd) < by_fd_.size()) by_fd_[static_cast<std::size_t>(c.fd)] = nullptr;
      ::close(c.fd);
    }
    c.fd = -1;
    c.watching = false;
  }

  int poll(Sink& sink, int) noexcept override {
    int work = 0;
    for (const int ring : rings_) {
      const int n = api_->socketxtreme_poll(ring, comps_.data(), static_cast<unsigned>(comps_.size()), 0);
      for (int i = 0; i < n; ++i) work += handle(comps_[static_cast<std::size_t>(i)], sink);
    }
    for (Conn* c : by_fd_) {
      if (c != nullptr && c->watching && c->write_blocked && flush(*c) == Io::ok) ++work;
    }
    return work;
  }

 private:
  int handle(vma_completion_t& comp, Sink& sink) noexcept {
    const int fd = static_cast<int>(comp.user_data);
    if (comp.events & VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED) {
      sink.on_accepted(fd);
      return 1;
    }
    Conn* c = (fd >= 0 && static_cast<std::size_t>(fd) < by_fd_.size()) ? by_fd_[static_cast<std::size_t>(fd)] : nullptr;
    if (comp.events & VMA_SOCKETXTREME_PACKET) {
      for (vma_buff_t* b = comp.packet.buff_lst; b != nullptr && c != nullptr && c->watching; b = b->next) {
        sink.on_data(*c, static_cast<const char*>(b->payload), b->len);
      }
      api_->socketxtreme_free_vma_packets(&comp.packet, 1);
    }
    if (c != nullptr && c->watching && (comp.events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
      c->watching = false;
      sink.on_closed(*c, (comp.events & EPOLLERR) ? Io::error : Io::closed, 0);
    }
    return 1;
  }

  bool add_rings(int fd, std::string& error) {
    int fds[8];
    const int n = api_->get_socket_rings_fds(fd, fds, 8);
    if (n < 0) {
      error = std::string("socketxtreme: get_socket_rings_fds: ") + std::strerror(errno) + " (socket not offloaded?)";
      return false;
    }
    for (int i = 0; i < n; ++i) {
      bool known = false;
      for (const int r : rings_) known = known || r == fds[i];
      if (!known) rings_.push_back(fds[i]);
    }
    return true;
  }

  DriverConfig cfg_;
  vma_api_t* api_ = nullptr;
  std::vector<int> rings_;
  std::vector<Conn*> by_fd_;
  std::vector<vma_completion_t> comps_;
};

}  // namespace

std::unique_ptr<Driver> make_socketxtreme_driver(const DriverConfig& c, std::string& error) {
  auto d = std::make_unique<SocketXtremeDriver>(c);
  if (!d->init(error)) return nullptr;
  return d;
}

}  // namespace kite::transport::vendor
