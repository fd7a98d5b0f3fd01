// What read_some and write_some return over a real loopback connection, shared
// by the direct test (sockets_test) and the interposed one (interposed_test).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "kite/transport/tcp.hpp"

namespace kite::transport::testing {

// op() until done(its result), 1 ms apart, up to a second; the last result.
template <class Op, class Done>
auto retry_until(Op op, Done done) {
  auto r = op();
  for (int i = 1; i < 1000 && !done(r); ++i) {
    ::usleep(1000);
    r = op();
  }
  return r;
}

// EAGAIN -> retry, data -> ok with its size, the peer's close -> closed, and a
// write to a closed peer -> error (EPIPE or ECONNRESET, without a SIGPIPE).
inline void expect_read_write_mapping() {
  auto l = listen_tcp("127.0.0.1", 0, false);
  ASSERT_GE(l.fd, 0);
  auto c = connect_tcp("127.0.0.1", l.port);
  ASSERT_GE(c.fd, 0);
  const int s = retry_until([&] { return accept_nonblocking(l.fd); }, [](int fd) { return fd >= 0; });
  ASSERT_GE(s, 0);
  char buf[16];
  EXPECT_EQ(read_some(s, buf, sizeof buf).status, Io::retry);
  EXPECT_EQ(write_some(c.fd, "abc", 3).status, Io::ok);
  const auto read_s = [&] { return read_some(s, buf, sizeof buf); };
  const auto not_retry = [](const IoResult& r) { return r.status != Io::retry; };
  IoResult r = retry_until(read_s, not_retry);
  ASSERT_EQ(r.status, Io::ok);
  EXPECT_EQ(r.bytes, 3u);
  EXPECT_EQ(std::string(buf, 3), "abc");
  ::close(c.fd);
  r = retry_until(read_s, not_retry);
  EXPECT_EQ(r.status, Io::closed);
  // The first write to a closed peer may still succeed (the reset comes back after it).
  r = retry_until([&] { return write_some(s, "x", 1); }, [](const IoResult& w) { return w.status == Io::error; });
  EXPECT_EQ(r.status, Io::error);
  EXPECT_TRUE(r.err == EPIPE || r.err == ECONNRESET) << r.err;
  ::close(s);
  ::close(l.fd);
}

}  // namespace kite::transport::testing
