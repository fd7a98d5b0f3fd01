#include "kite/lab/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

#include "kite/lab/util.hpp"

extern char** environ;

namespace kite::lab {

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

int decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

std::string resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  std::string p = find_executable(name, "");
  return p.empty() ? name : p;
}

}  // namespace

bool stop_requested() { return g_stop != 0; }
void reset_stop_request() { g_stop = 0; }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Child::~Child() {
  if (pid_ > 0 && !code_) stop(2.0);
  if (err_fd_ >= 0) close(err_fd_);
}

Child::Child(Child&& o) noexcept : pid_(o.pid_), err_fd_(o.err_fd_), code_(o.code_) {
  o.pid_ = -1;
  o.err_fd_ = -1;
}

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !code_) stop(2.0);
    if (err_fd_ >= 0) close(err_fd_);
    pid_ = o.pid_;
    err_fd_ = o.err_fd_;
    code_ = o.code_;
    o.pid_ = -1;
    o.err_fd_ = -1;
  }
  return *this;
}

namespace {

// The child's environment: the lab's, with `env` replacing and adding.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& env) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && env.count(kv.substr(0, eq))) continue;
    envs.push_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  return envs;
}

// The child between fork and exec: its own process group, default signals, the
// namespace and the descriptors; async-signal-safe calls only.
[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, int nsfd, int out_fd, int err_fd) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) != 0) _exit(126);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  execve(path, argv, envp);
  _exit(127);
}

}  // namespace

Child Child::spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("spawn: empty command");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls (the lab has an audit thread).
  std::string path = resolve(spec.argv[0]);
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> envs = child_environment(spec.env);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  int nsfd = -1;
  if (!spec.netns.empty()) {
    std::string p = "/run/netns/" + spec.netns;
    nsfd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) throw std::runtime_error("spawn: cannot open " + p + ": " + std::strerror(errno));
  }
  int out_fd = open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) throw std::runtime_error("spawn: cannot open " + spec.stdout_path);
  int err_fd = -1, pipe_fds[2] = {-1, -1};
  if (spec.pipe_stderr) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("spawn: pipe failed");
    err_fd = pipe_fds[1];
  } else {
    std::string ep = spec.stderr_path.empty() ? "/dev/null" : spec.stderr_path;
    err_fd = open(ep.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err_fd < 0) throw std::runtime_error("spawn: cannot open " + ep);
  }
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("spawn: fork failed: ") + std::strerror(errno));
  if (pid == 0) exec_child(path.c_str(), argv.data(), envp.data(), nsfd, out_fd, err_fd);
  setpgid(pid, pid);
  if (nsfd >= 0) close(nsfd);
  close(out_fd);
  close(err_fd);
  Child c;
  c.pid_ = pid;
  if (spec.pipe_stderr) {
    c.err_fd_ = pipe_fds[0];
    fcntl(c.err_fd_, F_SETFL, fcntl(c.err_fd_, F_GETFL) | O_NONBLOCK);
  }
  return c;
}

std::optional<int> Child::exit_code() {
  if (code_ || pid_ <= 0) return code_;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) code_ = decode_status(st);
  return code_;
}

bool Child::running() { return pid_ > 0 && !exit_code(); }

std::optional<int> Child::wait_for(double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!exit_code()) {
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return code_;
}

int Child::stop(double grace_s) {
  if (pid_ <= 0) return -1;
  if (exit_code()) return *code_;
  kill(pid_, SIGTERM);
  if (auto c = wait_for(grace_s)) return *c;
  kill(-pid_, SIGKILL);  // the whole group: a launcher's children too
  kill(pid_, SIGKILL);
  if (auto c = wait_for(5.0)) return *c;
  return -1;
}

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s) {
  CommandResult r;
  char tmpl[] = "/tmp/kite-lab-cmd-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return r;
  close(fd);
  SpawnSpec s;
  s.argv = argv;
  s.stdout_path = tmpl;
  s.stderr_path = tmpl;
  try {
    Child c = Child::spawn(s);
    auto code = c.wait_for(timeout_s);
    r.code = code ? *code : c.stop(1.0);
  } catch (const std::exception& e) {
    r.output = e.what();
    unlink(tmpl);
    return r;
  }
  r.output = read_text_or_empty(tmpl);
  unlink(tmpl);
  return r;
}

int pick_free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

namespace {

// GRO and TSO of `ifname` through the SIOCETHTOOL ioctl in the calling
// thread's namespace, GRO on and TSO off first when `set`. Bits: 1 = GRO
// on, 2 = TSO on; 64 = failure.
int ethtool_offloads(const std::string& ifname, bool set) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return 64;
  auto ethtool = [&](std::uint32_t cmd, std::uint32_t value, std::uint32_t* out) {
    ethtool_value v{};
    v.cmd = cmd;
    v.data = value;
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    ifr.ifr_data = reinterpret_cast<char*>(&v);
    if (ioctl(s, SIOCETHTOOL, &ifr) != 0) return false;
    if (out) *out = v.data;
    return true;
  };
  std::uint32_t gro = 0, tso = 1;
  if (set) {
    ethtool(ETHTOOL_SGRO, 1, nullptr);
    ethtool(ETHTOOL_STSO, 0, nullptr);
  }
  const bool read = ethtool(ETHTOOL_GGRO, 0, &gro) && ethtool(ETHTOOL_GTSO, 0, &tso);
  close(s);
  if (!read) return 64;
  return (gro ? 1 : 0) | (tso ? 2 : 0);
}

