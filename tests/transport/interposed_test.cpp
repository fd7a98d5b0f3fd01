// read_some and write_some under a wrapper of recv and send, as an LD_PRELOAD
// kernel-bypass stack (Onload, VMA) puts one in front of libc's: they must call
// it, not enter the kernel past it. This binary exports its own recv and send
// (ENABLE_EXPORTS), which count and pass on to libc's.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>

#include "kite/transport/tcp.hpp"
#include "transport/read_write_cases.hpp"

namespace {
std::atomic<int> g_recv_calls{0}, g_send_calls{0};
}

extern "C" ssize_t recv(int fd, void* p, size_t n, int flags) {
  using Fn = ssize_t (*)(int, void*, size_t, int);
  static const auto next = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "recv"));
  g_recv_calls.fetch_add(1);
  return next(fd, p, n, flags);
}

extern "C" ssize_t send(int fd, const void* p, size_t n, int flags) {
  using Fn = ssize_t (*)(int, const void*, size_t, int);
  static const auto next = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, "send"));
  g_send_calls.fetch_add(1);
  return next(fd, p, n, flags);
}

namespace kite::transport {
namespace {

TEST(InterposedSocketCalls, areSeenAndCalledByReadAndWrite) {
  EXPECT_FALSE(socket_calls_direct());
  const int recvs = g_recv_calls.load(), sends = g_send_calls.load();
  testing::expect_read_write_mapping();
  // Every read_some and write_some went through the wrappers.
  EXPECT_GE(g_recv_calls.load() - recvs, 3);
  EXPECT_GE(g_send_calls.load() - sends, 2);
}

}  // namespace
}  // namespace kite::transport
