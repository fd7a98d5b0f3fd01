// What read_some and write_some return over a real loopback connection, shared
// by the direct test (sockets_test) and the interposed one (interposed_test).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "kite/transport/tcp.hpp"

namespace kite::transport::testing {

// Retries op (sleeping 1 ms) while it says retry, up to a second.
template <class Op>
IoResult until_not_retry(Op op) {
  IoResult r{Io::retry, 0, 0};
  for (int i = 0; i < 1000 && r.status == Io::retry; ++i) {
    r = op();
    if (r.status == Io::retry) ::usleep(1000);
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
  int s = -1;
  for (int i = 0; i < 1000 && s < 0; ++i) {
    s = accept_nonblocking(l.fd);
    if (s < 0) ::usleep(1000);
  }
  ASSERT_GE(s, 0);
  char buf[16];
  EXPECT_EQ(read_some(s, buf, sizeof buf).status, Io::retry);
  EXPECT_EQ(write_some(c.fd, "abc", 3).status, Io::ok);
  IoResult r = until_not_retry([&] { return read_some(s, buf, sizeof buf); });
  ASSERT_EQ(r.status, Io::ok);
  EXPECT_EQ(r.bytes, 3u);
  EXPECT_EQ(std::string(buf, 3), "abc");
  ::close(c.fd);
  r = until_not_retry([&] { return read_some(s, buf, sizeof buf); });
  EXPECT_EQ(r.status, Io::closed);
  // The first write to a closed peer may still succeed (the reset comes back after it).
  for (int i = 0; i < 1000 && r.status != Io::error; ++i) {
    r = write_some(s, "x", 1);
    if (r.status != Io::error) ::usleep(1000);
  }
  EXPECT_EQ(r.status, Io::error);
  EXPECT_TRUE(r.err == EPIPE || r.err == ECONNRESET) << r.err;
  ::close(s);
  ::close(l.fd);
}

}  // namespace kite::transport::testing
