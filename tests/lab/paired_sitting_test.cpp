// Paired sittings end to end (label lab): two fake flavours of known cost,
// the audit on, on a "host" whose state a thread flips on a fixed schedule
// (each order costs twice as much while a flag file exists). In rounds, the
// slower fake comes out `slower` with an interval above 1, and the same
// binary under two names comes out `level`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kite/lab/util.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Creates and removes `flag` every `period` until destroyed: the host's slow and fast states.
class DriftingHost {
 public:
  DriftingHost(fs::path flag, std::chrono::milliseconds period)
      : flag_(std::move(flag)), thread_([this, period] {
          bool slow = false;
          while (!stop_) {
            slow = !slow;
            if (slow)
              std::ofstream(flag_) << "slow\n";
            else
              fs::remove(flag_);
            for (auto t = std::chrono::milliseconds(0); t < period && !stop_; t += std::chrono::milliseconds(10))
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~DriftingHost() {
    stop_ = true;
    thread_.join();
    fs::remove(flag_);
  }

 private:
  fs::path flag_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void write_fake(const fs::path& dir, const std::string& name, int order_us, const fs::path& flag) {
  std::ofstream(dir / (name + ".toml"))
      << "name = '" << name << "'\nbinary = '" KITE_FAKE_FLAVOUR "'\n"
      << "args = ['--model', '{model}', '--transport', '{transport}', '--bind', '{bind}', '--port', '{port}',"
         " '--cores', '{cores}', '--ready-file', '{ready_file}', '--order-us', '"
      << order_us << "', '--slow-flag', '" << flag.string() << "']\n"
      << "models = ['single']\ntransports = ['kernel']\n";
}

json paired_member(const std::string& b_name, int b_order_us, const std::string& sitting) {
  const fs::path root = fs::temp_directory_path() / ("kite-paired-" + std::to_string(getpid()) + "-" + sitting);
  fs::remove_all(root);
  fs::create_directories(root / "flavours");
  const fs::path flag = root / "slow-state";
  write_fake(root / "flavours", "cpp", 200, flag);
  write_fake(root / "flavours", b_name, b_order_us, flag);
  SittingOptions o = test::test_sitting_options(test::env_or("KITE_SOURCE_DIR", "."), root,
                                                "flavours = ['cpp', '" + b_name +
                                                    "']\ntransports = ['kernel']\nmodels = ['single']\n"
                                                    "loops = ['closed']\nidle = 'block'\npairing = 'rounds'\n"
                                                    "[rounds]\nmin_rounds = 8\nmax_rounds = 14\nseed = 5\n",
                                                sitting);
  o.matrix.runs = 1;
  o.matrix.warmup_s = 0.1;
  o.matrix.duration_s = 0.3;
  o.audit = true;
  o.flavours_dir = (root / "flavours").string();
  o.client_binary = KITE_BENCH_ROUNDTRIP;
  SittingResult r;
  {
    DriftingHost host(flag, std::chrono::milliseconds(4000));
    r = run_sitting(o);
  }
  EXPECT_EQ(r.exit_code, 0) << r.message;
  const json stamp = json::parse(read_text(r.dir + "/sitting.json"));
  EXPECT_EQ(stamp["method"]["version"], "v2");
  EXPECT_EQ(stamp["pairing"]["seed"], 5);
  const json j = json::parse(read_text(r.dir + "/" + b_name + "_kernel_single_closed.json"));
  EXPECT_EQ(j["method"], "v2");
  EXPECT_EQ(j["pairing"]["mode"], "rounds");
  EXPECT_GE(j["pairing"]["rounds"].get<int>(), 8);
  EXPECT_EQ(j["pairing"]["orders"].size(), j["pairing"]["rounds"].get<std::size_t>());
  const json ref = json::parse(read_text(r.dir + "/cpp_kernel_single_closed.json"));
  EXPECT_TRUE(ref["pairing"]["ratio"].is_null()) << "the reference has no ratio";
  return j;
}

TEST(PairedSitting, theSlowerFakeComesOutSlowerWhileTheHostDrifts) {
  const json j = paired_member("slower", 280, "slower");
  const json& p = j["pairing"];
  EXPECT_EQ(p["verdict"], "slower") << p.dump();
  EXPECT_GT(p["ratio"]["low"].get<double>(), 1.0) << p.dump();
  EXPECT_NEAR(p["ratio"]["median"].get<double>(), 280.0 / 200.0, 0.2) << p.dump();
  if (!HasFailure()) fs::remove_all(fs::temp_directory_path() / ("kite-paired-" + std::to_string(getpid()) + "-slower"));
}

TEST(PairedSitting, oneBinaryUnderTwoNamesComesOutLevel) {
  const json j = paired_member("again", 200, "a-a");
  EXPECT_EQ(j["pairing"]["verdict"], "level") << j["pairing"].dump();
  if (!HasFailure()) fs::remove_all(fs::temp_directory_path() / ("kite-paired-" + std::to_string(getpid()) + "-a-a"));
}

}  // namespace
