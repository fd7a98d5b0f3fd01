// kite-admin: talks to a running kite-acceptor over its admin socket
// ([admin] socket in its configuration; docs/operations.md).
//
//   kite-admin --socket /run/kite/admin.sock sessions [--json]
//   kite-admin --socket ... set-seq FIX.4.4:KITE->PEER --in 5 --out 9
//
// Exit status: 0 when the acceptor did it, 1 when it refused (the reason is
// printed), 2 when it could not be asked (no socket, no permission, usage).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App cli{
      "kite-admin: operate a running kite-acceptor through its admin socket.\n"
      "commands: sessions [--json] | status [--json] | metrics | logout SESSION [--text TEXT] |\n"
      "  disconnect SESSION | set-seq SESSION [--in N] [--out M] [--force] | reset SESSION [--force] |\n"
      "  pause-logons | resume-logons | message-log SESSION on|off | help\n"
      "SESSION: a session ID (FIX.4.4:KITE->PEER) or the counterparty's CompID when it names one session"};
  std::string socket_path;
  int timeout_s = 10;
  cli.add_option("--socket,-s", socket_path, "the acceptor's admin socket ([admin] socket)")->required();
  cli.add_option("--timeout", timeout_s, "seconds to wait for the answer")->check(CLI::Range(1, 3600));
  cli.prefix_command();  // everything after the options is the command
  CLI11_PARSE(cli, argc, argv);
  const std::vector<std::string> words = cli.remaining();
  if (words.empty()) {
    std::fprintf(stderr, "kite-admin: no command (try: kite-admin --socket %s help)\n", socket_path.c_str());
    return 2;
  }
  std::string req;
  for (const std::string& w : words) {
    if (w.empty() || w.find('\n') != std::string::npos) {
      std::fprintf(stderr, "kite-admin: an argument is empty or holds a newline\n");
      return 2;
    }
    req += w + "\n";
  }
  req += "\n";

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    std::fprintf(stderr, "kite-admin: socket path too long: %s\n", socket_path.c_str());
    return 2;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    std::fprintf(stderr, "kite-admin: %s: %s%s\n", socket_path.c_str(), std::strerror(e),
                 e == ENOENT || e == ECONNREFUSED ? " (is kite-acceptor running with [admin] socket set?)"
                 : e == EACCES                    ? " (the socket's mode, [admin] socket_mode, decides who may ask)"
                                                  : "");
    return 2;
  }
  for (std::size_t done = 0; done < req.size();) {
    const ssize_t n = ::write(fd, req.data() + done, req.size() - done);
    if (n <= 0) {
      std::fprintf(stderr, "kite-admin: %s: write: %s\n", socket_path.c_str(), std::strerror(errno));
      return 2;
    }
    done += static_cast<std::size_t>(n);
  }
  std::string answer;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_s * 1000);
    if (r == 0) {
      std::fprintf(stderr, "kite-admin: no answer within %d s\n", timeout_s);
      return 2;
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const std::size_t nl = answer.find('\n');
  const std::string status = answer.substr(0, nl);
  const std::string text = nl == std::string::npos ? "" : answer.substr(nl + 1);
  if (status == "ok") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (status == "error") {
    std::fprintf(stderr, "kite-admin: %s", text.c_str());
    if (text.empty() || text.back() != '\n') std::fputc('\n', stderr);
    return 1;
  }
  std::fprintf(stderr, "kite-admin: %s: not an admin socket's answer\n", socket_path.c_str());
  return 2;
}
