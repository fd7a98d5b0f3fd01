#include "kite/lab/check.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "kite/codec/encoder.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/header.hpp"

#include "kite/lab/process.hpp"
#include "kite/lab/tls.hpp"
#include "kite/lab/util.hpp"
#ifdef KITE_LAB_TLS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace kite::lab {

namespace {

namespace tag = codec::tag;

constexpr double kReplyTimeout = 2.0;                      // s: a reply the contract requires
constexpr double kIdleSettle = 0.3;                        // s: orders before runtime-idle's window
constexpr double kIdleWindow = 0.5;                        // s: runtime-idle's window of orders
constexpr int kIdleWindows = 3;                            // windows at most, the first quiet one judged
constexpr double kQuietTimeout = 0.3;                      // s: how long "nothing comes back" is watched
constexpr std::size_t kReportMin = 190, kReportMax = 260;  // bytes: 225 +-15%, the ExecutionReport's band
const char* const kSymbol = "KITE.XPAR";

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fixed(double v, int decimals = 2) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The first few of a list of problems, so that one line stays readable.
std::string first_few(const std::vector<std::string>& v) {
  constexpr std::size_t kShown = 4;
  if (v.size() <= kShown) return join(v, "; ");
  return join(std::vector<std::string>(v.begin(), v.begin() + kShown), "; ") + "; and " +
         std::to_string(v.size() - kShown) + " more";
}

std::string tail(const std::string& s, std::size_t n) {
  std::string t = trim(s);
  return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

// ---------------------------------------------------------------- a FIX peer

// One message from the server: its bytes and its fields (first occurrence).
struct Msg {
  std::string frame;
  std::map<std::uint32_t, std::string> fields;
  std::string get(std::uint32_t t) const {
    auto it = fields.find(t);
    return it == fields.end() ? "" : it->second;
  }
  bool has(std::uint32_t t) const { return fields.count(t) != 0; }
  std::string type() const { return get(tag::MsgType); }
};

enum class Got { message, timeout, closed };

struct SendFlags {
  bool poss_dup = false;
  bool bad_checksum = false;
};

// A client session BENCH<k> over a blocking socket with timeouts. Every
// message it receives is checked on arrival (framing, BodyLength and CheckSum
// through the codec's framer; BeginString; CompIDs swapped; MsgSeqNum one
// more than the last); what is wrong collects in `problems`. With a TLS
// context (SSL_CTX*, a tls cell) the connection is TLS, the server's
// certificate checked against the lab's CA and 127.0.0.1.
class Peer {
 public:
  explicit Peer(unsigned k, void* tls = nullptr)
      : tls_(tls),
        comp_("BENCH" + std::to_string(k)),
        header_(codec::HeaderFields{"FIX.4.4", comp_, "KITE", {}, {}, {}, {}}),
        writer_(header_, codec::TimePrecision::micros) {}
  ~Peer() { close(); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  const std::string& comp() const { return comp_; }
  bool open() const { return fd_ >= 0; }
  int local_port() const { return local_port_; }

  bool connect(int port, std::string& why) {
    close();
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      why = std::string("cannot connect to port ") + std::to_string(port) + ": " + std::strerror(errno);
      close();
      return false;
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    local_port_ = ntohs(a.sin_port);
    rx_.clear();
    return tls_ == nullptr || handshake(why);
  }

  void close() {
#ifdef KITE_LAB_TLS
    SSL_free(static_cast<SSL*>(ssl_));
    ssl_ = nullptr;
#endif
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends one message numbered seq; body adds the fields after the header.
  bool send(std::string_view type, std::uint64_t seq, const std::function<void(codec::MessageWriter&)>& body,
            SendFlags f = {}) {
    char buf[2048];
    const std::int64_t now = codec::utc_now_ns();
    writer_.begin(buf, sizeof buf, type, seq, now);
    if (f.poss_dup) {
      writer_.add_char(tag::PossDupFlag, 'Y');
      writer_.add_timestamp(tag::OrigSendingTime, now);
    }
    if (body) body(writer_);
    const std::size_t n = writer_.finish();
    if (n == 0) return false;
    if (f.bad_checksum) buf[n - 2] = buf[n - 2] == '9' ? '0' : static_cast<char>(buf[n - 2] + 1);
    return send_bytes(std::string_view(buf, n));
  }

  bool send_bytes(std::string_view bytes) {
    if (fd_ < 0) return false;
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = write_some(bytes.data() + at, bytes.size() - at);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next message within timeout_s; a frame the codec calls invalid is a problem and skipped.
  Got receive(double timeout_s, Msg& m) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      while (!rx_.empty()) {
        const codec::FrameResult r = codec::frame(rx_);
        if (r.status == codec::FrameStatus::incomplete) break;
        if (r.status == codec::FrameStatus::invalid) {
          problems.push_back(std::string("invalid frame (") + codec::to_string(r.error) + ")");
          rx_.erase(0, r.size);
          continue;
        }
        m = Msg{};
        m.frame = rx_.substr(0, r.size);
        rx_.erase(0, r.size);
        inspect(m);
        return Got::message;
      }
      if (fd_ < 0) return Got::closed;
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) return Got::timeout;
      pollfd p{fd_, POLLIN, 0};
      if (!tls_pending() && ::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
      char buf[8192];
      const ssize_t n = read_some(buf, sizeof buf);
      if (n <= 0) {
        close();
        if (rx_.empty()) return Got::closed;
        continue;
      }
      rx_.append(buf, static_cast<std::size_t>(n));
    }
  }

  // Skips messages until one of type `type` (or the timeout, or the end).
  Got await(std::string_view type, double timeout_s, Msg& m, std::vector<std::string>* others = nullptr) {
    const auto t0 = Clock::now();
    while (true) {
      const Got g = receive(std::max(0.0, timeout_s - since(t0)), m);
      if (g != Got::message || m.type() == type) return g;
      if (others) others->push_back(m.type());
    }
  }

  // Logon with ResetSeqNumFlag=Y on a fresh connection; both sides start at 1.
  bool logon(int port, std::string& why) {
    if (!connect(port, why)) return false;
    expect_in = 1;
    next_seq = 1;
    send("A", next_seq++, [](codec::MessageWriter& w) {
      w.add_uint(tag::EncryptMethod, 0);
      w.add_uint(tag::HeartBtInt, 30);
      w.add_char(tag::ResetSeqNumFlag, 'Y');
    });
    Msg m;
    const Got g = await("A", kReplyTimeout, m);
    if (g != Got::message) {
      why = comp_ + ": no Logon answer (" + (g == Got::closed ? "connection closed" : "timeout") + ")";
      return false;
    }
    logon_answer = m;
    return true;
  }

  // Logout, then waits for the server's Logout and the end of the connection.
  bool logout(std::string& why) {
    send("5", next_seq++, nullptr);
    Msg m;
    const Got g = await("5", kReplyTimeout, m);
    if (g != Got::message) {
      why = std::string("no Logout answer (") + (g == Got::closed ? "connection closed" : "timeout") + ")";
      close();
      return false;
    }
    if (receive(kReplyTimeout, m) != Got::closed) {
      why = "the server answered the Logout but did not close the connection";
      close();
      return false;
    }
    return true;
  }

  std::uint64_t next_seq = 1;   // ours
  std::uint64_t expect_in = 1;  // theirs
  std::vector<std::string> problems;
  Msg logon_answer;

 private:
  // The socket, or TLS over it. TLS reads and writes block at most
  // kTlsIoTimeout (SO_RCVTIMEO / SO_SNDTIMEO), so that no check hangs.
  static constexpr int kTlsIoTimeoutS = 5;

#ifdef KITE_LAB_TLS
  bool handshake(std::string& why) {
    const timeval tv{kTlsIoTimeoutS, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ERR_clear_error();
    SSL* ssl = SSL_new(static_cast<SSL_CTX*>(tls_));
    ssl_ = ssl;
    if (ssl == nullptr || SSL_set_fd(ssl, fd_) != 1) {
      why = "tls: cannot set up a connection";
      close();
      return false;
    }
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
    if (SSL_connect(ssl) != 1) {
      const long v = SSL_get_verify_result(ssl);
      char err[256] = "the server closed the connection";
      if (const unsigned long e = ERR_get_error()) ERR_error_string_n(e, err, sizeof err);
      why = std::string("tls handshake failed: ") + (v != X509_V_OK ? X509_verify_cert_error_string(v) : err);
      ERR_clear_error();
      close();
      return false;
    }
    return true;
  }
  ssize_t write_some(const char* p, std::size_t n) {
    if (ssl_ == nullptr) return ::send(fd_, p, n, MSG_NOSIGNAL);
    const int r = SSL_write(static_cast<SSL*>(ssl_), p, static_cast<int>(n));
    ERR_clear_error();
    return r;
  }
  ssize_t read_some(char* p, std::size_t n) {
    if (ssl_ == nullptr) return ::recv(fd_, p, n, 0);
    const int r = SSL_read(static_cast<SSL*>(ssl_), p, static_cast<int>(n));
    ERR_clear_error();
    return r;
  }
  bool tls_pending() const { return ssl_ != nullptr && SSL_pending(static_cast<const SSL*>(ssl_)) > 0; }
#else
  bool handshake(std::string& why) {
    why = "tls: this bench-run was built without OpenSSL";
    close();
    return false;
  }
  ssize_t write_some(const char* p, std::size_t n) { return ::send(fd_, p, n, MSG_NOSIGNAL); }
  ssize_t read_some(char* p, std::size_t n) { return ::recv(fd_, p, n, 0); }
  bool tls_pending() const { return false; }
#endif

  void* tls_ = nullptr;  // SSL_CTX*
  void* ssl_ = nullptr;  // SSL*
  void inspect(Msg& m) {
    codec::FieldIndex& ix = index_;
    codec::Header h;
    if (!ix.build(m.frame) || !codec::read_header(ix, h)) {
      problems.push_back("a frame whose header cannot be read");
      return;
    }
    for (const auto& f : ix) m.fields.emplace(f.tag, std::string(ix.value(f)));
    const std::string type(h.msg_type);
    if (h.begin_string != "FIX.4.4") problems.push_back(type + ": BeginString " + std::string(h.begin_string));
    if (h.sender_comp_id != "KITE" || h.target_comp_id != comp_)
      problems.push_back(type + ": CompIDs 49=" + std::string(h.sender_comp_id) +
                         " 56=" + std::string(h.target_comp_id) + " (expected 49=KITE 56=" + comp_ + ")");
    if (h.msg_seq_num != expect_in && !h.poss_dup)
      problems.push_back(type + ": MsgSeqNum " + std::to_string(h.msg_seq_num) + ", expected " +
                         std::to_string(expect_in));
    expect_in = h.msg_seq_num + 1;
  }

  std::string comp_;
  codec::HeaderTemplate header_;
  codec::MessageWriter writer_;
  codec::FieldIndex index_;
  int fd_ = -1;
  int local_port_ = 0;
  std::string rx_;
};

std::string clordid(std::uint64_t n) {
  char id[16];
  std::snprintf(id, sizeof id, "C%012llu", static_cast<unsigned long long>(n));
  return id;
}

// The client's NewOrderSingle (docs/bench_roundtrip.md).
std::function<void(codec::MessageWriter&)> order_body(const std::string& id) {
  return [id](codec::MessageWriter& w) {
    w.add_string(tag::ClOrdID, id);
    w.add_char(tag::HandlInst, '1');
    w.add_string(tag::Account, "BENCH-ACCOUNT-001");
    w.add_string(tag::Symbol, kSymbol);
    w.add_char(tag::Side, '1');
    w.add_timestamp(tag::TransactTime, codec::utc_now_ns(), codec::TimePrecision::micros);
    w.add_uint(tag::OrderQty, 100);
    w.add_char(tag::OrdType, '2');
    w.add_decimal(tag::Price, codec::Decimal{10125, -2});
    w.add_char(tag::TimeInForce, '0');
  };
}

// What is wrong with an ExecutionReport answering order `id` ("" when nothing).
std::string report_problem(const Msg& m, const std::string& id) {
  std::vector<std::string> bad;
  if (m.type() != "8") return "answered with 35=" + m.type() + " instead of an ExecutionReport";
  if (m.get(tag::ClOrdID) != id) bad.push_back("ClOrdID " + m.get(tag::ClOrdID) + " (sent " + id + ")");
  if (m.get(tag::ExecType) != "0") bad.push_back("ExecType " + m.get(tag::ExecType));
  if (m.get(tag::OrdStatus) != "0") bad.push_back("OrdStatus " + m.get(tag::OrdStatus));
  for (std::uint32_t t : {tag::OrderID, tag::ExecID, tag::LeavesQty, tag::CumQty, tag::AvgPx})
    if (m.get(t).empty()) bad.push_back("no tag " + std::to_string(t));
  if (m.get(tag::Side) != "1") bad.push_back("Side " + m.get(tag::Side));
  if (m.get(tag::Symbol) != kSymbol) bad.push_back("Symbol " + m.get(tag::Symbol));
  if (m.frame.size() < kReportMin || m.frame.size() > kReportMax)
    bad.push_back(std::to_string(m.frame.size()) + " bytes (band " + std::to_string(kReportMin) + "-" +
                  std::to_string(kReportMax) + ")");
  return join(bad);
}

// ---------------------------------------------------------------- /proc

struct Task {
  std::string comm;
  std::string allowed;  // Cpus_allowed_list
  int cpu = -1;         // the core it ran on last
  std::uint64_t run_ns = 0;
};

std::map<pid_t, Task> read_tasks(pid_t pid) {
  std::map<pid_t, Task> out;
  const std::string base = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(base.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string dir = base + "/" + e->d_name;
    Task t;
    t.comm = trim(read_text_or_empty(dir + "/comm"));
    std::istringstream status(read_text_or_empty(dir + "/status"));
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) t.allowed = trim(line.substr(18));
    const std::string stat = read_text_or_empty(dir + "/stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos) {
      std::istringstream f(stat.substr(close + 2));
      std::string v;
      for (int field = 3; f >> v; ++field)
        if (field == 39) {
          t.cpu = std::atoi(v.c_str());
          break;
        }
    }
    t.run_ns = std::strtoull(read_text_or_empty(dir + "/schedstat").c_str(), nullptr, 10);
    out[static_cast<pid_t>(std::atoi(e->d_name))] = t;
  }
  closedir(d);
  return out;
}

// The server's end of each of our connections: SO_BUSY_POLL by peer port, read
// through a copy of its descriptor (pidfd_getfd: the server is our child).
std::map<int, int> server_busy_poll(pid_t pid, std::string& why) {
  std::map<int, int> out;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    why = std::string("pidfd_open: ") + std::strerror(errno);
    return out;
  }
  const std::string base = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    const std::string target = fs::read_symlink(e.path(), ec).string();
    if (ec || target.rfind("socket:", 0) != 0) continue;
    const int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, std::atoi(e.path().filename().c_str()), 0));
    if (fd < 0) {
      why = std::string("pidfd_getfd: ") + std::strerror(errno);
      continue;
    }
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    int value = -1;
    socklen_t vlen = sizeof value;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 && peer.sin_family == AF_INET &&
        ::getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &value, &vlen) == 0)
      out[ntohs(peer.sin_port)] = value;
    ::close(fd);
  }
  ::close(pidfd);
