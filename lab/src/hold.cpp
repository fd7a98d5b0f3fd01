#include "kite/lab/hold.hpp"

#include <dirent.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace kite::lab {

namespace {

std::vector<long> numeric_entries(const std::string& dir) {
  std::vector<long> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.push_back(v);
  }
  closedir(d);
  return out;
}

// Fields of /proc/.../stat after the comm, which may hold spaces and parentheses.
struct Stat {
  std::string comm;
  char state = '?';
  long pgrp = -1;
  std::uint64_t ticks = 0;
};

bool read_stat(const std::string& path, Stat& s) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  s.comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  std::string field[13];
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  for (auto& f : field) rest >> f;
  if (!rest) return false;
  s.state = field[0].empty() ? '?' : field[0][0];
  s.pgrp = std::strtol(field[2].c_str(), nullptr, 10);
  s.ticks = std::strtoull(field[11].c_str(), nullptr, 10) + std::strtoull(field[12].c_str(), nullptr, 10);
  return true;
}

std::string signal_group(pid_t pgid, int sig) {
  if (pgid <= 1) return "no process group to signal";
  if (::kill(-pgid, sig) != 0) return "signal to process group " + std::to_string(pgid) + ": " + std::strerror(errno);
  return "";
}

std::string describe(const GroupTask& t) { return t.name + " (tid " + std::to_string(t.tid) + ")"; }

}  // namespace

std::vector<GroupTask> group_tasks(pid_t pgid) {
  std::vector<GroupTask> out;
  for (const long pid : numeric_entries("/proc")) {
    Stat ps;
    if (!read_stat("/proc/" + std::to_string(pid) + "/stat", ps) || ps.pgrp != pgid) continue;
    const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
    for (const long tid : numeric_entries(task_dir)) {
      Stat ts;
      if (!read_stat(task_dir + "/" + std::to_string(tid) + "/stat", ts)) continue;  // exited meanwhile
      out.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(tid), ts.state, ts.ticks, ts.comm});
    }
  }
  return out;
}

std::string hold_group(pid_t pgid) { return signal_group(pgid, SIGSTOP); }
std::string resume_group(pid_t pgid) { return signal_group(pgid, SIGCONT); }

std::string verify_held(pid_t pgid, double window_s, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  const auto stopped = [](char s) { return s == 'T' || s == 't' || s == 'Z' || s == 'X'; };
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::vector<GroupTask> before;
  while (true) {
    before = group_tasks(pgid);
    if (before.empty()) return "process group " + std::to_string(pgid) + " has no process";
    const GroupTask* running = nullptr;
    for (const auto& t : before)
      if (!stopped(t.state)) running = &t;
    if (running == nullptr) break;
    if (Clock::now() >= deadline)
      return describe(*running) + " is not stopped (state " + std::string(1, running->state) + ")";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
  std::map<pid_t, std::uint64_t> ticks;
  for (const auto& t : before) ticks[t.tid] = t.cpu_ticks;
  for (const auto& t : group_tasks(pgid)) {
    const auto it = ticks.find(t.tid);
    if (it == ticks.end()) return describe(t) + " started while held";
    if (t.cpu_ticks > it->second)
      return describe(t) + " used " + std::to_string(t.cpu_ticks - it->second) + " ticks while held";
    if (!stopped(t.state)) return describe(t) + " ran while held (state " + std::string(1, t.state) + ")";
  }
  return "";
}

}  // namespace kite::lab