// The same inside namespace `ns` ("" = this process's); a namespace is
// entered in a forked child because setns changes the calling thread.
int set_offloads_in(const std::string& ns, const std::string& ifname, bool set = true) {
  if (ns.empty()) return ethtool_offloads(ifname, set);
  std::string p = "/run/netns/" + ns;
  int nsfd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) return 64;
  pid_t pid = fork();
  if (pid < 0) {
    close(nsfd);
    return 64;
  }
  if (pid == 0) {
    if (setns(nsfd, CLONE_NEWNET) != 0) _exit(64);
    _exit(ethtool_offloads(ifname, set));
  }
  close(nsfd);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 64;
}

}  // namespace

std::optional<int> interface_offloads(const std::string& ns, const std::string& ifname, bool set_gro_on_tso_off) {
  const int f = set_offloads_in(ns, ifname, set_gro_on_tso_off);
  if (f == 64) return std::nullopt;
  return f;
}

std::string offloads_text(const std::string& ifname, int bits) {
  return ifname + ": gro=" + ((bits & 1) ? "on" : "off") + " tso=" + ((bits & 2) ? "on" : "off");
}

NetnsPair::NetnsPair(std::string tag, std::string server_addr, std::string client_addr, int prefix)
    : server_ns_("kite-" + tag + "-srv"),
      client_ns_("kite-" + tag + "-cli"),
      server_if_("kite-" + tag.substr(0, 8) + "s"),
      client_if_("kite-" + tag.substr(0, 8) + "c"),
      server_addr_(std::move(server_addr)),
      client_addr_(std::move(client_addr)),
      prefix_(prefix) {}

NetnsPair::~NetnsPair() { down(); }

void NetnsPair::up() {
  up_ = true;  // from here on down() has something to remove, whatever fails
  auto must = [&](std::vector<std::string> argv) {
    CommandResult r = run_command(argv);
    if (r.code != 0) {
      std::string cmd;
      for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
      throw std::runtime_error("netns: '" + cmd + "' failed (" + std::to_string(r.code) + "): " + trim(r.output));
    }
  };
  must({"ip", "netns", "add", server_ns_});
  must({"ip", "netns", "add", client_ns_});
  must({"ip", "link", "add", server_if_, "netns", server_ns_, "type", "veth", "peer", "name", client_if_, "netns",
        client_ns_});
  std::string pfx = "/" + std::to_string(prefix_);
  must({"ip", "-n", server_ns_, "addr", "add", server_addr_ + pfx, "dev", server_if_});
  must({"ip", "-n", client_ns_, "addr", "add", client_addr_ + pfx, "dev", client_if_});
  for (const auto& [ns, ifn] : {std::pair{server_ns_, server_if_}, std::pair{client_ns_, client_if_}}) {
    must({"ip", "-n", ns, "link", "set", "lo", "up"});
    must({"ip", "-n", ns, "link", "set", ifn, "up"});
    int f = set_offloads_in(ns, ifn);
    if (f == 64) throw std::runtime_error("netns: cannot set or read GRO/TSO on " + ifn + " in " + ns);
    offloads_ += (offloads_.empty() ? "" : ", ") + offloads_text(ifn, f);
    if (!(f & 1) || (f & 2))
      throw std::runtime_error("netns: " + ifn + " did not take GRO on / TSO off (" + offloads_ + ")");
  }
}

void NetnsPair::down() {
  if (!up_) return;
  up_ = false;
  run_command({"ip", "netns", "del", server_ns_});  // deleting a namespace deletes its veth end and the peer
  run_command({"ip", "netns", "del", client_ns_});
}

std::vector<std::string> list_namespaces() {
  std::vector<std::string> out;
  DIR* d = opendir("/run/netns");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

std::vector<std::string> remove_stale_namespaces() {
  std::vector<std::string> removed;
  for (const auto& n : list_namespaces())
    if (n.rfind("kite-", 0) == 0 && run_command({"ip", "netns", "del", n}).code == 0) removed.push_back(n);
  if (DIR* d = opendir("/sys/class/net")) {
    std::vector<std::string> links;
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("kite-", 0) == 0) links.push_back(n);
    }
    closedir(d);
    for (const auto& l : links)
      if (run_command({"ip", "link", "del", l}).code == 0) removed.push_back(l);
  }
  return removed;
}

namespace {

// "kite-<tag>-srv", "kite-<tag>-cli", "kite-<tag>s", "kite-<tag>c" -> "<tag>"; "" for other names.
std::string netns_tag(const std::string& n) {
  if (n.rfind("kite-", 0) != 0) return "";
  std::size_t end = 5;
  while (end < n.size() && n[end] >= '0' && n[end] <= '9') ++end;
  return end == 5 ? "" : n.substr(5, end - 5);
}

// Tags a live process could own (NetnsPair tags are the lab's pid modulo 10^6).
std::set<std::string> live_tags() {
  std::set<std::string> tags;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && pid > 0) tags.insert(std::to_string(pid % 1000000));
    }
    closedir(d);
  }
  return tags;
}

}  // namespace

std::vector<std::string> remove_orphaned_namespaces() {
  const std::set<std::string> live = live_tags();
  auto orphan = [&](const std::string& n) {
    const std::string tag = netns_tag(n);
    return !tag.empty() && live.count(tag) == 0;
  };
  std::vector<std::string> removed;
  for (const auto& n : list_namespaces())
    if (orphan(n) && run_command({"ip", "netns", "del", n}).code == 0) removed.push_back(n);
  if (DIR* d = opendir("/sys/class/net")) {
    std::vector<std::string> links;
    while (dirent* e = readdir(d))
      if (orphan(e->d_name)) links.push_back(e->d_name);
    closedir(d);
    for (const auto& l : links)
      if (run_command({"ip", "link", "del", l}).code == 0) removed.push_back(l);
  }
  return removed;
}

}  // namespace kite::lab