#else
  (void)pid;
  why = "pidfd_getfd is not available on this system";
#endif
  return out;
}

// File descriptors the server watches with epoll (from /proc/<pid>/fdinfo of its epoll instances).
std::set<int> epoll_watched(pid_t pid) {
  std::set<int> out;
  const std::string base = "/proc/" + std::to_string(pid) + "/fdinfo";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base, ec)) {
    std::istringstream in(read_text_or_empty(e.path().string()));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("tfd:", 0) == 0) out.insert(std::atoi(line.c_str() + 4));
  }
  return out;
}

// The server's descriptor of the connection whose peer port is `port`, or -1.
int server_fd_of(pid_t pid, int port) {
  // /proc/net/tcp gives the inode of the server's end (local port = the server's, remote = ours).
  // Other processes' sockets to the same port number (another server, a TIME_WAIT
  // with inode 0) are in the namespace's table too: only this process's fds decide.
  std::set<std::string> sockets;
  std::istringstream tcp(read_text_or_empty("/proc/" + std::to_string(pid) + "/net/tcp"));
  char want[8];
  std::snprintf(want, sizeof want, ":%04X", port);
  for (std::string line; std::getline(tcp, line);) {
    std::istringstream f(line);
    std::string sl, local, remote, st, q, tr, rt, uid, to, ino;
    f >> sl >> local >> remote >> st >> q >> tr >> rt >> uid >> to >> ino;
    if (remote.size() > 5 && remote.substr(remote.size() - 5) == want && ino != "0")
      sockets.insert("socket:[" + ino + "]");
  }
  if (sockets.empty()) return -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec))
    if (sockets.count(fs::read_symlink(e.path(), ec).string())) return std::atoi(e.path().filename().c_str());
  return -1;
}

