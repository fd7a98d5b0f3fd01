#include "kite/lab/audit.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "kite/lab/util.hpp"

namespace kite::lab {

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const char* n = e->d_name;
    if (*n < '0' || *n > '9') continue;
    out.push_back(static_cast<pid_t>(std::atoi(n)));
  }
  closedir(d);
  return out;
}

bool contains(const CoreSet& s, int c) { return std::find(s.begin(), s.end(), c) != s.end(); }
bool contains_pid(const std::vector<pid_t>& s, pid_t p) { return std::find(s.begin(), s.end(), p) != s.end(); }

}  // namespace

std::string AuditReport::reason() const {
  if (!enabled) return "audit disabled";
  if (violations.empty() && samples == 0)
    return "unverified: no conclusive sample before the cell ended (" + std::to_string(inconclusive) + " inconclusive)";
  if (violations.empty())
    return "clean: " + std::to_string(samples) + " samples, " + std::to_string(inconclusive) + " inconclusive";
  std::string out;
  std::size_t shown = 0;
  for (const auto& v : violations) {
    if (shown++ == 3) {
      out += "; and " + std::to_string(violations.size() - 3) + " more";
      break;
    }
    if (!out.empty()) out += "; ";
    out += v.detail;
  }
  return out;
}

nlohmann::json AuditReport::to_json() const {
  nlohmann::json j;
  j["enabled"] = enabled;
  j["passed"] = passed();
  j["samples"] = samples;
  j["inconclusive_retries"] = inconclusive;
  j["violating_samples"] = violating_samples;
  j["reason"] = reason();
  nlohmann::json vs = nlohmann::json::array();
  for (const auto& v : violations)
    vs.push_back({{"kind", v.kind},
                  {"group", v.group},
                  {"pid", v.pid},
                  {"tid", v.tid},
                  {"comm", v.comm},
                  {"cpu", v.cpu},
                  {"burn", v.burn},
                  {"detail", v.detail}});
  j["violations"] = vs;
  j["threads"] = threads;
  if (!services.empty()) {
    nlohmann::json sv = nlohmann::json::object();
    for (const auto& [label, u] : services)
      sv[label] = {{"cpu_s", u.cpu_s},
                   {"cpu_share", u.sampled_s > 0 ? nlohmann::json(u.cpu_s / u.sampled_s) : nlohmann::json()},
                   {"cores_seen", u.cores},
                   {"busiest_processes", u.busiest_processes}};
    j["services"] = sv;
  }
  return j;
}

Audit::Audit(std::vector<AuditGroup> groups, AuditOptions options)
    : groups_(std::move(groups)), opt_(std::move(options)) {}

Audit::~Audit() {
  if (thread_.joinable()) stop();
}

bool Audit::read_thread(pid_t pid, pid_t tid, ThreadState& out, bool want_affinity) const {
  std::string base = opt_.proc_root + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/";
  std::string stat = read_text_or_empty(base + "stat");
  auto open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  out.pid = pid;
  out.tid = tid;
  out.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 1));
  std::vector<std::string> f;
  std::string tok;
  while (rest >> tok) f.push_back(tok);
  // f[0] is field 3 (state); field N is f[N - 3].
  if (f.size() < 37) return false;
  out.cpu = std::atoi(f[36].c_str());
  out.ppid = static_cast<pid_t>(std::atoi(f[1].c_str()));  // field 4
  out.kernel = (std::strtoul(f[6].c_str(), nullptr, 10) & 0x00200000u) != 0;  // PF_KTHREAD in flags (field 9)
  std::string sched = read_text_or_empty(base + "schedstat");
  if (sched.empty()) return false;
  out.run_ns = std::strtoull(sched.c_str(), nullptr, 10);
  if (want_affinity) {
    std::istringstream st(read_text_or_empty(base + "status"));
    std::string line;
    bool found = false;
    while (std::getline(st, line))
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        try {
          out.affinity = parse_core_list(trim(line.substr(18)));
          found = true;
        } catch (const std::exception&) {
          return false;
        }
      }
    if (!found) return false;
  }
  return true;
}

