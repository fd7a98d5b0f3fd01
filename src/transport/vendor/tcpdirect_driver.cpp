// TCPDirect (Solarflare/AMD zf API) driver. Compiled only with
// KITE_WITH_TCPDIRECT=ON and the SDK's zf/zf.h. NOT BUILT OR RUN on the
// development machine (no SDK, no Solarflare NIC): written from the public
// zf_tcp.h documentation, untested; no figure is claimed for it.
//
// zf has no file descriptors: a connection is a `zft*`. The driver hands the
// engine small integer handles (index in its table) as Conn::fd, owns its
// listening zocket (zftl) and its stack, and drives everything from
// zf_reactor_perform() in the duty cycle. Receives are zero-copy
// (zft_zc_recv): bytes are offered to the sink where the NIC put them, and
// only a partial frame is copied into the connection's RecvBuffer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <zf/zf.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "kite/transport/vendor.hpp"

namespace kite::transport::vendor {
namespace {

class TcpDirectDriver final : public Driver {
 public:
  explicit TcpDirectDriver(const DriverConfig& c) : cfg_(c) {}
  ~TcpDirectDriver() override {
    for (zft* z : zockets_) {
      if (z != nullptr) zft_free(z);
    }
    if (listener_ != nullptr) zftl_free(listener_);
    if (stack_ != nullptr) zf_stack_free(stack_);
    if (attr_ != nullptr) zf_attr_free(attr_);
    if (initialised_) zf_deinit();
  }

  bool init(const std::string& address, std::uint16_t port, std::string& error) {
    int rc = zf_init();
    if (rc < 0) return fail(error, "zf_init", rc);
    initialised_ = true;
    if ((rc = zf_attr_alloc(&attr_)) < 0) return fail(error, "zf_attr_alloc (check ZF_ATTR)", rc);
    if ((rc = zf_stack_alloc(attr_, &stack_)) < 0) return fail(error, "zf_stack_alloc", rc);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
      error = "tcpdirect: bind address must be a numeric interface address, got '" + address + "'";
      return false;
    }
    rc = zftl_listen(stack_, reinterpret_cast<sockaddr*>(&sa), sizeof sa, attr_, &listener_);
    if (rc < 0) return fail(error, "zftl_listen", rc);
    return true;
  }

  const char* name() const noexcept override { return "tcpdirect"; }
  bool listen(int, std::string& error) override {
    error = "tcpdirect: the driver owns its listening zocket";
    return false;
  }
  bool add(Conn& c, std::string& error) override {
    if (zocket(c.fd) == nullptr) {
      error = "tcpdirect: unknown zocket handle";
      return false;
    }
    c.watching = true;
    watched_.push_back(&c);
    return true;
  }
  Io flush(Conn& c) noexcept override {
    zft* z = zocket(c.fd);
    while (z != nullptr && !c.tx.empty()) {
      const ssize_t n = zft_send_single(z, c.tx.data(), c.tx.size(), 0);
      if (n > 0) {
        c.tx.consume(static_cast<std::size_t>(n));
        c.bytes_sent += static_cast<std::uint64_t>(n);
        continue;
      }
      if (n == -EAGAIN || n == -ENOMEM) {
        c.write_blocked = true;
        return Io::retry;
      }
      return Io::error;
    }
    c.write_blocked = false;
    return Io::ok;
  }
  void remove(Conn& c) noexcept override {
    discard(c.fd);
    std::erase(watched_, &c);
    c.fd = -1;
    c.watching = false;
  }
  void discard(int fd) noexcept override {
    if (zft* z = zocket(fd)) {
      zft_free(z);
      zockets_[static_cast<std::size_t>(fd)] = nullptr;
    }
  }

  int poll(Sink& sink, int) noexcept override {
    // The block idle strategy degrades to spinning: zf's own waiting
    // (zf_muxer_wait) is not wired in.
    int work = zf_reactor_perform(stack_) != 0 ? 1 : 0;
    zft* accepted = nullptr;
    while (zftl_accept(listener_, &accepted) == 0) {
      ++work;
      sink.on_accepted(store(accepted));
    }
    for (std::size_t i = watched_.size(); i-- > 0;) {
      Conn& c = *watched_[i];
      if (!c.watching) continue;
      if (c.write_blocked && flush(c) == Io::ok) ++work;
      work += read(c, sink);
    }
    return work;
  }

 private:
  struct Msg {
    zft_msg msg;
    iovec iov[8];
  };

  int read(Conn& c, Sink& sink) noexcept {
    zft* z = zocket(c.fd);
    if (z == nullptr) return 0;
    Msg m{};
    m.msg.iovcnt = 8;
    zft_zc_recv(z, &m.msg, 0);
    if (m.msg.iovcnt == 0) return 0;
    bool eof = false;
    for (int i = 0; i < m.msg.iovcnt && c.watching; ++i) {
      if (m.iov[i].iov_len == 0) {
        eof = true;  // zf marks EOF with a zero-length buffer
        continue;
      }
      sink.on_data(c, static_cast<const char*>(m.iov[i].iov_base), m.iov[i].iov_len);
    }
    // Everything offered was consumed or copied by the sink.
    const int rc = zft_zc_recv_done(z, &m.msg);
    if (c.watching && (eof || rc <= 0)) {
      c.watching = false;
      sink.on_closed(c, rc == 0 ? Io::closed : Io::error, rc < 0 ? -rc : 0);
    }
    return 1;
  }

  int store(zft* z) {
    for (std::size_t i = 0; i < zockets_.size(); ++i) {
      if (zockets_[i] == nullptr) {
        zockets_[i] = z;
        return static_cast<int>(i);
      }
    }
    zockets_.push_back(z);
    return static_cast<int>(zockets_.size() - 1);
  }
  zft* zocket(int fd) const noexcept {
    return fd >= 0 && static_cast<std::size_t>(fd) < zockets_.size() ? zockets_[static_cast<std::size_t>(fd)] : nullptr;
  }
  static bool fail(std::string& error, const char* what, int rc) {
    error = std::string("tcpdirect: ") + what + ": " + std::strerror(-rc);
    return false;
  }

  DriverConfig cfg_;
  bool initialised_ = false;
  zf_attr* attr_ = nullptr;
  zf_stack* stack_ = nullptr;
  zftl* listener_ = nullptr;
  std::vector<zft*> zockets_;
  std::vector<Conn*> watched_;
};

}  // namespace

std::unique_ptr<Driver> make_tcpdirect_driver(const DriverConfig& c, const std::string& bind_address,
                                              std::uint16_t port, std::string& error) {
  auto d = std::make_unique<TcpDirectDriver>(c);
  if (!d->init(bind_address, port, error)) return nullptr;
  return d;
}

}  // namespace kite::transport::vendor