// ---------------------------------------------------------------- the run

struct Role {
  std::string name;
  int core;
  bool loads;  // prints a `server load:` line at exit (the front door does not)
};

std::vector<Role> roles_of(const std::string& model, const CoreSet& cores, int coordinator, int workers) {
  auto core = [&](int i) { return cores.empty() ? -1 : cores[static_cast<std::size_t>(i) % cores.size()]; };
  if (model == "single" || model == "mono") return {{"kite-" + model, core(0), true}};
  std::vector<Role> out;
  for (int i = 0; i < workers; ++i) out.push_back({"kite-" + model + "-" + std::to_string(i), core(i), true});
  if (model == "pool") out.push_back({"kite-front", coordinator, false});
  return out;
}

// Readiness calls (aarch64 has only the newer ones).
constexpr long kReadinessCalls[] = {
    SYS_ppoll,        SYS_pselect6, SYS_epoll_pwait,
#if defined(SYS_poll) && defined(SYS_select) && defined(SYS_epoll_wait)
    SYS_poll,         SYS_select,   SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait2
    SYS_epoll_pwait2,
#endif
};

bool is_readiness_syscall(long nr) {
  return std::find(std::begin(kReadinessCalls), std::end(kReadinessCalls), nr) != std::end(kReadinessCalls);
}

// ---------------------------------------------------------------- one cell

// What the checks of one cell share: its server, its sessions and its threads.
struct CellRun {
  std::string model, transport, scope, work;
  ServerStart st;
  Child server;
  pid_t pid = -1;
  int port = 0;
  Clock::time_point at_ready;
  std::map<pid_t, Task> tasks0;  // at the ready file
  std::vector<std::unique_ptr<Peer>> peers;
  std::vector<std::string> logon_bad;  // what logging every session on found
  bool logged_on = false;              // every session is
  std::map<pid_t, Task> idle0;         // at the start of runtime-idle's window of orders
  std::map<pid_t, Task> idle1;         // at its end (empty: no window was played)
  double idle_s = 0;                   // the window's length
  int idle_window = 0;                 // which window was judged (1..kIdleWindows)
  std::map<pid_t, Task> tasks1;        // after the session checks
  double elapsed = 0;                  // s from the ready file to tasks1
  std::vector<Role> roles;
  std::map<std::string, std::vector<pid_t>> by_name;  // tasks1 by thread name

  Peer& s0() { return *peers.front(); }
};

