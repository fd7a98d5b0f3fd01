// The live audit, on threads this test controls: a clean cell passes; a
// thread moved off its core and a foreign spinner on a measured core refuse
// it; a thread that exits makes a sample inconclusive, not a violation.
// Foreign threads are looked for in this process only, so other work on a
// shared machine cannot change the outcome.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kite/lab/audit.hpp"
#include "kite/lab/util.hpp"

using namespace kite::lab;
namespace fs = std::filesystem;

namespace {

// A thread that spins on one core until told to stop.
class Spinner {
 public:
  explicit Spinner(int core) {
    thread_ = std::thread([this, core] {
      pin(core);
      tid_ = static_cast<pid_t>(syscall(SYS_gettid));
      ready_ = true;
      while (!stop_.load(std::memory_order_relaxed)) {
        if (int c = move_to_.load(); c >= 0) {
          pin(c);
          move_to_ = -1;
        }
      }
    });
    while (!ready_) std::this_thread::yield();
  }
  ~Spinner() {
    stop_ = true;
    thread_.join();
  }
  pid_t tid() const { return tid_; }
  void move_to(int core) {
    move_to_ = core;
    while (move_to_.load() >= 0) std::this_thread::yield();
  }

 private:
  static void pin(int core) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(core, &s);
    sched_setaffinity(0, sizeof s, &s);
  }
  std::thread thread_;
  std::atomic<bool> stop_{false}, ready_{false};
  std::atomic<int> move_to_{-1};
  pid_t tid_ = 0;
};

AuditOptions options_for(int measured) {
  AuditOptions o;
  o.measured = {measured};
  o.interval_s = 0.1;
  // Only this process's threads are in scope, so a low threshold is safe and
  // keeps the tests robust when the machine is busy and spinners get little CPU.
  o.burn_fraction = 0.05;
  o.foreign_scope = {getpid()};
  return o;
}

// Runs the audit on its own thread for about `seconds` with the measured thread as the "server".
AuditReport audit_for(pid_t tid, int core, double seconds) {
  Audit a({{"server", getpid(), {tid}, {core}}}, options_for(core));
  a.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return a.stop();
}

// Drives the audit by hand, a sample every 100 ms, until the first violation
// or max_samples: on a busy machine a spinner may need a few samples to show.
AuditReport audit_until_violation(pid_t tid, int core, const std::function<void()>& after_baseline,
                                  int max_samples = 40) {
  Audit a({{"server", getpid(), {tid}, {core}}}, options_for(core));
  a.sample_once();
  after_baseline();
  for (int i = 0; i < max_samples; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (a.sample_once() == SampleOutcome::violation) break;
  }
  return a.report();
}

class LiveAudit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (host_online_cores().size() < 2) GTEST_SKIP() << "needs 2 cores: measures on core 1, moves a thread to core 0";
  }
};

}  // namespace

TEST_F(LiveAudit, acceptsACleanCell) {
  Spinner measured(1);
  AuditReport r = audit_for(measured.tid(), 1, 0.8);
  EXPECT_TRUE(r.passed()) << r.reason();
  EXPECT_GE(r.samples, 3);
  EXPECT_EQ(r.violating_samples, 0);
}

TEST_F(LiveAudit, refusesACellWhoseThreadIsMovedOffItsCore) {
  Spinner measured(1);
  AuditReport r = audit_until_violation(measured.tid(), 1, [&] { measured.move_to(0); });
  ASSERT_FALSE(r.passed());
  // Other tests may run beside this one (ctest -j) and spin on core 1 too:
  // their threads can be reported as well, so look for ours among them.
  const AuditViolation* ours = nullptr;
  for (const auto& v : r.violations)
    if (v.tid == measured.tid() && (v.kind == "off-core" || v.kind == "unpinned")) ours = &v;
  ASSERT_NE(ours, nullptr) << r.reason();
  EXPECT_NE(ours->detail.find("server thread"), std::string::npos) << ours->detail;
}

TEST_F(LiveAudit, refusesACellWithAForeignSpinnerOnAMeasuredCore) {
  Spinner measured(1);
  std::unique_ptr<Spinner> intruder;
  AuditReport r = audit_until_violation(measured.tid(), 1, [&] { intruder = std::make_unique<Spinner>(1); });
  ASSERT_FALSE(r.passed());
  bool found = false;
  for (const auto& v : r.violations)
    if (v.kind == "foreign-burner" && v.tid == intruder->tid()) found = true;
  EXPECT_TRUE(found) << r.reason();
}

TEST_F(LiveAudit, ignoresAForeignSpinnerOnAnUnmeasuredCore) {
  Spinner measured(1);
  Spinner elsewhere(0);
  AuditReport r = audit_for(measured.tid(), 1, 0.8);
  EXPECT_TRUE(r.passed()) << r.reason();
}

// A /proc of our own making: deterministic inconclusive samples.
class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kite-fakeproc-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void thread(int pid, int tid, int cpu, unsigned long long run_ns, const std::string& allowed, int ppid = 1) {
    fs::path d = root_ / std::to_string(pid) / "task" / std::to_string(tid);
    fs::create_directories(d);
    std::ofstream(d / "stat") << tid << " (worker one) R " << ppid << " 1 1 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 "
                              << "0 0 0 0 0 0 0 0 0 0 0 0 0 17 " << cpu << " 0 0 0 0 0\n";
    std::ofstream(d / "schedstat") << run_ns << " 0 1\n";
    std::ofstream(d / "status") << "Name:\tworker\nCpus_allowed_list:\t" << allowed << "\n";
  }
  AuditOptions opts() {
    AuditOptions o;
    o.proc_root = root_.string();
    o.measured = {1};
    o.interval_s = 0.2;
    o.burn_fraction = 0.25;
    return o;
  }
  fs::path root_;
};

