#include "kite/lab/util.hpp"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef KITE_LAB_BUILD_FLAGS
#define KITE_LAB_BUILD_FLAGS "unknown"
#endif
#ifndef KITE_LAB_COMPILER
#define KITE_LAB_COMPILER "unknown"
#endif

namespace kite::lab {

namespace {

constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

class Sha256 {
 public:
  void update(const unsigned char* p, std::size_t n) {
    total_ += n;
    while (n > 0) {
      std::size_t take = std::min(n, std::size_t{64} - fill_);
      std::memcpy(buf_.data() + fill_, p, take);
      fill_ += take;
      p += take;
      n -= take;
      if (fill_ == 64) {
        block(buf_.data());
        fill_ = 0;
      }
    }
  }
  std::string hex() {
    std::uint64_t bits = total_ * 8;
    unsigned char pad = 0x80;
    update(&pad, 1);
    unsigned char zero = 0;
    while (fill_ != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    char out[65];
    for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h_[static_cast<std::size_t>(i)]);
    return std::string(out, 64);
  }

 private:
  void block(const unsigned char* p) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) |
             (std::uint32_t{p[4 * i + 2]} << 8) | std::uint32_t{p[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = h_;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      std::uint32_t ch = (e & f) ^ (~e & g);
      std::uint32_t t1 = h + S1 + ch + kK[static_cast<std::size_t>(i)] + w[i];
      std::uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      std::uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
      std::uint32_t t2 = S0 + mj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
  }
  std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> buf_{};
  std::size_t fill_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace

std::string sha256_hex(const std::string& data) {
  Sha256 s;
  s.update(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return s.hex();
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 s;
  std::array<char, 65536> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    s.update(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<std::size_t>(in.gcount()));
  }
  return s.hex();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_text_or_empty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(tmp + ": cannot write: " + std::strerror(errno));
    out << text;
    if (!out.flush()) throw std::runtime_error(tmp + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": rename failed: " + std::strerror(errno));
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  std::string h = buf;
  if (auto dot = h.find('.'); dot != std::string::npos) h.resize(dot);
  return h.empty() ? "unknown-host" : h;
}

std::string host_kernel() {
  utsname u{};
  if (uname(&u) != 0) return "";
  return u.release;
}

std::string host_cpu_model() {
  std::istringstream in(read_text_or_empty("/proc/cpuinfo"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "unknown CPU";
}

std::vector<int> host_online_cores() {
  std::vector<int> out;
  std::string text = trim(read_text_or_empty("/sys/devices/system/cpu/online"));
  if (text.empty()) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    auto dash = part.find('-');
    int lo = std::stoi(part.substr(0, dash));
    int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  return out;
}

bool host_has_io_uring() {
  io_uring_params p{};
  long fd = syscall(__NR_io_uring_setup, 4, &p);
  if (fd < 0) return false;
  close(static_cast<int>(fd));
  return true;
}

std::string host_isolcpus() {
  std::istringstream in(read_text_or_empty("/proc/cmdline"));
  std::string word;
  while (in >> word)
    if (word.rfind("isolcpus=", 0) == 0) return word.substr(9);
  return "";
}

std::map<std::string, std::string> host_latency_sysctls() {
  std::map<std::string, std::string> out;
  const char* keys[] = {"net/core/busy_poll",
                        "net/core/busy_read",
                        "kernel/sched_rt_runtime_us",
                        "kernel/sched_autogroup_enabled",
                        "kernel/sched_child_runs_first",
                        "kernel/numa_balancing",
                        "kernel/timer_migration",
                        "vm/stat_interval"};
  for (const char* k : keys) {
    std::string v = trim(read_text_or_empty(std::string("/proc/sys/") + k));
    if (v.empty()) continue;
    std::string dotted = k;
    for (char& c : dotted)
      if (c == '/') c = '.';
    out[dotted] = v;
  }
  std::string gov = trim(read_text_or_empty("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
  out["cpufreq.governor"] = gov.empty() ? "unreadable" : gov;
  std::string iso = host_isolcpus();
  out["isolcpus"] = iso.empty() ? "none" : iso;
  return out;
}

static std::string fmt_time(const char* f) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, f, &tm);
  return buf;
}

std::string utc_now_iso() { return fmt_time("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_compact() { return fmt_time("%Y%m%d-%H%M%S"); }

std::string lab_compiler() { return KITE_LAB_COMPILER; }
std::string lab_build_flags() { return KITE_LAB_BUILD_FLAGS; }

std::string find_executable(const std::string& name, const std::string& base) {
  if (name.empty()) return "";
  if (name.front() == '/') return access(name.c_str(), X_OK) == 0 ? name : "";
  if (name.find('/') != std::string::npos || !base.empty()) {
    std::string p = base.empty() ? name : base + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
    if (name.find('/') != std::string::npos) return "";
  }
  const char* path = std::getenv("PATH");
  if (!path) return "";
  std::istringstream in(path);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    std::string p = dir + "/" + name;
    if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string find_artifact(const std::string& name, const std::string& base) {
  if (name.empty()) return "";
  std::error_code ec;
  auto is_file = [&](const std::string& p) { return std::filesystem::is_regular_file(p, ec); };
  if (name.front() == '/') return is_file(name) ? name : "";
  const std::string p = base.empty() ? name : base + "/" + name;
  if (is_file(p)) return p;
  return name.find('/') == std::string::npos ? find_executable(name, "") : "";
}

}  // namespace kite::lab
