// The kite-acceptor file (docs/acceptor.md) a lab cell's server runs. Every
// flavour that runs Kite's engine (cpp, java-jni, dotnet-native) reads the
// file rendered here, once: the lab writes it for its {acceptor_config}
// placeholder, bench_roundtrip for a server started from flags.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kite::bench {

inline constexpr std::string_view kServerCompID = "KITE";

// "BENCH<k>": the SenderCompID of client session k.
inline std::string client_comp_id(unsigned k) { return "BENCH" + std::to_string(k); }

// A cell's server, as the acceptor file states it.
struct AcceptorFile {
  std::string model = "single";      // single | mono | pool | shard
  std::string transport = "kernel";  // kernel | uring | tls | ...
  std::string bind = "127.0.0.1";
  int port = 0;            // 0: an ephemeral port
  unsigned sessions = 1;   // one FIX.4.4 session KITE -> BENCH<k> each
  unsigned workers = 2;    // pool and shard threads
  std::vector<int> cores;  // server threads pinned in order
  int coordinator_core = -1;
  bool spin = true;  // busy_spin, else block
  int busy_poll_usecs = 0;
  bool quickack = false;
  bool uring_sqpoll = false;
  std::string store = "null";                // StoreKind
  std::string store_dir;                     // FileStorePath ("" : the working folder)
  std::string store_commit, store_conninfo;  // postgresql only ("" : the store's defaults)
  std::string tls_cert, tls_key;             // transport tls: the server's PEM chain and key
};

// The file's text: a venue's settings as kite-acceptor ships them, except
// where every flavour must do the same work (sessions reset at Logon, no
// dictionary validation, no SendingTime check).
std::string render_acceptor_file(const AcceptorFile& f);

// Writes text to path through a temporary file renamed over it; false on error.
bool write_file_atomically(const std::string& path, std::string_view text);

}  // namespace kite::bench