TEST_F(FakeProc, anExitingThreadMakesTheSampleInconclusiveNotAViolation) {
  thread(100, 100, 1, 0, "1");
  thread(100, 101, 1, 0, "1");
  Audit a({{"server", 100, {}, {1}}}, opts());
  EXPECT_EQ(a.sample_once(), SampleOutcome::baseline);
  thread(100, 100, 1, 150'000'000, "1");
  fs::remove_all(root_ / "100" / "task" / "101");
  EXPECT_EQ(a.sample_once(), SampleOutcome::inconclusive);
  EXPECT_EQ(a.sample_once(), SampleOutcome::baseline);  // starts again from a fresh snapshot
  thread(100, 100, 1, 300'000'000, "1");
  EXPECT_EQ(a.sample_once(), SampleOutcome::clean);
  EXPECT_TRUE(a.report().passed());
  EXPECT_EQ(a.report().inconclusive, 1);
}

TEST_F(FakeProc, anUnreadableThreadMakesTheSampleInconclusive) {
  thread(100, 100, 1, 0, "1");
  Audit a({{"server", 100, {}, {1}}}, opts());
  EXPECT_EQ(a.sample_once(), SampleOutcome::baseline);
  fs::remove(root_ / "100" / "task" / "100" / "schedstat");
  EXPECT_EQ(a.sample_once(), SampleOutcome::inconclusive);
  EXPECT_TRUE(a.report().violations.empty());
  EXPECT_FALSE(a.report().passed()) << "no conclusive sample: the cell is unverified";
  EXPECT_THAT(a.report().reason(), ::testing::HasSubstr("unverified"));
}

TEST_F(FakeProc, oneJiffyInASampleIsNotABurnerButASpinnerIs) {
  thread(100, 100, 1, 0, "1");
  thread(200, 200, 1, 0, "0-1");
  Audit a({{"server", 100, {}, {1}}}, opts());
  a.sample_once();
  thread(100, 100, 1, 190'000'000, "1");
  thread(200, 200, 1, 10'000'000, "0-1");  // one 10 ms jiffy in a 200 ms sample
  EXPECT_EQ(a.sample_once(), SampleOutcome::clean);
  thread(100, 100, 1, 290'000'000, "1");
  thread(200, 200, 1, 110'000'000, "0-1");  // 100 ms more: a second burner on core 1
  EXPECT_EQ(a.sample_once(), SampleOutcome::violation);
  ASSERT_EQ(a.report().violations.size(), 1u);
  EXPECT_EQ(a.report().violations[0].kind, "foreign-burner");
  EXPECT_EQ(a.report().violations[0].pid, 200);
}

TEST_F(FakeProc, aBusyThreadWithAWideAffinityIsUnpinned) {
  thread(100, 100, 1, 0, "0-1");
  Audit a({{"server", 100, {}, {1}}}, opts());
  a.sample_once();
  thread(100, 100, 1, 150'000'000, "0-1");
  EXPECT_EQ(a.sample_once(), SampleOutcome::violation);
  EXPECT_EQ(a.report().violations.at(0).kind, "unpinned");
}

TEST_F(FakeProc, theAuditEndsWhenTheWatchedProcessHasGone) {
  Audit a({{"server", 12345, {}, {1}}}, opts());
  EXPECT_EQ(a.sample_once(), SampleOutcome::ended);
}

// A declared service (the postgresql store's database): its root and its
// children are known, their CPU is reported, not a foreign burner; one of
// them burning outside the service's cores is off-core. Others still burn.
TEST_F(FakeProc, aDeclaredServiceIsReportedNotABurnerButKeptToItsCores) {
  thread(100, 100, 2, 0, "2");       // the server, on core 2
  thread(300, 300, 1, 0, "1");       // the postmaster, on the client core 1
  thread(301, 301, 1, 0, "1", 300);  // a backend: the postmaster's child
  AuditOptions o = opts();
  o.measured = {1, 2};
  o.services = {{"postgresql", 300, {1}}};
  Audit a({{"server", 100, {}, {2}}}, o);
  a.sample_once();
  thread(100, 100, 2, 200'000'000, "2");
  thread(301, 301, 1, 100'000'000, "1", 300);  // half of the sample on a measured core
  EXPECT_EQ(a.sample_once(), SampleOutcome::clean);
  ASSERT_EQ(a.report().services.count("postgresql"), 1u);
  EXPECT_NEAR(a.report().services.at("postgresql").cpu_s, 0.1, 1e-9);
  EXPECT_EQ(a.report().services.at("postgresql").cores, "1");
  EXPECT_EQ(a.report().services.at("postgresql").busiest_processes, 1);
  EXPECT_TRUE(a.report().to_json()["services"]["postgresql"].contains("cpu_share"));
  thread(100, 100, 2, 400'000'000, "2");
  thread(301, 301, 2, 200'000'000, "1", 300);  // the backend on the server's core
  EXPECT_EQ(a.sample_once(), SampleOutcome::violation);
  ASSERT_EQ(a.report().violations.size(), 1u);
  EXPECT_EQ(a.report().violations[0].kind, "off-core");
  EXPECT_EQ(a.report().violations[0].group, "service postgresql");
  thread(400, 400, 1, 0, "1", 999);  // not the service's: a foreign burner as ever
  a.sample_once();
  thread(400, 400, 1, 150'000'000, "1", 999);
  thread(100, 100, 2, 600'000'000, "2");
  EXPECT_EQ(a.sample_once(), SampleOutcome::violation);
  EXPECT_EQ(a.report().violations.back().kind, "foreign-burner");
  EXPECT_EQ(a.report().violations.back().pid, 400);
}