Audit::Snapshot Audit::take() {
  Snapshot s;
  s.at_ns = now_ns();
  std::vector<pid_t> watched_pids;
  bool any_alive = false;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& grp = groups_[g];
    watched_pids.push_back(grp.pid);
    std::vector<pid_t> tids = grp.tids;
    if (tids.empty()) tids = numeric_entries(opt_.proc_root + "/" + std::to_string(grp.pid) + "/task");
    if (tids.empty()) {
      s.complete = false;  // the process has gone (or cannot be read)
      continue;
    }
    any_alive = true;
    for (pid_t tid : tids) {
      ThreadState t;
      t.group = static_cast<int>(g);
      if (!read_thread(grp.pid, tid, t, true)) {
        s.complete = false;
        continue;
      }
      s.threads[tid] = t;
    }
  }
  if (!any_alive && !groups_.empty()) s.ended = true;
  std::vector<pid_t> pids = opt_.foreign_scope.empty() ? numeric_entries(opt_.proc_root) : opt_.foreign_scope;
  for (pid_t pid : pids) {
    if (contains_pid(opt_.ignore, pid)) continue;
    for (pid_t tid : numeric_entries(opt_.proc_root + "/" + std::to_string(pid) + "/task")) {
      if (s.threads.count(tid)) continue;
      bool listed = false;
      for (const auto& grp : groups_)
        if (grp.pid == pid && (grp.tids.empty() || contains_pid(grp.tids, tid))) listed = true;
      if (listed) continue;
      ThreadState t;
      if (!read_thread(pid, tid, t, false)) continue;  // a foreign thread may vanish: skip it
      t.service = service_of(t);
      s.threads[tid] = t;
    }
  }
  return s;
}

SampleOutcome Audit::sample_once() {
  Snapshot cur = take();
  if (cur.ended) return SampleOutcome::ended;
  if (!cur.complete) {
    ++report_.inconclusive;
    have_prev_ = false;
    return SampleOutcome::inconclusive;
  }
  if (!have_prev_) {
    prev_ = std::move(cur);
    have_prev_ = true;
    return SampleOutcome::baseline;
  }
  // A watched thread that was there and is gone exited mid-sample.
  for (const auto& [tid, t] : prev_.threads)
    if (t.group >= 0 && !cur.threads.count(tid)) {
      ++report_.inconclusive;
      have_prev_ = false;
      return SampleOutcome::inconclusive;
    }
  double dt = static_cast<double>(
      std::max<std::int64_t>(cur.at_ns - prev_.at_ns, static_cast<std::int64_t>(opt_.interval_s * 1e9)));
  bool violated = false;
  auto add = [&](AuditViolation v) {
    violated = true;
    for (const auto& o : report_.violations)
      if (o.kind == v.kind && o.tid == v.tid) return;
    report_.violations.push_back(std::move(v));
  };
  std::vector<std::string> service_pids(opt_.services.size());  // "pid," of each service's processes that ran
  for (const auto& [tid, t] : cur.threads) {
    auto p = prev_.threads.find(tid);
    if (p == prev_.threads.end()) continue;  // born in this sample: judged from the next one
    const double ran_ns = static_cast<double>(t.run_ns - std::min(t.run_ns, p->second.run_ns));
    const double burn = ran_ns / dt;
    std::optional<AuditViolation> v = t.group >= 0     ? judge_watched(t, burn)
                                      : t.service >= 0 ? judge_service(t, burn, ran_ns * 1e-9, service_pids)
                                                       : judge_foreign(t, burn);
    if (v) add(std::move(*v));
  }
  close_service_sample(dt * 1e-9, service_pids);
  ++report_.samples;
  if (violated) ++report_.violating_samples;
  prev_ = std::move(cur);
  return violated ? SampleOutcome::violation : SampleOutcome::clean;
}

// The declared service a thread belongs to: its process is the service's
// root or a child of it (PostgreSQL's backends are the postmaster's children).
int Audit::service_of(const ThreadState& t) const {
  for (std::size_t i = 0; i < opt_.services.size(); ++i)
    if (opt_.services[i].root > 0 && (t.pid == opt_.services[i].root || t.ppid == opt_.services[i].root))
      return static_cast<int>(i);
  return -1;
}

namespace {
std::string percent(double burn) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f%%", burn * 100);
  return buf;
}
}  // namespace

