// Child processes for the session interop and crash tests: kite-acceptor and
// the QuickFIX peer, started with their output in files, waited for with a
// bound, and read back as key=value summaries.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace kite::interop {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// A fresh folder under the system's temporary folder.
inline fs::path make_temp_dir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) return {};
  return tmpl;
}

// A loopback port that was free a moment ago.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  // Starts argv[0] with stdout and stderr appended to the given files.
  bool start(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
    pid_ = ::fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (o >= 0) ::dup2(o, 1);
      if (e >= 0) ::dup2(e, 2);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return true;
  }
  pid_t pid() const noexcept { return pid_; }
  // Whether the child has not exited yet (reaps it when it has).
  bool running() {
    if (pid_ <= 0) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return false;
    }
    return true;
  }
  void signal(int sig) const noexcept {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Waits up to timeout_ms for the exit; the exit code, or -1 on timeout
  // (the child is then killed), or 128+signal.
  int wait(int timeout_ms) {
    if (pid_ <= 0) return code_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      int st = 0;
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return code_;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        code_ = -1;
        return code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  pid_t pid_ = -1;
  int code_ = -1;
};

// Waits (bounded) until the file exists and contains `needle`.
inline bool wait_for_text(const fs::path& p, const std::string& needle, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(p) && read_file(p).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// key=value lines; later keys win.
inline std::map<std::string, long> parse_summary(const std::string& text) {
  std::map<std::string, long> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    m[line.substr(0, eq)] = std::strtol(line.c_str() + eq + 1, nullptr, 10);
  }
  return m;
}

// The last "next seq out X, in Y" that kite's session log printed for `who`.
inline bool last_sequences(const std::string& log, const std::string& who, long& out, long& in) {
  std::istringstream s(log);
  std::string line;
  bool found = false;
  while (std::getline(s, line)) {
    if (line.find(who) == std::string::npos) continue;
    const auto p = line.find("next seq out ");
    if (p == std::string::npos) continue;
    if (std::sscanf(line.c_str() + p, "next seq out %ld, in %ld", &out, &in) == 2) found = true;
  }
  return found;
}

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : fallback;
}

}  // namespace kite::interop
