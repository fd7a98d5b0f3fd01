// Holding a server between the runs of a paired sitting: a real cpp server
// (kernel TCP, and io_uring with its SQPOLL kernel thread) is held with
// SIGSTOP, no thread of it uses CPU meanwhile, and once resumed it serves a
// fresh client (a disconnect and a new logon of its session) again.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "kite/lab/hold.hpp"
#include "kite/lab/process.hpp"

using namespace kite::lab;
namespace fs = std::filesystem;

namespace {

struct Server {
  Child child;
  int port = 0;
};

Server start_server(const std::string& transport, const fs::path& dir, bool sqpoll) {
  const std::string ready = (dir / ("ready-" + transport)).string();
  std::vector<std::string> argv = {KITE_BENCH_ROUNDTRIP,
                                   "server",
                                   "--flavour",
                                   "cpp",
                                   "--transport",
                                   transport,
                                   "--model",
                                   "single",
                                   "--port",
                                   "0",
                                   "--idle",
                                   "spin",
                                   "--ready-file",
                                   ready};
  if (sqpoll) argv.push_back("--uring-sqpoll");
  SpawnSpec spec;
  spec.argv = argv;
  spec.stderr_path = (dir / ("server-" + transport + ".log")).string();
  Server s{Child::spawn(spec), 0};
  for (int i = 0; i < 500 && s.port == 0 && s.child.running(); ++i) {
    std::ifstream in(ready);
    if (!(in >> s.port)) s.port = 0;
    if (s.port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return s;
}

int run_client(int port) {
  return run_command({KITE_BENCH_ROUNDTRIP, "client", "--port", std::to_string(port), "--loop", "closed", "--runs", "1",
                      "--warmup", "0.1", "--duration", "0.2"},
                     20.0)
      .code;
}

void hold_serve_hold(const std::string& transport, bool sqpoll) {
  const fs::path dir = fs::temp_directory_path() / ("kite-hold-" + std::to_string(getpid()) + "-" + transport);
  fs::create_directories(dir);
  Server s = start_server(transport, dir, sqpoll);
  ASSERT_GT(s.port, 0) << transport << " server never became ready; see " << dir;
  const pid_t group = s.child.pid();
  if (sqpoll) {
    bool poller = false;
    for (const auto& t : group_tasks(group)) poller |= t.name.rfind("iou-sqp", 0) == 0;
    EXPECT_TRUE(poller) << "a uring server with --uring-sqpoll has an iou-sqp thread";
  }
  EXPECT_NE(verify_held(group, 0.2, 0.2), "") << "a spinning server that is not held fails the check";
  EXPECT_EQ(run_client(s.port), 0) << "first client";
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(hold_group(group), "");
    EXPECT_EQ(verify_held(group), "") << transport << ", hold " << round;
    ASSERT_EQ(resume_group(group), "");
    EXPECT_EQ(run_client(s.port), 0) << "a fresh client after hold " << round;
  }
  s.child.stop(2.0);
  fs::remove_all(dir);
}

TEST(HoldTest, aHeldKernelServerUsesNoCpuAndServesAgainOnceResumed) { hold_serve_hold("kernel", false); }

TEST(HoldTest, aHeldUringServerLeavesNoPollingThreadSpinning) { hold_serve_hold("uring", true); }

TEST(HoldTest, signallingAGroupThatIsGoneSaysSo) {
  EXPECT_NE(hold_group(0), "");
  EXPECT_NE(verify_held(999999, 0.01, 0.01), "");
}

}  // namespace