// A thread of a watched group: the cores it was seen on; off its cores or
// unpinned when it burned.
std::optional<AuditViolation> Audit::judge_watched(const ThreadState& t, double burn) {
  const auto& grp = groups_[static_cast<std::size_t>(t.group)];
  const std::string tid = std::to_string(t.tid);
  std::string& seen = report_.threads[grp.label + " " + tid + " " + t.comm];
  const std::string c = std::to_string(t.cpu);
  if (("," + seen + ",").find("," + c + ",") == std::string::npos) seen += (seen.empty() ? "" : ",") + c;
  if (burn < opt_.burn_fraction) return std::nullopt;
  if (!contains(grp.allowed, t.cpu))
    return AuditViolation{"off-core", grp.label, t.pid, t.tid, t.comm, t.cpu, burn,
                          grp.label + " thread " + t.comm + " (tid " + tid + ") ran " + percent(burn) +
                              " of a sample on core " + c + ", outside its cores " + format_core_list(grp.allowed)};
  if (!std::all_of(t.affinity.begin(), t.affinity.end(), [&](int c2) { return contains(grp.allowed, c2); }))
    return AuditViolation{"unpinned", grp.label, t.pid, t.tid, t.comm, t.cpu, burn,
                          grp.label + " thread " + t.comm + " (tid " + tid + ") burns " + percent(burn) +
                              " with affinity " + format_core_list(t.affinity) + ", wider than its cores " +
                              format_core_list(grp.allowed)};
  return std::nullopt;
}

// Any other thread: a burner when it burned on a measured core.
std::optional<AuditViolation> Audit::judge_foreign(const ThreadState& t, double burn) const {
  if (burn < opt_.burn_fraction || !contains(opt_.measured, t.cpu)) return std::nullopt;
  return AuditViolation{"foreign-burner", "foreign", t.pid, t.tid, t.comm, t.cpu, burn,
                        std::string(t.kernel ? "kernel thread " : "foreign thread ") + t.comm + " (pid " +
                            std::to_string(t.pid) + ", tid " + std::to_string(t.tid) + ") burned " + percent(burn) +
                            " of a sample on measured core " + std::to_string(t.cpu)};
}

// A declared service's thread: its CPU is added to the service's use (never a
// foreign burner); off-core when it burned outside the service's cores.
std::optional<AuditViolation> Audit::judge_service(const ThreadState& t, double burn, double ran_s,
                                                   std::vector<std::string>& seen) {
  const AuditService& sv = opt_.services[static_cast<std::size_t>(t.service)];
  ServiceUse& u = report_.services[sv.label];
  u.cpu_s += ran_s;
  if (ran_s > 0) {
    const std::string c = std::to_string(t.cpu), pid = std::to_string(t.pid) + ",";
    if (("," + u.cores + ",").find("," + c + ",") == std::string::npos) u.cores += (u.cores.empty() ? "" : ",") + c;
    std::string& ran = seen[static_cast<std::size_t>(t.service)];
    if (("," + ran).find("," + pid) == std::string::npos) ran += pid;
  }
  if (burn < opt_.burn_fraction || contains(sv.allowed, t.cpu)) return std::nullopt;
  return AuditViolation{"off-core", "service " + sv.label, t.pid, t.tid, t.comm, t.cpu, burn,
                        "service " + sv.label + " thread " + t.comm + " (pid " + std::to_string(t.pid) + ") ran " +
                            percent(burn) + " of a sample on core " + std::to_string(t.cpu) +
                            ", outside its declared cores " + format_core_list(sv.allowed)};
}

// Each service's audited time and the most of its processes that ran in this sample.
void Audit::close_service_sample(double dt_s, const std::vector<std::string>& seen) {
  for (std::size_t i = 0; i < opt_.services.size(); ++i) {
    ServiceUse& u = report_.services[opt_.services[i].label];
    u.sampled_s += dt_s;
    u.busiest_processes =
        std::max(u.busiest_processes, static_cast<int>(std::count(seen[i].begin(), seen[i].end(), ',')));
  }
}

void Audit::start() {
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

void Audit::loop() {
  std::unique_lock lk(mu_);
  auto wait = std::chrono::duration<double>(opt_.interval_s);
  while (!stop_) {
    lk.unlock();
    SampleOutcome o = sample_once();
    lk.lock();
    if (o == SampleOutcome::ended) break;
    auto d = o == SampleOutcome::inconclusive ? std::chrono::duration<double>(opt_.retry_s) : wait;
    cv_.wait_for(lk, d, [this] { return stop_; });
  }
}

AuditReport Audit::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  return report_;
}

}  // namespace kite::lab
