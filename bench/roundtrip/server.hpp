// The measured server side of bench_roundtrip: options shared by the
// flavours, and the raw flavour (a plain TCP server that answers each
// complete order frame with a reply of an execution report's size and does
// no FIX work: the transport's floor).
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace kite::bench {

struct ServerOptions {
  std::string flavour = "cpp";     // cpp | raw | quickfix
  std::string transport = "kernel";
  std::string model = "single";    // single | mono | pool | shard
  std::string bind = "127.0.0.1";
  int port = 0;                    // 0: an ephemeral port, written to the ready file
  unsigned sessions = 1;
  unsigned workers = 2;            // pool and shard threads
  std::vector<int> cores;          // server threads pinned in order
  int coordinator_core = -1;
  int busy_poll_usecs = 0;
  bool spin = true;
  bool quickack = false;           // cpp: re-arm TCP_QUICKACK after each read (off: the engine's default)
  std::string store = "null";
  std::string store_dir;
  std::string ready_file;
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
