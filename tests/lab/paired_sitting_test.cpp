// Paired sittings end to end (label lab): fake flavours of known cost, the
// audit on, on a "host" whose state a thread flips on a fixed schedule (each
// order costs twice as much while a flag file exists). With five fixed seeds
// (each a phase of the schedule and the rounds' order), sequential mode ranks
// the fakes wrongly for at least one seed, paired mode ranks them rightly for
// all five; one binary under two names comes out `level`.
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

// The host's slow and fast states: the flag exists while ((t + phase) / half) is odd.
class DriftingHost {
 public:
  DriftingHost(fs::path flag, std::chrono::milliseconds half, std::chrono::milliseconds phase)
      : flag_(std::move(flag)), thread_([this, half, phase] {
          const auto t0 = std::chrono::steady_clock::now() - phase;
          bool slow = false;
          fs::remove(flag_);
          while (!stop_) {
            const bool now = (std::chrono::steady_clock::now() - t0) / half % 2 == 1;
            if (now != slow) {
              slow = now;
              if (slow)
                std::ofstream(flag_) << "slow\n";
              else
                fs::remove(flag_);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
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

struct Fake {
  std::string name;
  int order_us;
};

fs::path root_of(const std::string& sitting) {
  return fs::temp_directory_path() / ("kite-paired-" + std::to_string(getpid()) + "-" + sitting);
}

// One sitting of `fakes` (the first is the reference, cpp) while the host
// drifts with half-period `half` from `phase`. Paired when `paired`.
std::string sit(const std::vector<Fake>& fakes, bool paired, std::uint64_t seed, std::chrono::milliseconds half,
                std::chrono::milliseconds phase, const std::string& sitting) {
  const fs::path root = root_of(sitting);
  fs::remove_all(root);
  fs::create_directories(root / "flavours");
  const fs::path flag = root / "slow-state";
  std::string names;
  for (const auto& f : fakes) {
    write_fake(root / "flavours", f.name, f.order_us, flag);
    names += (names.empty() ? "'" : ", '") + f.name + "'";
  }
  std::string body =
      "flavours = [" + names + "]\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\nidle = 'block'\n";
  if (paired)
    body += "pairing = 'rounds'\n[rounds]\nmin_rounds = 8\nmax_rounds = 10\nseed = " + std::to_string(seed) + "\n";
  body += "[audit]\ninterval_s = 0.1\n";  // a sample or more inside each short run
  SittingOptions o = test::test_sitting_options(test::env_or("KITE_SOURCE_DIR", "."), root, body, sitting);
  // Sequential cells are a few runs each; a paired run is one short run with its own client.
  o.matrix.runs = paired ? 1 : 4;
  o.matrix.warmup_s = 0.1;
  o.matrix.duration_s = paired ? 0.2 : 0.4;
  o.audit = true;
  o.flavours_dir = (root / "flavours").string();
  o.client_binary = KITE_BENCH_ROUNDTRIP;
  SittingResult r;
  {
    DriftingHost host(flag, half, phase);
    r = run_sitting(o);
  }
  EXPECT_EQ(r.exit_code, 0) << r.message;
  return r.dir;
}

json result(const std::string& dir, const std::string& flavour) {
  return json::parse(read_text(dir + "/" + flavour + "_kernel_single_closed.json"));
}

// A sequential cell's service p50, withheld or not: a host daemon (here DAMON's
// kdamond) sometimes gets a cell refused, and the ranking is the question.
double service_p50(const json& j) {
  const json& s = j.contains("summary") ? j["summary"] : j.at("withheld").at("summary");
  return s["service"]["p50"].get<double>();
}

// Three fakes of known cost: b costs 1.3 and c 1.7 times the reference.
const std::vector<Fake> kFakes = {{"cpp", 200}, {"b", 260}, {"c", 340}};
constexpr std::chrono::milliseconds kHalf{4000};  // slower than a round, not than a sequential cell
constexpr std::uint64_t kSeeds[] = {11, 23, 37, 41, 59};  // S1-S5

TEST(PairedSitting, sequentialMisranksForSomeSeedPairedRanksRightForEverySeed) {
  int sequential_wrong = 0;
  for (std::size_t i = 0; i < std::size(kSeeds); ++i) {
    const auto phase = kHalf * 2 * static_cast<int>(i) / static_cast<int>(std::size(kSeeds));
    const std::string tag = "s" + std::to_string(i + 1);
    const std::string seq = sit(kFakes, false, kSeeds[i], kHalf, phase, tag + "-sequential");
    const double p_cpp = service_p50(result(seq, "cpp"));
    const double p_b = service_p50(result(seq, "b"));
    const double p_c = service_p50(result(seq, "c"));
    const bool right = p_cpp < p_b && p_b < p_c;
    sequential_wrong += !right;
    std::printf("S%zu sequential p50 cpp %.0f b %.0f c %.0f: %s\n", i + 1, p_cpp, p_b, p_c, right ? "right" : "wrong");

    const std::string pair = sit(kFakes, true, kSeeds[i], kHalf, phase, tag + "-paired");
    const json b = result(pair, "b")["pairing"], c = result(pair, "c")["pairing"];
    EXPECT_EQ(result(pair, "cpp")["pairing"]["seed"], kSeeds[i]);
    EXPECT_EQ(b["verdict"], "slower") << "S" << i + 1 << ": " << b.dump();
    EXPECT_EQ(c["verdict"], "slower") << "S" << i + 1 << ": " << c.dump();
    EXPECT_LT(b["ratio"]["median"].get<double>(), c["ratio"]["median"].get<double>()) << "S" << i + 1;
    EXPECT_GT(b["ratio"]["low"].get<double>(), 1.0) << "S" << i + 1;
    // A state flip inside a bracket leaves that ratio out (unsteady) rather than in at about 0.9.
    ASSERT_TRUE(b.contains("unsteady_rounds") && c.contains("unsteady_rounds")) << b.dump();
    std::printf("S%zu paired b %.3f [%.3f, %.3f] c %.3f [%.3f, %.3f] in %d rounds, unsteady b %zu c %zu\n", i + 1,
                b["ratio"]["median"].get<double>(), b["ratio"]["low"].get<double>(), b["ratio"]["high"].get<double>(),
                c["ratio"]["median"].get<double>(), c["ratio"]["low"].get<double>(), c["ratio"]["high"].get<double>(),
                b["rounds"].get<int>(), b["unsteady_rounds"].size(), c["unsteady_rounds"].size());
    if (!HasFailure()) {
      fs::remove_all(root_of(tag + "-sequential"));
      fs::remove_all(root_of(tag + "-paired"));
    }
  }
  EXPECT_GE(sequential_wrong, 1) << "the drifting host should mislead sequential mode for at least one seed";
}

TEST(PairedSitting, oneBinaryUnderTwoNamesComesOutLevel) {
  const std::string dir = sit({{"cpp", 200}, {"again", 200}}, true, 5, kHalf, kHalf / 3, "a-a");
  const json stamp = json::parse(read_text(dir + "/sitting.json"));
  EXPECT_EQ(stamp["method"]["version"], "v2");
  EXPECT_EQ(stamp["pairing"]["seed"], 5);
  const json j = result(dir, "again");
  EXPECT_EQ(j["method"], "v2");
  EXPECT_EQ(j["pairing"]["mode"], "rounds");
  EXPECT_GE(j["pairing"]["rounds"].get<int>(), 8);
  EXPECT_EQ(j["pairing"]["orders"].size(), j["pairing"]["rounds"].get<std::size_t>());
  EXPECT_TRUE(result(dir, "cpp")["pairing"]["ratio"].is_null()) << "the reference has no ratio";
  EXPECT_EQ(j["pairing"]["verdict"], "level") << j["pairing"].dump();
  if (!HasFailure()) fs::remove_all(root_of("a-a"));
}

}  // namespace