// The peer's problems, each named by its session; the peer's list is emptied.
std::vector<std::string> take_problems(Peer& p) {
  std::vector<std::string> out = p.problems;
  p.problems.clear();
  for (auto& s : out) s = p.comp() + ": " + s;
  return out;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// Logs p on, trying for about a second: the server may still be releasing the
// session's previous connection, and a Logon for a session it holds is refused.
bool log_on_again(Peer& p, int port, std::string& why) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (p.logon(port, why)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Orders on every open session, one at a time each, for `seconds`.
void orders_for(std::vector<std::unique_ptr<Peer>>& peers, double seconds, std::uint64_t& next_id) {
  const auto t = Clock::now();
  while (since(t) < seconds)
    for (auto& p : peers) {
      if (!p->open()) continue;
      p->send("D", p->next_seq++, order_body(clordid(next_id++)));
      Msg m;
      p->await("8", kReplyTimeout, m);
    }
}

// The orders check's answers: what was wrong, how many came, their sizes.
struct OrderTally {
  std::vector<std::string> bad;
  std::size_t lo = SIZE_MAX, hi = 0;
  int answered = 0;

  // Reads the answer to order `id`; false when none came.
  bool expect(Peer& p, const std::string& id) {
    Msg m;
    const Got g = p.receive(kReplyTimeout, m);
    if (g != Got::message) {
      bad.push_back(p.comp() + ": no answer to " + id + (g == Got::closed ? " (connection closed)" : " (timeout)"));
      return false;
    }
    if (std::string why = report_problem(m, id); !why.empty()) bad.push_back(p.comp() + " " + id + ": " + why);
    lo = std::min(lo, m.frame.size());
    hi = std::max(hi, m.frame.size());
    ++answered;
    return true;
  }
};

bool is_role(const std::vector<Role>& roles, const std::string& comm) {
  return std::any_of(roles.begin(), roles.end(), [&](const Role& r) { return r.name == comm; });
}

// How many of `samples` reads of the thread's /proc syscall, 0.5 ms apart, found it in a readiness call.
int readiness_samples(pid_t pid, pid_t tid, int samples) {
  const std::string path = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall";
  int readiness = 0;
  for (int i = 0; i < samples; ++i) {
    const std::string s = read_text_or_empty(path);
    if (!s.empty() && s[0] >= '0' && s[0] <= '9' && is_readiness_syscall(std::atol(s.c_str()))) ++readiness;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return readiness;
}

bool on_kernel(const CellRun& c) { return c.transport == "kernel"; }
bool single_on_kernel(const CellRun& c) { return c.model == "single" && c.transport == "kernel"; }
class Runner {
 public:
  Runner(const CheckOptions& o, const Flavour& f, CheckReport& r) : o_(o), f_(f), report_(r) {}
  ~Runner() {
#ifdef KITE_LAB_TLS
    SSL_CTX_free(static_cast<SSL_CTX*>(tls_ctx_));
#endif
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // The tls cells' certificates (made once, in the work folder) and the
  // peers' TLS context trusting their CA. False with why when they cannot be.
  bool tls_ready(std::string& why) {
    if (tls_ctx_ != nullptr) return true;
#ifdef KITE_LAB_TLS
    try {
      certs_ = make_lab_certificates(o_.work_dir + "/tls", {});
    } catch (const std::exception& e) {
      why = e.what();
      return false;
    }
    std::signal(SIGPIPE, SIG_IGN);  // OpenSSL writes with write(2), not send(MSG_NOSIGNAL)
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr || SSL_CTX_load_verify_locations(ctx, certs_.ca.c_str(), nullptr) != 1) {
      why = "tls: cannot load the CA " + certs_.ca;
      SSL_CTX_free(ctx);
      return false;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    tls_ctx_ = ctx;
    return true;
#else
    why = "tls: this bench-run was built without OpenSSL (KITE_WITH_TLS=OFF)";
    return false;
#endif
  }

  void line(CheckStatus s, const std::string& scope, const std::string& name, const std::string& detail) {
    CheckLine l{s, scope, name, detail};
    if (s == CheckStatus::ok) ++report_.passed;
    if (s == CheckStatus::fail) ++report_.failed;
    if (s == CheckStatus::skip) ++report_.skipped;
    report_.lines.push_back(l);
    if (o_.on_line) o_.on_line(l);
  }

  // Why the flavour does not claim a check ("" when it does).
  std::string unclaimed(const std::string& check) const {
    for (const std::string& key : {check, contract_part_of(check)}) {
      auto it = f_.not_claimed.find(key);
      if (it != f_.not_claimed.end()) return "not claimed (" + key + "): " + it->second;
    }
    const std::string setting = check == "busy-poll" ? "busy_poll" : check == "direct-read" ? "direct_read" : "";
    if (auto it = f_.cannot.find(setting); !setting.empty() && it != f_.cannot.end())
      return "declared cannot (" + setting + "): " + it->second;
    return "";
  }

  // A check that runs only when claimed: a skip line otherwise.
  bool claimed(const std::string& scope, const std::string& check) {
    const std::string why = unclaimed(check);
    if (!why.empty()) line(CheckStatus::skip, scope, check, why);
    return why.empty();
  }

  std::string binary;

  bool build() {
    binary = find_executable(f_.binary, o_.build_dir);
    std::vector<std::string> missing;
    if (binary.empty()) missing.push_back("binary '" + f_.binary + "' (looked in " + o_.build_dir + " and PATH)");
    for (const auto& t : f_.required_tools)
      if (find_executable(t, "").empty()) missing.push_back("required command '" + t + "' not on PATH");
    for (const auto& a : f_.artifacts)
      if (find_artifact(a, o_.build_dir).empty()) missing.push_back("artifact '" + a + "'");
    if (!missing.empty()) {
      line(CheckStatus::fail, "", "build", "unbuilt: " + join(missing));
      return false;
    }
    line(CheckStatus::ok, "", "build",
         binary + (f_.artifacts.empty() ? "" : " + " + std::to_string(f_.artifacts.size()) + " artifact(s)") +
             (f_.required_tools.empty() ? "" : ", requires " + join(f_.required_tools) + " (found)"));
    return true;
  }

  // The sitting stamps every binary with its `--version` answer; a server
  // that does not know the flag would start serving instead.
  void version() {
    if (!claimed("", "version")) return;
    const CommandResult r = run_command({binary, "--version"}, 5.0);
    const std::string out = trim(r.output);
    if (r.code == 0 && !out.empty()) {
      line(CheckStatus::ok, "", "version", out.substr(0, out.find('\n')));
    } else {
      line(CheckStatus::fail, "", "version",
           "'--version' exited " + std::to_string(r.code) + (out.empty() ? " with no output" : "") +
               ": a server answers it with its build (one line, exit 0) and does not start");
    }
  }

  ServerStart start_of(const std::string& model, const std::string& transport, const std::string& work) const {
    const Machine& m = o_.machine;
    ServerStart s;
    s.model = model;
    s.transport = transport;
    s.port = pick_free_port();
    s.cores = m.server;
    s.coordinator_core = m.coordinator ? *m.coordinator : m.server.front();
    s.sessions = model == "single" ? 1 : 4;
    s.workers = o_.workers > 0 ? o_.workers : auto_workers(m);
    // A model the machine file gives its own value is checked with it: the check reads back what a sitting applies.
    auto by_model = m.kernel_busy_poll_by_model.find(model);
    s.busy_poll_usecs = transport != "kernel"                           ? 0
                        : by_model != m.kernel_busy_poll_by_model.end() ? by_model->second
                                                                        : o_.busy_poll_usecs;
    s.idle = "spin";
    s.ready_file = work + "/ready";
    s.store_dir = work + "/store";
    s.flavour = f_.name;
    s.build_dir = o_.build_dir;
    s.source_dir = o_.source_dir;
    s.tls_cert = certs_.cert;
    s.tls_key = certs_.key;
    s.tls_ca = certs_.ca;
    return s;
  }

  Child spawn(const ServerStart& s, const std::string& work) {
    fs::create_directories(s.store_dir);
    fs::remove(s.ready_file);
    SpawnSpec ss;
    ss.argv = server_argv(f_, binary, s);
    ss.env = f_.env;
    ss.stdout_path = work + "/server.out";
    ss.stderr_path = work + "/server.err";
    return Child::spawn(ss);
  }

  // "unsupported: ..." from the server's stderr, or "".
  static std::string unsupported_line(const std::string& err) {
    std::istringstream in(err);
    for (std::string l; std::getline(in, l);)
      if (l.rfind("unsupported:", 0) == 0) return l;
    return "";
  }

  // spawn(), or a FAIL line under `check` when the server cannot start.
  bool start(const ServerStart& st, const std::string& work, const std::string& scope, const char* check,
             Child& server);
  // Every check of one model and transport, in kCellChecks' order.
  void cell(const std::string& model, const std::string& transport);
  void unsupported(const std::string& model, const std::string& transport, const std::string& what);

  // The steps and checks of a cell (kCellChecks); a check writes its own line.
  bool ready(CellRun& c);
  std::optional<int> await_port(CellRun& c, Clock::time_point t0);
  void log_on_all(CellRun& c);
  void check_logon(CellRun& c);
  void check_orders(CellRun& c);
  void check_reconnect(CellRun& c);
  bool session0_on(CellRun& c, const char* check);
  void check_heartbeat(CellRun& c);
  void check_test_request(CellRun& c);
  void check_garbled(CellRun& c);
  void check_unknown_type(CellRun& c);
  void check_logout(CellRun& c);
  void check_gap(CellRun& c);
  void check_too_low(CellRun& c);
  void relog_session0(CellRun& c);
  void order_window(CellRun& c);
  void read_threads(CellRun& c);
  void check_thread_names(CellRun& c);
  void check_pinning(CellRun& c);
  void check_runtime_idle(CellRun& c);
  void check_thread_stable(CellRun& c);
  void check_busy_poll(CellRun& c);
  void check_direct_read(CellRun& c);
  void check_sigterm(CellRun& c);
  std::pair<int, int> sigterm_logouts(CellRun& c, Clock::time_point t1, bool want_logout,
                                      std::vector<std::string>& bad);

  // An ok line with ok_detail when nothing is bad, else a FAIL line naming the first few.
  void judge(const CellRun& c, const char* check, const std::vector<std::string>& bad, const std::string& ok_detail);
  // judge() for a check on session 0: why first, then what its messages showed.
  void session_verdict(CellRun& c, const char* check, const std::string& why, const std::string& ok_detail);

 private:
  const CheckOptions& o_;
  const Flavour& f_;
  CheckReport& report_;
  LabCertificates certs_;
  void* tls_ctx_ = nullptr;  // SSL_CTX*
};

// One entry of a cell's run, in the order the lines are printed. A named check
// runs when it applies to the cell and the flavour claims it (a skip line when
// not); a step (no name) always runs and prints nothing of its own.
struct CellCheck {
  const char* name;
  void (Runner::*run)(CellRun&);
  bool (*applies)(const CellRun&) = nullptr;  // nullptr: every cell
  bool on_session0 = false;                   // needs session 0 logged on (a FAIL line when it cannot be)
};

const CellCheck kCellChecks[] = {
    {"", &Runner::log_on_all},
    {"logon", &Runner::check_logon},
    {"orders", &Runner::check_orders},
    {"", &Runner::order_window},
    {"reconnect", &Runner::check_reconnect},
    {"heartbeat", &Runner::check_heartbeat, nullptr, true},
    {"test-request", &Runner::check_test_request, nullptr, true},
    {"garbled", &Runner::check_garbled, nullptr, true},
    {"unknown-type", &Runner::check_unknown_type, nullptr, true},
    {"logout", &Runner::check_logout, nullptr, true},
    {"gap", &Runner::check_gap, nullptr, true},
    {"too-low", &Runner::check_too_low, nullptr, true},
    {"", &Runner::relog_session0},
    {"", &Runner::read_threads},
    {"thread-names", &Runner::check_thread_names},
    {"pinning", &Runner::check_pinning},
    {"runtime-idle", &Runner::check_runtime_idle},
    {"thread-stable", &Runner::check_thread_stable},
    {"busy-poll", &Runner::check_busy_poll, on_kernel},
    {"direct-read", &Runner::check_direct_read, single_on_kernel},
    {"sigterm", &Runner::check_sigterm},
};

bool Runner::start(const ServerStart& st, const std::string& work, const std::string& scope, const char* check,
                   Child& server) {
  try {
    server = spawn(st, work);
    return true;
  } catch (const std::exception& e) {
    line(CheckStatus::fail, scope, check, std::string("server did not start: ") + e.what());
    return false;
  }
}

void Runner::cell(const std::string& model, const std::string& transport) {
  CellRun c;
  c.model = model;
  c.transport = transport;
  c.scope = model + "/" + transport;
  c.work = o_.work_dir + "/" + model + "_" + transport;
  if (!ready(c)) return;
  for (const CellCheck& k : kCellChecks) {
    const bool named = *k.name != '\0';
    if (k.applies && !k.applies(c)) continue;
    if (named && !claimed(c.scope, k.name)) continue;
    if (k.on_session0 && !session0_on(c, k.name)) continue;
    (this->*k.run)(c);
  }
  c.server.stop(o_.grace_s);
}

void Runner::judge(const CellRun& c, const char* check, const std::vector<std::string>& bad,
                   const std::string& ok_detail) {
  line(bad.empty() ? CheckStatus::ok : CheckStatus::fail, c.scope, check, bad.empty() ? ok_detail : first_few(bad));
}

void Runner::session_verdict(CellRun& c, const char* check, const std::string& why, const std::string& ok_detail) {
  std::vector<std::string> all = take_problems(c.s0());
  if (!why.empty()) all.insert(all.begin(), why);
  judge(c, check, all, ok_detail);
}

// ready: the server starts and writes its port and a newline once it listens.
bool Runner::ready(CellRun& c) {
  std::string tls_why;
  if (c.transport == "tls" && !tls_ready(tls_why)) {
    line(CheckStatus::fail, c.scope, "ready", tls_why);
    return false;
  }
  c.st = start_of(c.model, c.transport, c.work);
  if (!start(c.st, c.work, c.scope, "ready", c.server)) return false;
  c.pid = c.server.pid();
  const auto t0 = Clock::now();
  const std::optional<int> port = await_port(c, t0);
  if (!port) return false;
  c.port = *port;
  const double ready_s = since(t0);
  c.at_ready = Clock::now();
  c.tasks0 = read_tasks(c.pid);
  line(CheckStatus::ok, c.scope, "ready", "port " + std::to_string(c.port) + " after " + fixed(ready_s) + " s");
  return true;
}

// The port in the ready file; nullopt after a FAIL (or skip) line when there is none.
std::optional<int> Runner::await_port(CellRun& c, Clock::time_point t0) {
  while (true) {
    const std::string r = read_text_or_empty(c.st.ready_file);
    if (!r.empty() && r.back() == '\n') {
      const std::string p = trim(r);
      if (p.empty() || !std::all_of(p.begin(), p.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) ||
          r.find('\n') != r.size() - 1) {
        line(CheckStatus::fail, c.scope, "ready", "ready file holds '" + r + "', not a port and a newline");
        return std::nullopt;
      }
      return std::atoi(p.c_str());
    }
    if (auto code = c.server.exit_code()) {
      const std::string err = read_text_or_empty(c.work + "/server.err");
      const std::string u = unsupported_line(err);
      if (*code == 3 && !u.empty()) {
        line(CheckStatus::skip, c.scope, "ready", "declared, but this build answers: " + u);
      } else {
        line(CheckStatus::fail, c.scope, "ready",
             "exited with code " + std::to_string(*code) + " before the ready file: " + tail(err, 300));
      }
      return std::nullopt;
    }
    if (since(t0) > o_.ready_timeout_s) {
      c.server.stop(1.0);
      line(CheckStatus::fail, c.scope, "ready", "no ready file after " + fixed(o_.ready_timeout_s, 0) + " s");
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Every session logs on, whether or not the logon check is claimed: the checks after it need them.
void Runner::log_on_all(CellRun& c) {
  for (int k = 0; k < c.st.sessions; ++k)
    c.peers.push_back(std::make_unique<Peer>(static_cast<unsigned>(k), c.transport == "tls" ? tls_ctx_ : nullptr));
  for (auto& p : c.peers) {
    std::string why;
    if (!p->logon(c.port, why)) {
      c.logon_bad.push_back(why);
      continue;
    }
    const Msg& a = p->logon_answer;
    if (a.get(tag::ResetSeqNumFlag) != "Y") c.logon_bad.push_back(p->comp() + ": Logon answer without 141=Y");
    if (a.get(tag::HeartBtInt).empty()) c.logon_bad.push_back(p->comp() + ": Logon answer without 108");
  }
  c.logged_on = std::all_of(c.peers.begin(), c.peers.end(), [](auto& p) { return p->open(); });
  for (auto& p : c.peers) append(c.logon_bad, take_problems(*p));
}

void Runner::check_logon(CellRun& c) {
  judge(c, "logon", c.logon_bad, std::to_string(c.peers.size()) + " session(s) logged on, answers well formed");
}

// orders: three one at a time, then three in one write, on every session.
void Runner::check_orders(CellRun& c) {
  OrderTally t;
  std::uint64_t next_id = 1;
  for (auto& p : c.peers) {
    if (!p->open()) {
      t.bad.push_back(p->comp() + ": not logged on");
      continue;
    }
    std::vector<std::string> ids;
    for (int i = 0; i < 6; ++i) ids.push_back(clordid(next_id++));
    bool alive = true;
    for (std::size_t i = 0; i < 3 && alive; ++i) {
      p->send("D", p->next_seq++, order_body(ids[i]));
      alive = t.expect(*p, ids[i]);
    }
    for (std::size_t i = 3; i < 6 && alive; ++i) p->send("D", p->next_seq++, order_body(ids[i]));
    for (std::size_t i = 3; i < 6 && alive; ++i) alive = t.expect(*p, ids[i]);
    append(t.bad, take_problems(*p));
  }
  judge(c, "orders", t.bad,
        std::to_string(t.answered) + " ExecutionReports, " + std::to_string(t.lo) + "-" + std::to_string(t.hi) +
            " bytes");
}

// reconnect: every session drops its connection without a Logout, then logs
// on afresh (ResetSeqNumFlag=Y) and answers a TestRequest: what a paired
// sitting's one-client-per-run asks of a server it holds between runs.
void Runner::check_reconnect(CellRun& c) {
  std::vector<std::string> bad;
  for (auto& p : c.peers) p->close();
  int back = 0;
  for (auto& p : c.peers) {
    std::string why;
    if (!log_on_again(*p, c.port, why)) {
      bad.push_back(p->comp() + ": no fresh logon after the disconnect: " + why);
      continue;
    }
    if (p->logon_answer.get(tag::MsgSeqNum) != "1")
      bad.push_back(p->comp() + ": fresh Logon answered with MsgSeqNum " + p->logon_answer.get(tag::MsgSeqNum));
    p->send("1", p->next_seq++, [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "KITE-RECONNECT"); });
    Msg m;
    const Got g = p->await("0", kReplyTimeout, m);
    if (g != Got::message || m.get(tag::TestReqID) != "KITE-RECONNECT")
      bad.push_back(p->comp() + ": no Heartbeat answering a TestRequest after the fresh logon");
    else
      ++back;
    append(bad, take_problems(*p));
  }
  judge(c, "reconnect", bad,
        std::to_string(back) + " session(s) dropped, logged on afresh with 141=Y, answering a TestRequest");
}

// The session layer's checks run on session 0, logged on again when a check before closed it.
bool Runner::session0_on(CellRun& c, const char* check) {
  std::string why;
  if (c.s0().open() || log_on_again(c.s0(), c.port, why)) return true;
  line(CheckStatus::fail, c.scope, check, "cannot log session 0 on: " + why);
  return false;
}

void Runner::check_heartbeat(CellRun& c) {
  Peer& s0 = c.s0();
  s0.send("0", s0.next_seq++, nullptr);
  Msg m;
  const Got g = s0.receive(kQuietTimeout, m);
  const std::string why = g == Got::closed    ? "the server closed the connection"
                          : g == Got::message ? "answered with 35=" + m.type()
                                              : "";
  session_verdict(c, "heartbeat", why, "no answer, session still open");
}

void Runner::check_test_request(CellRun& c) {
  Peer& s0 = c.s0();
  s0.send("1", s0.next_seq++, [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "KITE-CHECK-1"); });
  Msg m;
  const Got g = s0.receive(kReplyTimeout, m);
  std::string why;
  if (g != Got::message)
    why = g == Got::closed ? "connection closed" : "no answer";
  else if (m.type() != "0")
    why = "answered with 35=" + m.type() + " instead of a Heartbeat";
  else if (m.get(tag::TestReqID) != "KITE-CHECK-1")
    why = "Heartbeat with TestReqID '" + m.get(tag::TestReqID) + "'";
  session_verdict(c, "test-request", why, "Heartbeat with TestReqID KITE-CHECK-1");
}

// A bad CheckSum is ignored (FIX): its number is not used, and a TestRequest
// under the same number is answered. A Logout is allowed too.
void Runner::check_garbled(CellRun& c) {
  Peer& s0 = c.s0();
  const std::uint64_t seq = s0.next_seq;
  s0.send("D", seq, order_body(clordid(999)), {false, true});
  Msg m;
  Got g = s0.receive(kQuietTimeout, m);
  std::string why, detail;
  if (g == Got::message && m.type() == "5") {
    detail = "logged out";
    s0.close();
  } else if (g == Got::closed) {
    why = "connection closed without a Logout";
  } else if (g == Got::message) {
    why = "answered the garbled frame with 35=" + m.type();
  } else {
    s0.send("1", seq, [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "KITE-CHECK-2"); });
    s0.next_seq = seq + 1;
    g = s0.receive(kReplyTimeout, m);
    if (g != Got::message || m.type() != "0" || m.get(tag::TestReqID) != "KITE-CHECK-2")
      why =
          "after the garbled frame, a TestRequest under the same MsgSeqNum got " +
          (g == Got::message ? "35=" + m.type() : std::string(g == Got::closed ? "a closed connection" : "no answer"));
    detail = "ignored; the session answers under the same MsgSeqNum";
  }
  if (!c.server.running()) why = "the server exited";
  session_verdict(c, "garbled", why, detail);
}

void Runner::check_unknown_type(CellRun& c) {
  Peer& s0 = c.s0();
  const std::uint64_t seq = s0.next_seq++;
  s0.send("U1", seq, [](codec::MessageWriter& w) { w.add_string(tag::Text, "check-flavour"); });
  Msg m;
  const Got g = s0.receive(kReplyTimeout, m);
  std::string why;
  if (g != Got::message)
    why = g == Got::closed ? "connection closed" : "no answer";
  else if (m.type() != "j")
    why = "answered with 35=" + m.type() + " instead of a BusinessMessageReject (35=j)";
  else if (m.get(tag::RefSeqNum) != std::to_string(seq) || m.get(tag::RefMsgType) != "U1" ||
           m.get(tag::BusinessRejectReason) != "3")
    why = "35=j with 45=" + m.get(tag::RefSeqNum) + " 372=" + m.get(tag::RefMsgType) +
          " 380=" + m.get(tag::BusinessRejectReason) + " (expected 45=" + std::to_string(seq) + " 372=U1 380=3)";
  session_verdict(c, "unknown-type", why, "BusinessMessageReject 380=3");
}

void Runner::check_logout(CellRun& c) {
  std::string why;
  c.s0().logout(why);
  session_verdict(c, "logout", why, "Logout answered with a Logout, then the connection closed");
}

void Runner::check_gap(CellRun& c) {
  Peer& s0 = c.s0();
  const std::uint64_t expected = s0.next_seq;
  s0.send("D", expected + 1, order_body(clordid(1000)));
  s0.next_seq = expected + 2;
  Msg m;
  const Got g = s0.await("2", kReplyTimeout, m);
  std::string why;
  if (g != Got::message)
    why = g == Got::closed ? "connection closed" : "no ResendRequest";
  else if (m.get(tag::BeginSeqNo) != std::to_string(expected))
    why = "ResendRequest from " + m.get(tag::BeginSeqNo) + ", expected " + std::to_string(expected);
  session_verdict(c, "gap", why, "ResendRequest 7=" + std::to_string(expected));
  std::string ignored;
  if (s0.open()) s0.logout(ignored);
  s0.problems.clear();
}

void Runner::check_too_low(CellRun& c) {
  Peer& s0 = c.s0();
  s0.send("D", 1, order_body(clordid(1001)));  // 1 was the Logon's
  Msg m;
  const Got g = s0.await("5", kReplyTimeout, m);
  std::string why;
  if (g != Got::message)
    why = g == Got::closed ? "connection closed without a Logout" : "no Logout";
  else if (s0.receive(kReplyTimeout, m) != Got::closed)
    why = "Logout, but the connection stayed open";
  session_verdict(c, "too-low", why, "Logout, then the connection closed");
  s0.close();
}

// Session 0 back on for the checks after the session layer's, when it was on at first.
void Runner::relog_session0(CellRun& c) {
  if (c.s0().open() || !c.logged_on) return;
  std::string why;
  log_on_again(c.s0(), c.port, why);
  c.s0().problems.clear();
}

// The largest share of `s` seconds that a thread other than the roles ran between two readings.
double other_threads_share(const std::map<pid_t, Task>& before, const std::map<pid_t, Task>& after,
                           const std::vector<Role>& roles, double s, std::vector<std::string>* over = nullptr,
                           double limit = 0) {
  double worst = 0;
  for (const auto& [tid, t] : after) {
    if (is_role(roles, t.comm)) continue;
    auto b = before.find(tid);
    const std::uint64_t ran = t.run_ns - (b == before.end() ? 0 : std::min(t.run_ns, b->second.run_ns));
    const double share = static_cast<double>(ran) * 1e-9 / s;
    worst = std::max(worst, share);
    if (over != nullptr && share >= limit)
      over->push_back(t.comm + " (tid " + std::to_string(tid) + ") ran " + fixed(share * 100, 0) + "% of " +
                      fixed(s, 1) + " s of orders");
  }
  return worst;
}

// runtime-idle is judged as the audit judges a cell: over orders on warm sessions, before the
// checks that play cold paths a cell never sends (reconnect, garbled, reject, gap): a JIT that
// compiles those after them is not what a cell sees. A window whose other threads burned is
// followed by another, up to kIdleWindows, and the first quiet one (else the last) is judged: a
// loaded host may stretch what the logons set off; a runtime that burns steadily fails every window.
void Runner::order_window(CellRun& c) {
  if (!unclaimed("runtime-idle").empty() || !c.logged_on) return;
  std::uint64_t next_id = 5000;
  orders_for(c.peers, kIdleSettle, next_id);
  const std::vector<Role> roles = roles_of(c.model, c.st.cores, c.st.coordinator_core, c.st.workers);
  for (c.idle_window = 1;; ++c.idle_window) {
    c.idle0 = read_tasks(c.pid);
    const auto t = Clock::now();
    orders_for(c.peers, kIdleWindow, next_id);
    c.idle_s = since(t);
    c.idle1 = read_tasks(c.pid);
    if (c.idle_window == kIdleWindows || other_threads_share(c.idle0, c.idle1, roles, c.idle_s) < o_.burn_fraction)
      break;
  }
  for (auto& p : c.peers) p->problems.clear();
}

// The server's threads, from /proc, for the thread checks.
void Runner::read_threads(CellRun& c) {
  c.tasks1 = read_tasks(c.pid);
  c.elapsed = since(c.at_ready);
  c.roles = roles_of(c.model, c.st.cores, c.st.coordinator_core, c.st.workers);
  for (const auto& [tid, t] : c.tasks1) c.by_name[t.comm].push_back(tid);
}

void Runner::check_thread_names(CellRun& c) {
  std::vector<std::string> bad, names, others, all;
  for (const Role& r : c.roles) {
    const auto n = c.by_name.count(r.name) ? c.by_name[r.name].size() : 0;
    if (n != 1) bad.push_back(r.name + " " + (n == 0 ? "missing" : "found " + std::to_string(n) + " times"));
    names.push_back(r.name);
  }
  for (const auto& [tid, t] : c.tasks1) {
    all.push_back(t.comm);
    if (!is_role(c.roles, t.comm)) others.push_back(t.comm);
  }
  if (bad.empty())
    line(CheckStatus::ok, c.scope, "thread-names",
         join(names) + (others.empty() ? "" : " (others: " + join(others) + ")"));
  else
    line(CheckStatus::fail, c.scope, "thread-names", first_few(bad) + " (threads: " + join(all) + ")");
}

void Runner::check_pinning(CellRun& c) {
  std::vector<std::string> bad, seen;
  for (const Role& r : c.roles) {
    if (!c.by_name.count(r.name)) continue;  // thread-names reports it
    for (pid_t tid : c.by_name[r.name]) {
      const Task& t = c.tasks1.at(tid);
      if (t.allowed != std::to_string(r.core))
        bad.push_back(r.name + " allowed on " + t.allowed + ", expected " + std::to_string(r.core));
      else if (t.cpu != r.core)
        bad.push_back(r.name + " last ran on " + std::to_string(t.cpu) + ", expected " + std::to_string(r.core));
      else
        seen.push_back(r.name + "@" + std::to_string(r.core));
    }
  }
  judge(c, "pinning", bad, seen.empty() ? "no role thread found (see thread-names)" : join(seen));
}

// No thread but the roles' burns CPU over the audit's threshold during the window of orders.
void Runner::check_runtime_idle(CellRun& c) {
  if (c.idle1.empty()) {
    line(CheckStatus::fail, c.scope, "runtime-idle", "no order window: not every session logged on");
    return;
  }
  std::vector<std::string> bad;
  const double worst = other_threads_share(c.idle0, c.idle1, c.roles, c.idle_s, &bad, o_.burn_fraction);
  const std::string window =
      c.idle_window > 1 ? " (window " + std::to_string(c.idle_window) + " of " + std::to_string(kIdleWindows) + ")"
                        : "";
  if (!bad.empty()) bad.front() += window;
  judge(c, "runtime-idle", bad,
        "other threads ran at most " + fixed(worst * 100, 1) + "% of " + fixed(c.idle_s, 1) + " s of orders (limit " +
            fixed(o_.burn_fraction * 100, 0) + "%)" + window);
}

void Runner::check_thread_stable(CellRun& c) {
  std::vector<std::string> started, ended;
  for (const auto& [tid, t] : c.tasks1)
    if (!c.tasks0.count(tid)) started.push_back(t.comm + " (tid " + std::to_string(tid) + ")");
  for (const auto& [tid, t] : c.tasks0)
    if (!c.tasks1.count(tid)) ended.push_back(t.comm + " (tid " + std::to_string(tid) + ")");
  std::string why;
  if (!started.empty()) why += "started after the ready file: " + join(started);
  if (!ended.empty()) why += (why.empty() ? "" : "; ") + std::string("exited: ") + join(ended);
  line(why.empty() ? CheckStatus::ok : CheckStatus::fail, c.scope, "thread-stable",
       why.empty()
           ? std::to_string(c.tasks1.size()) + " threads at the ready file and " + fixed(c.elapsed, 1) + " s later"
           : why);
}

void Runner::check_busy_poll(CellRun& c) {
  std::string why;
  const std::map<int, int> busy = server_busy_poll(c.pid, why);
  std::vector<std::string> bad;
  int found = 0;
  for (auto& p : c.peers) {
    if (!p->open()) continue;
    auto it = busy.find(p->local_port());
    if (it == busy.end()) {
      bad.push_back(p->comp() + ": the server's socket not found" + (why.empty() ? "" : " (" + why + ")"));
    } else if (it->second != c.st.busy_poll_usecs) {
      bad.push_back(p->comp() + ": SO_BUSY_POLL " + std::to_string(it->second) + ", expected " +
                    std::to_string(c.st.busy_poll_usecs));
    } else {
      ++found;
    }
  }
  judge(
      c, "busy-poll", bad,
      "SO_BUSY_POLL " + std::to_string(c.st.busy_poll_usecs) + " on " + std::to_string(found) + " accepted socket(s)");
}

// The session's socket is in no epoll set, and the thread is never seen
// blocked in a readiness call (a spinning thread shows as running).
void Runner::check_direct_read(CellRun& c) {
  std::vector<std::string> bad;
  const int fd = c.s0().open() ? server_fd_of(c.pid, c.s0().local_port()) : -1;
  if (fd < 0)
    bad.push_back("the server's socket of session 0 not found");
  else if (epoll_watched(c.pid).count(fd))
    bad.push_back("its socket (fd " + std::to_string(fd) + ") is in an epoll set");
  if (c.by_name.count("kite-single")) {
    constexpr int kSamples = 200;
    const int readiness = readiness_samples(c.pid, c.by_name["kite-single"].front(), kSamples);
    if (readiness > 0)
      bad.push_back("kite-single seen in a readiness call in " + std::to_string(readiness) + " of " +
                    std::to_string(kSamples) + " samples");
  }
  judge(c, "direct-read", bad, "no epoll set holds the session's socket; no readiness call seen");
}

// SIGTERM: a Logout to every logged-on session, exit 0 within the grace, the load lines.
void Runner::check_sigterm(CellRun& c) {
  const bool want_logout = unclaimed("logout").empty();
  const auto t1 = Clock::now();
  ::kill(c.pid, SIGTERM);
  std::vector<std::string> bad;
  const auto [logouts, open_sessions] = sigterm_logouts(c, t1, want_logout, bad);
  const auto code = c.server.wait_for(std::max(0.0, o_.grace_s - since(t1)));
  const double took = since(t1);
  if (!code) {
    bad.insert(bad.begin(), "still running " + fixed(o_.grace_s, 0) + " s after SIGTERM");
    c.server.stop(0.1);
  } else if (*code != 0) {
    bad.insert(bad.begin(), "exit code " + std::to_string(*code));
  }
  const std::string err = read_text_or_empty(c.work + "/server.err");
  for (const Role& r : c.roles)
    if (r.loads && code && err.find("server load: " + r.name + " ") == std::string::npos)
      bad.push_back("no 'server load: " + r.name + "' line on stderr");
  judge(
      c, "sigterm", bad,
      "exit 0 after " + fixed(took) + " s" +
          (want_logout ? ", Logout on " + std::to_string(logouts) + "/" + std::to_string(open_sessions) + " session(s)"
                       : "") +
          ", load lines present");
}

// Reads every open session until it ends, confirming the server's Logout so that a
// server waiting for the confirmation ends at once. Returns {Logouts, open sessions}.
std::pair<int, int> Runner::sigterm_logouts(CellRun& c, Clock::time_point t1, bool want_logout,
                                            std::vector<std::string>& bad) {
  int logouts = 0, open_sessions = 0;
  for (auto& p : c.peers) {
    if (!p->open()) continue;
    ++open_sessions;
    Msg m;
    bool got = false;
    while (p->receive(std::max(0.01, o_.grace_s - since(t1)), m) == Got::message)
      if (m.type() == "5" && !got) {
        got = true;
        p->send("5", p->next_seq++, nullptr);
      }
    logouts += got;
    if (!got && want_logout) bad.push_back(p->comp() + ": no Logout before the connection ended");
  }
  return {logouts, open_sessions};
}

void Runner::unsupported(const std::string& model, const std::string& transport, const std::string& what) {
  const std::string scope = model + "/" + transport;
  const std::string work = o_.work_dir + "/unsupported_" + model + "_" + transport;
  const ServerStart st = start_of(model, transport, work);
  Child server;
  if (!start(st, work, scope, "unsupported", server)) return;
  const auto code = server.wait_for(o_.ready_timeout_s);
  const std::string err = read_text_or_empty(work + "/server.err");
  const std::string u = unsupported_line(err);
  std::string why;
  if (!code)
    why = "still running after " + fixed(o_.ready_timeout_s, 0) + " s";
  else if (*code != 3)
    why = "exit code " + std::to_string(*code) + ", expected 3";
  else if (u.empty())
    why = "exit 3 without a line starting 'unsupported:' on stderr";
  if (!read_text_or_empty(st.ready_file).empty())
    why += (why.empty() ? "" : "; ") + std::string("wrote the ready file");
  server.stop(1.0);
  line(why.empty() ? CheckStatus::ok : CheckStatus::fail, scope, "unsupported",
       why.empty() ? what + ": exit 3, \"" + u + "\"" : what + ": " + why + (err.empty() ? "" : ": " + tail(err, 200)));
}

}  // namespace

std::map<int, int> read_server_busy_poll(int pid, std::string& why) { return server_busy_poll(pid, why); }

std::string CheckLine::text() const {
  const char* s = status == CheckStatus::ok ? "ok  " : status == CheckStatus::fail ? "FAIL" : "skip";
  return std::string(s) + " " + (scope.empty() ? "" : scope + " ") + name + ": " + detail;
}

std::string CheckReport::summary() const {
  return std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " + std::to_string(skipped) +
         " skipped";
}

std::string contract_part_of(const std::string& check) {
  static const std::map<std::string, std::string> part = {
      {"build", "process"},         {"version", "process"},     {"ready", "process"},
      {"sigterm", "process"},       {"unsupported", "process"}, {"logon", "logon"},
      {"orders", "orders"},         {"reconnect", "logon"},     {"heartbeat", "session"},
      {"test-request", "session"},  {"garbled", "session"},     {"unknown-type", "session"},
      {"logout", "session"},        {"gap", "session"},         {"too-low", "session"},
      {"thread-names", "threads"},  {"pinning", "threads"},     {"runtime-idle", "threads"},
      {"thread-stable", "threads"}, {"busy-poll", "transport"}, {"direct-read", "transport"},
  };
  auto it = part.find(check);
  return it == part.end() ? "" : it->second;
}

namespace {

// The options with their defaults filled: the flavours' folder, a fresh work folder, the machine's busy poll.
CheckOptions with_defaults(const CheckOptions& options) {
  CheckOptions o = options;
  if (o.flavours_dir.empty()) o.flavours_dir = o.source_dir + "/lab/flavours";
  if (o.work_dir.empty()) {
    char tmpl[] = "/tmp/kite-check-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("cannot make a work folder under /tmp");
    o.work_dir = tmpl;
  }
  if (o.machine.kernel_busy_poll_usecs > 0) o.busy_poll_usecs = o.machine.kernel_busy_poll_usecs;
  return o;
}

Flavour flavour_of(const CheckOptions& o) {
  if (o.resolved) return *o.resolved;
  const std::string path = o.flavours_dir + "/" + o.flavour + ".toml";
  if (read_text_or_empty(path).empty())
    throw ConfigError("check-flavour: unknown flavour '" + o.flavour + "' (no " + path + ")");
  return load_flavour(path);
}

// Every declared model and transport this machine has and the options ask for; false when stopped early.
bool check_cells(Runner& run, const Flavour& f, const CheckOptions& o) {
  auto wanted = [](const std::vector<std::string>& only, const std::string& x) {
    return only.empty() || std::find(only.begin(), only.end(), x) != only.end();
  };
  for (const auto& model : kModels) {
    if (std::find(f.models.begin(), f.models.end(), model) == f.models.end() || !wanted(o.models, model)) continue;
    for (const auto& transport : f.transports) {
      if (!o.machine.has_transport(transport) || !wanted(o.transports, transport)) continue;
      if (o.stop && o.stop()) return false;
      const TransportInfo* t = find_transport(transport);
      if (t && ((model == "pool" && !t->pool) || (model == "shard" && !t->shard))) continue;
      if (t && t->preload) {
        run.line(CheckStatus::skip, model + "/" + transport, "ready",
                 "a preload transport runs the same binary under a launcher: checked through kernel");
        continue;
      }
      run.cell(model, transport);
    }
  }
  return true;
}

// Undeclared transport and model: exit 3 and `unsupported:`.
void check_undeclared(Runner& run, const Flavour& f, const CheckOptions& o) {
  const std::string model0 = f.models.empty() ? "single" : f.models.front();
  std::string transport = "";
  for (const auto& t : known_transports())
    if (std::find(f.transports.begin(), f.transports.end(), t.name) == f.transports.end()) {
      transport = t.name;
      break;
    }
  if (!transport.empty()) {
    run.unsupported(model0, transport, "undeclared transport " + transport);
  } else {
    // Everything declared: a native vendor API this machine lacks is one this build lacks too.
    for (const char* native : {"tcpdirect", "socketxtreme"})
      if (!o.machine.has_transport(native)) {
        run.unsupported(model0, native, "transport " + std::string(native) + " (not on this machine)");
        break;
      }
  }
  for (const auto& m : kModels)
    if (std::find(f.models.begin(), f.models.end(), m) == f.models.end()) {
      run.unsupported(m, "kernel", "undeclared model " + m);
      break;
    }
}

}  // namespace

CheckReport check_flavour(const CheckOptions& options) {
  const CheckOptions o = with_defaults(options);
  const Flavour f = flavour_of(o);
  CheckReport report;
  Runner run(o, f, report);
  if (!run.build()) return report;
  run.version();
  if (!check_cells(run, f, o)) return report;
  check_undeclared(run, f, o);
  std::error_code ec;
  if (options.work_dir.empty() && report.failed == 0) fs::remove_all(o.work_dir, ec);
  return report;
}

}  // namespace kite::lab
