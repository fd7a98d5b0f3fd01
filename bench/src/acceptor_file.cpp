#include "kite/bench/acceptor_file.hpp"

#include <algorithm>
#include <cstdio>

namespace kite::bench {
namespace {

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += u;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string engine_table(const AcceptorFile& f) {
  std::string cores;
  for (const int c : f.cores) cores += (cores.empty() ? "" : ", ") + std::to_string(c);
  std::string t = "[engine]\n";
  t += "model = " + quoted(f.model) + "\n";
  t += "transport = " + quoted(f.transport) + "\n";
  t += "bind = " + quoted(f.bind) + "\n";
  t += "port = " + std::to_string(f.port) + "\n";
  t += "workers = " + std::to_string(std::max(1u, f.workers)) + "\n";
  t += "cores = [" + cores + "]\n";
  t += "coordinator_core = " + std::to_string(f.coordinator_core) + "\n";
  t += std::string("idle = ") + (f.spin ? "\"busy_spin\"" : "\"block\"") + "\n";
  t += "busy_poll_usecs = " + std::to_string(f.busy_poll_usecs) + "\n";
  t += std::string("quickack = ") + (f.quickack ? "true" : "false") + "\n";
  if (f.uring_sqpoll) t += "uring_sqpoll = true\n";
  // Room for a client's reconnect while its old connection is being closed.
  t += "max_connections = " + std::to_string(std::max(1u, f.sessions) + 4) + "\n";
  if (f.transport == "tls") {
    // The certificate and key the lab made for this sitting; no client certificate asked for.
    t += "\n[tls]\n";
    t += "certificate = " + quoted(f.tls_cert) + "\n";
    t += "private_key = " + quoted(f.tls_key) + "\n";
  }
  return t;
}

}  // namespace

std::string render_acceptor_file(const AcceptorFile& f) {
  std::string t = "# The kite-acceptor file of this cell (kite::bench::render_acceptor_file).\n";
  t += engine_table(f);
  t += "\n[app]\nmode = \"ack\"\n";
  t += "\n[defaults]\n";
  t += "BeginString = \"FIX.4.4\"\n";
  t += "SenderCompID = " + quoted(kServerCompID) + "\n";
  t += "ResetOnLogon = true\n";
  t += "ResetOnDisconnect = true\n";
  t += "UseDataDictionary = false\n";
  t += "CheckLatency = false\n";
  t += "StoreKind = " + quoted(f.store) + "\n";
  t += "FileStorePath = " + quoted(f.store_dir.empty() ? "." : f.store_dir) + "\n";
  if (f.store == "postgresql") {
    if (!f.store_conninfo.empty()) t += "PostgreSQLStoreConnectionString = " + quoted(f.store_conninfo) + "\n";
    if (!f.store_commit.empty()) t += "PostgreSQLStoreCommit = " + quoted(f.store_commit) + "\n";
  }
  for (unsigned k = 0; k < std::max(1u, f.sessions); ++k)
    t += "\n[[session]]\nTargetCompID = " + quoted(client_comp_id(k)) + "\n";
  return t;
}

bool write_file_atomically(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  if (out == nullptr) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const bool closed = std::fclose(out) == 0;
  if (written && closed && std::rename(tmp.c_str(), path.c_str()) == 0) return true;
  std::remove(tmp.c_str());
  return false;
}

}  // namespace kite::bench
