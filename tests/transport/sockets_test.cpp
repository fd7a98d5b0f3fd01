// Kernel socket set-up and options, io_uring availability (integration: real sockets on loopback).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kite/transport/tcp.hpp"
#include "kite/transport/transport.hpp"
#include "transport/read_write_cases.hpp"

namespace kite::transport {
namespace {

TEST(KernelTcp, optionsAreSetOrTheRefusalIsReported) {
  auto l = listen_tcp("127.0.0.1", 0, false);
  ASSERT_GE(l.fd, 0) << l.error;
  auto c = connect_tcp("127.0.0.1", l.port);
  ASSERT_GE(c.fd, 0) << c.error;
  SocketOptions o;
  o.busy_poll_usecs = 50;
  o.prefer_busy_poll = true;
  const OptionReport r = apply_options(c.fd, o);
  EXPECT_TRUE(r.nodelay);
  int v = 0;
  socklen_t len = sizeof v;
  ASSERT_EQ(::getsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
  EXPECT_EQ(v, 1);
  // Either the kernel took SO_BUSY_POLL (and reads it back) or it said why.
  if (r.busy_poll) {
    EXPECT_EQ(r.busy_poll_usecs_read_back, 50);
  } else {
    EXPECT_NE(r.busy_poll_errno, 0);
  }
  EXPECT_TRUE(r.prefer_busy_poll || r.prefer_busy_poll_errno != 0);
  EXPECT_FALSE(r.describe().empty());
  ::close(c.fd);
  ::close(l.fd);
}

TEST(KernelTcp, aSecondListenerOnTheSamePortSaysPortInUse) {
  auto a = listen_tcp("127.0.0.1", 0, false);
  ASSERT_GE(a.fd, 0);
  auto b = listen_tcp("127.0.0.1", a.port, false);
  EXPECT_LT(b.fd, 0);
  EXPECT_NE(b.error.find("port in use"), std::string::npos) << b.error;
  ::close(a.fd);
}

TEST(KernelTcp, reuseportListenersShareAPort) {
  auto a = listen_tcp("127.0.0.1", 0, true);
  ASSERT_GE(a.fd, 0) << a.error;
  auto b = listen_tcp("127.0.0.1", a.port, true);
  ASSERT_GE(b.fd, 0) << b.error;
  EXPECT_EQ(a.port, b.port);
  ::close(a.fd);
  ::close(b.fd);
}

TEST(KernelTcp, readAndWriteMapEagainToRetryAndEofToClosed) { testing::expect_read_write_mapping(); }

// Nothing wraps this binary's recv and send, so the hot path skips libc's
// wrappers; ASan interposes them, and then the wrappers are called.
TEST(KernelTcp, socketCallsAreDirectUnlessInterposed) {
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_FALSE(socket_calls_direct());
#else
  EXPECT_TRUE(socket_calls_direct());
#endif
}

TEST(Uring, queueInitWorksHereOrSaysWhy) {
  const char* why = nullptr;
  if (!uring_available(&why)) GTEST_SKIP() << "io_uring unavailable: " << why;
  EXPECT_TRUE(compiled_in(Kind::uring));
}

TEST(TransportNames, roundTripThroughParse) {
  for (Kind k : {Kind::kernel, Kind::uring, Kind::onload, Kind::vma, Kind::tcpdirect, Kind::socketxtreme}) {
    Kind back = Kind::kernel;
    ASSERT_TRUE(parse_kind(to_string(k), back));
    EXPECT_EQ(back, k);
  }
  Kind k;
  EXPECT_FALSE(parse_kind("dpdk", k));
}

}  // namespace
}  // namespace kite::transport
