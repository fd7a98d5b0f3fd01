// The netns network path: a sitting runs server and client in two namespaces
// joined by a veth pair, and removes them afterwards, also when interrupted.
// Needs root (namespaces, veth) and 2 cores; skipped otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kite/lab/process.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/util.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

const char* kMachine = R"(
name = "nsbox"
cpu_model = "Test CPU 9000"
[cores]
server = "0"
client = "1"
[network]
path = "netns"
server_addr = "10.77.0.1"
client_addr = "10.77.0.2"
prefix = 30
)";

bool ours(const std::string& ns, pid_t pid) { return ns.rfind("kite-" + std::to_string(pid % 1000000) + "-", 0) == 0; }

class Netns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root for network namespaces";
    if (host_online_cores().size() < 2) GTEST_SKIP() << "needs 2 cores";
    if (run_command({"ip", "-V"}).code != 0) GTEST_SKIP() << "needs iproute2";
    const char* s = std::getenv("KITE_SOURCE_DIR");
    src_ = s ? s : ".";
    root_ = fs::temp_directory_path() / ("kite-lab-netns-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "build");
    fs::copy_file(src_ + "/tests/lab/fake_bench_roundtrip.py", root_ / "build" / "bench_roundtrip");
    fs::permissions(root_ / "build" / "bench_roundtrip", fs::perms::owner_all, fs::perm_options::add);
    std::ofstream(root_ / "machine.toml") << kMachine;
  }
  void TearDown() override {
    unsetenv("FAKE_BR_SCALE");
    if (!root_.empty()) fs::remove_all(root_);
  }
  std::string src_;
  fs::path root_;
};

}  // namespace

TEST_F(Netns, aSittingMeasuresThroughTheVethPairAndRemovesTheNamespaces) {
  setenv("FAKE_BR_SCALE", "0.05", 1);
  SittingOptions o;
  o.source_dir = src_;
  o.build_dir = (root_ / "build").string();
  o.results_dir = (root_ / "results").string();
  o.sitting_name = "ns";
  o.machine = load_machine((root_ / "machine.toml").string());
  o.matrix = parse_matrix(
      "flavours=['cpp']\ntransports=['kernel']\nmodels=['single']\nloops=['closed']\n"
      "runs=2\nwarmup_s=0.2\nduration_s=0.2\n",
      "m");
  o.audit = false;
  o.check = false;  // the fake bench_roundtrip speaks no FIX
  o.progress = false;
  o.build_site = false;
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::measured) << r.cells[0].reason;
  auto j =
      nlohmann::json::parse(read_text((root_ / "results" / "nsbox" / "ns" / "cpp_kernel_single_closed.json").string()));
  const auto& eff = j["stamp"]["effective"];
  EXPECT_EQ(eff["network"], "netns");
  EXPECT_EQ(eff["bind"], "10.77.0.1");
  EXPECT_THAT(eff["offloads"].get<std::string>(), HasSubstr("gro=on tso=off"));
  EXPECT_THAT(eff["client_argv"].dump(), HasSubstr("\"--host\",\"10.77.0.1\""));
  for (const auto& ns : list_namespaces()) EXPECT_FALSE(ours(ns, getpid())) << ns << " is left behind";
}

TEST_F(Netns, theNamespacesAreGoneAfterAnInterruptedSitting) {
  const char* bin = std::getenv("KITE_BINARY_DIR");
  std::string bench_run = std::string(bin ? bin : ".") + "/bench-run";
  if (access(bench_run.c_str(), X_OK) != 0) GTEST_SKIP() << "bench-run not built at " << bench_run;
  std::ofstream(root_ / "matrix.toml") << "flavours=['cpp']\ntransports=['kernel']\nmodels=['single','mono']\n"
                                          "loops=['closed']\nruns=5\nwarmup_s=0.5\nduration_s=1\n";
  SpawnSpec s;
  s.argv = {bench_run,
            "--machine",
            (root_ / "machine.toml").string(),
            "--matrix",
            (root_ / "matrix.toml").string(),
            "--build-dir",
            (root_ / "build").string(),
            "--results",
            (root_ / "results").string(),
            "--source-dir",
            src_,
            "--sitting",
            "cut",
            "--no-audit",
            "--no-check",
            "--no-site"};
  s.env = {{"FAKE_BR_SCALE", "1"}};
  s.stdout_path = (root_ / "out.log").string();
  s.stderr_path = (root_ / "err.log").string();
  Child lab = Child::spawn(s);
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const auto& ns : list_namespaces()) seen = seen || ours(ns, lab.pid());
  }
  ASSERT_TRUE(seen) << "no namespace appeared: " << read_text_or_empty((root_ / "err.log").string());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // into the first cell's runs
  kill(lab.pid(), SIGINT);
  auto code = lab.wait_for(30.0);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 130) << read_text_or_empty((root_ / "err.log").string());
  for (const auto& ns : list_namespaces()) EXPECT_FALSE(ours(ns, lab.pid())) << ns << " is left behind";
  auto st = nlohmann::json::parse(read_text((root_ / "results" / "nsbox" / "cut" / "sitting.json").string()));
  EXPECT_EQ(st["interrupted"], true);
  EXPECT_THAT(read_text_or_empty((root_ / "out.log").string()), HasSubstr("--resume"));
}
