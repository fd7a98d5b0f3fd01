// Holding a server between its runs in a paired sitting: every process of
// its process group (the lab starts each server in a group of its own, and
// the Java and .NET launchers start children in it) is stopped with SIGSTOP
// and continued with SIGCONT. A held server keeps its sockets, memory and
// warm JIT code; it loses its caches and branch history to whatever runs
// meanwhile, which is why a resumed server gets a warm-up before its run.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kite::lab {

/// One thread of a process of a group, as /proc shows it.
struct GroupTask {
  pid_t pid = 0, tid = 0;
  char state = '?';             ///< /proc's state letter: R, S, D, T (stopped), t, Z...
  std::uint64_t cpu_ticks = 0;  ///< utime + stime, in clock ticks
  std::string name;             ///< the thread's comm
};

/// Every thread of every process whose process group is `pgid`.
std::vector<GroupTask> group_tasks(pid_t pgid);

/// Sends SIGSTOP (hold) or SIGCONT (resume) to the whole group. Returns ""
/// or what failed ("no such process group 1234").
std::string hold_group(pid_t pgid);
std::string resume_group(pid_t pgid);

/// Waits up to timeout_s for every thread of the group to be stopped, then
/// watches them for window_s: returns "" when every thread stayed stopped
/// and used no CPU, else the first thread that did not ("iou-sqp-812 (tid
/// 815) used 20 ticks while held").
std::string verify_held(pid_t pgid, double window_s = 0.2, double timeout_s = 2.0);

}  // namespace kite::lab
