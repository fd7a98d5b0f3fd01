// bench-run serve: the results folder over HTTP on localhost, for a browser
// that will not open file:// pages. GET and HEAD of files only; one request
// per connection; nothing outside the results folder.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kite/lab/report.hpp"

namespace fs = std::filesystem;

namespace kite::lab {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

std::string content_type(const fs::path& p) {
  const std::string e = p.extension().string();
  if (e == ".html") return "text/html; charset=utf-8";
  if (e == ".js") return "text/javascript; charset=utf-8";
  if (e == ".css") return "text/css; charset=utf-8";
  if (e == ".json") return "application/json";
  if (e == ".png") return "image/png";
  if (e == ".svg") return "image/svg+xml";
  return "text/plain; charset=utf-8";
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

void answer(int fd, int status, const char* reason, const std::string& type, const std::string& body, bool head) {
  std::ostringstream h;
  h << "HTTP/1.1 " << status << " " << reason << "\r\nContent-Type: " << type << "\r\nContent-Length: " << body.size()
    << "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  send_all(fd, h.str());
  if (!head) send_all(fd, body);
}

void handle(int fd, const fs::path& root) {
  std::string req;
  char buf[4096];
  // The request line and headers; a client that sends nothing in 5 s is dropped.
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<std::size_t>(n));
  }
  std::istringstream line(req.substr(0, req.find("\r\n")));
  std::string method, target;
  line >> method >> target;
  bool head = method == "HEAD";
  if (method != "GET" && !head) {
    answer(fd, 405, "Method Not Allowed", "text/plain", "GET or HEAD only\n", false);
    return;
  }
  std::string path = url_decode(target.substr(0, target.find_first_of("?#")));
  if (path == "/" || path.empty()) {
    send_all(fd, "HTTP/1.1 302 Found\r\nLocation: /site/index.html\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    return;
  }
  std::error_code ec;
  fs::path file = fs::weakly_canonical(root / fs::path(path).relative_path(), ec);
  const std::string r = root.string(), f = file.string();
  if (ec || f.compare(0, r.size(), r) != 0 || (f.size() > r.size() && f[r.size()] != '/')) {
    answer(fd, 403, "Forbidden", "text/plain", "outside the results folder\n", head);
    return;
  }
  if (fs::is_directory(file, ec)) file /= "index.html";
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    answer(fd, 404, "Not Found", "text/plain", "no such file: " + path + "\n", head);
    return;
  }
  std::ostringstream body;
  body << in.rdbuf();
  answer(fd, 200, "OK", content_type(file), body.str(), head);
}

}  // namespace

int serve_results(const std::string& results_dir, int port) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(results_dir), ec);
  if (ec || !fs::is_directory(root)) {
    std::fprintf(stderr, "bench-run serve: %s: no such results folder\n", results_dir.c_str());
    return 1;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // localhost only: the page is not published by the lab
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
    std::fprintf(stderr, "bench-run serve: cannot listen on 127.0.0.1:%d: %s (choose another with --port)\n", port,
                 std::strerror(errno));
    ::close(fd);
    return 1;
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  if (!fs::exists(root / "site" / "index.html"))
    std::fprintf(stderr, "bench-run serve: %s has no site yet: run bench-run site\n", root.c_str());
  std::printf("serving %s at http://127.0.0.1:%d/site/index.html (Ctrl-C stops)\n", root.c_str(), ntohs(a.sin_port));
  std::fflush(stdout);
  while (!g_stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 250) <= 0) continue;
    int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    handle(c, root);
    ::close(c);
  }
  ::close(fd);
  return 0;
}

}  // namespace kite::lab
