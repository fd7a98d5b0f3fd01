// The live audit: while a cell runs, samples every thread of the measured
// processes (and, for foreign burners, every other thread on the machine)
// from /proc and checks them against the core map.
//
// A sample compares two snapshots `interval_s` apart. In a conclusive sample:
//  - a thread of a watched group that burned at least `burn_fraction` of the
//    interval must have run last on one of the group's allowed cores and have
//    an affinity mask inside them (pinning is verified, not assumed);
//  - any other thread that burned at least `burn_fraction` of the interval
//    and ran last on a measured core is a foreign burner.
// Either is a violation, and one violation refuses the cell. A watched thread
// whose files cannot be read, or that exits between snapshots, makes the
// sample inconclusive: it is thrown away and the audit starts again from a
// fresh snapshot after `retry_s`. Threads that come and go outside the watched
// groups are simply skipped. The threshold matters: one 10 ms jiffy of CPU in
// a 200 ms sample is 5%, so a threshold near that finds burners that are not
// there; the default is 25%.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"

namespace kite::lab {

/// Threads the cell owns: a whole process (tids empty) or listed threads of it.
struct AuditGroup {
  std::string label;  ///< "server", "client", ...
  pid_t pid = 0;
  std::vector<pid_t> tids;  ///< empty: every thread of pid
  CoreSet allowed;          ///< where a busy thread of the group may run
};

/// A declared service of the machine file (the database of a postgresql
/// store): its root process and that process's children. Their CPU is
/// expected, so they are never foreign burners; it is reported per sample,
/// and a thread of theirs that burns outside `allowed` is off-core.
struct AuditService {
  std::string label;  ///< "postgresql"
  pid_t root = 0;     ///< the service's main process (the postmaster)
  CoreSet allowed;    ///< its declared cores
};

struct AuditOptions {
  CoreSet measured;  ///< cores on which a foreign burner is a violation
  double interval_s = 0.2;
  double burn_fraction = 0.25;
  double retry_s = 1.0;              ///< wait after an inconclusive sample
  std::vector<pid_t> foreign_scope;  ///< empty: every process on the machine; else only these
  std::vector<pid_t> ignore;         ///< processes never counted as foreign (e.g. the lab itself)
  std::vector<AuditService> services;  ///< declared services: known, reported, kept to their cores
  std::string proc_root = "/proc";
};

struct AuditViolation {
  std::string kind;   ///< "off-core", "unpinned", "foreign-burner"
  std::string group;  ///< the watched group, or "foreign"
  pid_t pid = 0, tid = 0;
  std::string comm;
  int cpu = -1;
  double burn = 0;  ///< share of the sample interval the thread ran
  std::string detail;
};

/// What a declared service used while the audit watched.
struct ServiceUse {
  double cpu_s = 0;       ///< CPU time of its processes over the conclusive samples
  double sampled_s = 0;   ///< the length of those samples
  std::string cores;      ///< cores its threads were seen on ("1")
  int busiest_processes = 0;  ///< the most of its processes that ran in one sample
};

struct AuditReport {
  int samples = 0;       ///< conclusive samples checked
  int inconclusive = 0;  ///< samples thrown away and retried
  int violating_samples = 0;
  bool enabled = true;
  std::vector<AuditViolation> violations;      ///< distinct (kind, tid), first seen
  std::map<std::string, std::string> threads;  ///< "group tid comm" -> cores it was seen on
  std::map<std::string, ServiceUse> services;  ///< by AuditService::label
  /// No violation, and at least one conclusive sample: a cell the audit
  /// could never verify (it ended before a sample completed) is refused too.
  bool passed() const { return !enabled || (violations.empty() && samples > 0); }
  /// One line naming the first violations, for the cell's result and the terminal.
  std::string reason() const;
  nlohmann::json to_json() const;
};

enum class SampleOutcome { baseline, clean, violation, inconclusive, ended };

class Audit {
 public:
  Audit(std::vector<AuditGroup> groups, AuditOptions options);
  ~Audit();
  Audit(const Audit&) = delete;
  Audit& operator=(const Audit&) = delete;

  /// Starts sampling on a background thread.
  void start();
  /// Stops sampling and returns what was found.
  AuditReport stop();

  /// One step, for tests and for callers that drive their own clock: takes
  /// a snapshot and checks it against the previous one.
  SampleOutcome sample_once();
  const AuditReport& report() const { return report_; }

 private:
  struct ThreadState {
    pid_t pid = 0, tid = 0;
    std::string comm;
    int cpu = -1;
    std::uint64_t run_ns = 0;
    CoreSet affinity;
    int group = -1;  ///< index into groups_, -1 for foreign
    int service = -1;  ///< index into opt_.services for a foreign thread of a declared service
    pid_t ppid = 0;
    bool kernel = false;
  };
  struct Snapshot {
    std::map<pid_t, ThreadState> threads;
    std::int64_t at_ns = 0;
    bool complete = true;
    bool ended = false;
  };
  Snapshot take();
  bool read_thread(pid_t pid, pid_t tid, ThreadState& out, bool want_affinity) const;
  void loop();
  int service_of(const ThreadState& t) const;
  std::optional<AuditViolation> judge_watched(const ThreadState& t, double burn);
  std::optional<AuditViolation> judge_foreign(const ThreadState& t, double burn) const;
  std::optional<AuditViolation> judge_service(const ThreadState& t, double burn, double ran_s,
                                              std::vector<std::string>& seen);
  void close_service_sample(double dt_s, const std::vector<std::string>& seen);

  std::vector<AuditGroup> groups_;
  AuditOptions opt_;
  AuditReport report_;
  Snapshot prev_;
  bool have_prev_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace kite::lab
