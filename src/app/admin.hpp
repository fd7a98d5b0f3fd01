// The operators' channel of kite-acceptor (docs/operations.md): a thread
// `kite-admin` serving kite-admin's requests on a Unix-domain socket and,
// when configured, the Prometheus text on a localhost HTTP port. Off the
// hot path: it reads the link's counters and hands session commands to the
// sessions' own threads (Acceptor::run).
//
// Protocol on the socket: the request is the command's words, one per line,
// ended by an empty line; the answer is "ok" or "error" on its first line,
// then the text; the server closes the connection after it.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kite/app/acceptor.hpp"

namespace kite::app {

// The answer to one request (words as kite-admin sent them); `uid` asked.
struct AdminAnswer {
  bool ok = false;
  std::string text;
};
AdminAnswer admin_command(Acceptor& acceptor, const std::vector<std::string>& words);

// The Prometheus text exposition (version 0.0.4) of the acceptor's counters.
std::string metrics_text(const Acceptor& acceptor);

class AdminServer {
 public:
  AdminServer(Acceptor& acceptor, const AdminConfig& config, session::Logger& log) noexcept
      : acceptor_(acceptor), config_(config), log_(log) {}
  ~AdminServer() { stop(); }
  // Binds the socket (and the HTTP port) and starts the thread; false with
  // `error` set ("admin socket /run/kite.sock: in use by a running process").
  bool start(std::string& error);
  void stop() noexcept;
  std::uint16_t metrics_port() const noexcept { return http_port_; }

 private:
  void run() noexcept;
  void serve_admin(int fd) noexcept;
  void serve_http(int fd) noexcept;
  Acceptor& acceptor_;
  AdminConfig config_;
  session::Logger& log_;
  int unix_fd_ = -1;
  int http_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t http_port_ = 0;
  std::thread thread_;
};

}  // namespace kite::app
