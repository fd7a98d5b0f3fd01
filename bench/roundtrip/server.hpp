// The measured server side of bench_roundtrip: options shared by the
// flavours, and the raw flavour (a plain TCP server that answers each
// complete order frame with a reply of an execution report's size and does
// no FIX work: the transport's floor).
#pragma once

#include <atomic>
#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include <string>
#include <vector>

namespace kite::bench {

struct ServerOptions {
  std::string flavour = "cpp";  // cpp | raw | quickfix
  std::string transport = "kernel";
  std::string model = "single";  // single | mono | pool | shard
  std::string bind = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port, written to the ready file
  unsigned sessions = 1;
  unsigned workers = 2;    // pool and shard threads
  std::vector<int> cores;  // server threads pinned in order
  int coordinator_core = -1;
  int busy_poll_usecs = 0;
  bool spin = true;
  bool quickack = false;      // cpp: re-arm TCP_QUICKACK after each read (off: the engine's default)
  bool uring_sqpoll = false;  // cpp, transport uring: a kernel thread polls the submission queue
  std::string store = "null";
  std::string store_dir;
  std::string store_commit, store_conninfo;  // postgresql: PostgreSQLStoreCommit, PostgreSQLStoreConnectionString
  std::string ready_file;
  // cpp: the kite-acceptor file to run (the lab's {acceptor_config}); the engine and store options are then unused.
  std::string acceptor_config;
  // cpp, transport tls: the server's PEM certificate chain and private key.
  std::string tls_cert, tls_key;
};

// How busy a server thread was over the server's life, printed on stderr at
// exit: "server load: NAME polls=N empty=E% busy=B% busy/order=U us
// orders=K". A poll is one pass of the thread's loop (epoll_wait, a direct
// recv pass, QuickFIX's Acceptor::poll, the engine's duty cycle); empty when
// it found nothing to do; busy time is the time of the passes that did work.
// The life includes the wait for the client, so read busy/order first.
void print_server_load(const char* thread, std::uint64_t polls, std::uint64_t empty_polls, double busy_s,
                       double total_s, std::uint64_t orders);

// The same figures for a loop of ours (raw, quickfix): one rdtsc per pass;
// ticks become seconds with the monotonic clock over the loop's life.
class LoopLoad {
 public:
  void start() noexcept;
  // At the end of each pass: whether it did work.
  void pass(bool work) noexcept {
    const std::uint64_t now = ticks();
    ++polls_;
    if (work) {
      busy_ += now - last_;
    } else {
      ++empty_;
    }
    last_ = now;
  }
  void report(const char* thread, std::uint64_t orders) const;

 private:
  static std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(mono_ns());
#endif
  }
  static std::int64_t mono_ns() noexcept;
  std::uint64_t polls_ = 0, empty_ = 0, busy_ = 0, last_ = 0, tsc0_ = 0;
  std::int64_t mono0_ = 0;
};

// Writes the port and a newline to path (atomically: a temporary file renamed).
bool write_ready_file(const std::string& path, int port);

// Listens on bind:port (SO_REUSEADDR, and SO_REUSEPORT when asked); returns
// the socket or -1 with error set. port is updated with the bound port.
int listen_tcp(const std::string& bind, int& port, bool reuse_port, std::string& error);

// Serves until stop is set. Returns a process exit code (0 on a clean stop).
// Supports the kernel transport and the four models.
int run_raw_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error);

}  // namespace kite::bench
