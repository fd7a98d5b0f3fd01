// A rate sweep against a server of known capacity finds its knee there: the
// fake flavour (fake_flavour.cpp) with --order-us 250 answers at most 4,000
// orders/s. The real client measures it; the assertions are on rates only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kite/lab/sweep.hpp"
#include "kite/lab/util.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kOrderUs = 250;
constexpr int kCapacity = 1000000 / kOrderUs;

// The steps, one line each, for a failure's message.
std::string steps_text(const json& d) {
  std::string out;
  for (const auto& st : d["steps"])
    out += st["rate"].dump() + "/s " + st.value("verdict", json()).dump() + " achieved " +
           st.value("achieved_rate", json()).dump() + " " + st.value("verdict_reasons", json()).dump() + "\n";
  return out;
}

TEST(SlowServer, aRateSweepFindsTheKneeWhereTheServersCapacityPutsIt) {
  const fs::path root = fs::temp_directory_path() / ("kite-sweep-knee-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "flavours");
  std::ofstream(root / "flavours" / "slow.toml")
      << "name = 'slow'\nbinary = '" KITE_FAKE_FLAVOUR "'\n"
      << "args = ['--model', '{model}', '--transport', '{transport}', '--bind', '{bind}', '--port', '{port}',"
         " '--cores', '{cores}', '--ready-file', '{ready_file}', '--order-us', '"
      << kOrderUs << "']\n"
      << "models = ['single']\ntransports = ['kernel']\n";
  SweepOptions o;
  o.sitting = test::test_sitting_options(test::env_or("KITE_SOURCE_DIR", "."), root,
                                         "flavours = ['slow']\ntransports = ['kernel']\nmodels = ['single']\n"
                                         "loops = ['open']\nidle = 'block'\n",
                                         "knee");
  o.sitting.flavours_dir = (root / "flavours").string();
  o.sitting.client_binary = KITE_BENCH_ROUNDTRIP;
  o.flavours = {"slow"};
  o.model = "single";
  o.series = {"rate"};
  o.start_rate = 1000;
  o.bisections = 2;
  o.warmup_s = 0.2;
  o.duration_s = 0.3;
  o.runs = 3;
  const SweepResult r = run_sweep(o);
  ASSERT_EQ(r.sitting.exit_code, 0) << r.sitting.message;
  ASSERT_EQ(r.series.size(), 1u);
  const json& d = r.series[0].doc;
  ASSERT_TRUE(d["knee"].is_object()) << steps_text(d);
  ASSERT_TRUE(d["saturated_from"].is_object()) << steps_text(d);
  const int knee = d["knee"]["rate"].get<int>();
  const int saturated = d["saturated_from"]["rate"].get<int>();
  // Doubling from 1,000/s then bisecting twice (three runs a step: the median
  // is robust to one run disturbed by other work on the machine): the knee is within a factor
  // of two under the capacity, and no rate over the capacity passes.
  EXPECT_GE(knee, kCapacity / 2) << steps_text(d);
  EXPECT_LE(knee, kCapacity * 11 / 10) << steps_text(d);
  EXPECT_LE(saturated, kCapacity * 2) << steps_text(d);
  EXPECT_GT(saturated, knee);
  EXPECT_TRUE(fs::exists(fs::path(r.sitting.dir) / "sweep/slow/rate/sweep.json"));
  EXPECT_TRUE(fs::exists(fs::path(r.sitting.dir) / "sweep/slow/rate/step-01.json"));
  for (const auto& st : d["steps"]) {
    EXPECT_EQ(st["state"], "measured") << st.dump();
    EXPECT_TRUE(st["server"]["rss_kb"].is_number()) << "the server's memory is read from /proc";
  }
  const json stamp = json::parse(read_text(r.sitting.dir + "/sitting.json"));
  EXPECT_EQ(stamp["kind"], "sweep");
  EXPECT_EQ(stamp["sweep"]["files"]["slow/rate"], "sweep/slow/rate/sweep.json");
  fs::remove_all(root);
}

}  // namespace
