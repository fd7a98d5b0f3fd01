// Load sweeps: a series' sweep.json from its steps (knee, limit, memory per
// session), the options a sweep refuses, and (SlowServer, label lab) a real
// rate sweep against the fake flavour made slow, whose knee must sit where
// its capacity puts it.
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

// A measured step's result as the client and the lab write it (the figures a sweep reads).
StepResult step(int rate, int sessions, const std::string& verdict, double resp_p50, double serv_p50, double late_p50,
                long rss_kb = 10000) {
  StepResult s;
  s.step.cell = {"fake", "kernel", "mono", "open"};
  s.step.rate = rate;
  s.step.sessions = sessions;
  s.file = "sweep/fake/rate/step.json";
  s.outcome.cell = s.step.cell;
  s.outcome.state = CellState::measured;
  s.outcome.verdict = verdict;
  s.result = {
      {"verdict", verdict},
      {"verdict_reasons", json::array()},
      {"client_threads", 1},
      {"summary",
       {{"response", {{"p50", resp_p50}, {"p99", resp_p50 * 2}, {"p999", resp_p50 * 3}, {"max", resp_p50 * 4}}},
        {"service", {{"p50", serv_p50}, {"p99", serv_p50 * 2}, {"p999", serv_p50 * 3}, {"max", serv_p50 * 4}}},
        {"achieved_rate", rate},
        {"max_in_flight", 3},
        {"cap_hits", 0},
        {"client", {{"busy_share", 0.5}, {"lateness", {{"p50", late_p50}, {"p99", late_p50}, {"max", late_p50}}}}}}},
      {"server", {{"rss_kb", rss_kb}, {"hwm_kb", rss_kb}, {"cpu_s", 0.1}, {"cpu_us_per_order", 2.0}}}};
  return s;
}

TEST(SweepDocument, theKneeIsTheHighestStepNotSaturatedWhateverTheOrderTheyRan) {
  const std::vector<StepResult> steps = {step(5000, 32, "ok", 10, 9, 0.5), step(10000, 32, "partial", 11, 9, 0.5),
                                         step(20000, 32, "saturated", 900, 800, 1), step(15000, 32, "ok", 12, 10, 0.6),
                                         step(17500, 32, "saturated", 400, 350, 1)};
  const json d = sweep_document("fake", "rate", steps, {{"sessions", 32}});
  ASSERT_TRUE(d["knee"].is_object());
  EXPECT_EQ(d["knee"]["rate"], 15000);
  EXPECT_EQ(d["knee"]["step"], 4);
  EXPECT_EQ(d["saturated_from"]["rate"], 17500) << "the lowest saturated step above the knee";
  EXPECT_EQ(d["saturated_from"]["limit"], "server");
  ASSERT_EQ(d["steps"].size(), 5u);
  const json& s3 = d["steps"][2];
  EXPECT_EQ(s3["response"]["p999"], 2700);
  EXPECT_EQ(s3["service"]["p50"], 800);
  EXPECT_EQ(s3["server"]["cpu_us_per_order"], 2.0);
  EXPECT_EQ(s3["limit"], "server");
  EXPECT_TRUE(d["steps"][0]["limit"].is_null()) << "an unsaturated step has no limit";
  EXPECT_FALSE(d.contains("memory_per_session_bytes")) << "memory per session belongs to the sessions series";
}

TEST(SweepDocument, aSaturatedStepWhoseClientFellBehindSaysTheClientWasTheLimit) {
  // Response 500 us over service 20 us, and the client took up its slots 450 us late: its own schedule slipped.
  const json late = step(40000, 32, "saturated", 500, 20, 450).result;
  EXPECT_EQ(step_limit(late), "client");
  // Same response, but the slots were taken up on time: the orders waited on the server side (cap, full socket).
  EXPECT_EQ(step_limit(step(40000, 32, "saturated", 500, 20, 2).result), "server");
  EXPECT_EQ(step_limit(step(40000, 32, "ok", 20, 19, 2).result), "");
  const json d = sweep_document("fake", "rate",
                                {step(20000, 32, "ok", 15, 14, 1), step(40000, 32, "saturated", 500, 20, 450)}, {});
  EXPECT_EQ(d["saturated_from"]["limit"], "client");
}

TEST(SweepDocument, noUnsaturatedStepMeansNoKnee) {
  const json d = sweep_document("fake", "rate", {step(5000, 32, "saturated", 90, 10, 1)}, {});
  EXPECT_TRUE(d["knee"].is_null());
  EXPECT_EQ(d["saturated_from"]["rate"], 5000);
}

TEST(SweepDocument, memoryPerSessionIsTheSlopeOfResidentMemoryOverSessions) {
  // 10 MB plus 50 kB per session, on every step: 51,200 bytes per session.
  std::vector<StepResult> steps;
  for (int n : {1, 8, 32, 128}) steps.push_back(step(20000, n, "ok", 15, 14, 1, 10000 + 50L * n));
  const json d = sweep_document("fake", "sessions", steps, {{"rate", 20000}});
  ASSERT_TRUE(d["memory_per_session_bytes"].is_number());
  EXPECT_EQ(d["memory_per_session_bytes"].get<double>(), 51200);
  EXPECT_EQ(d["knee"]["sessions"], 128);
  EXPECT_NE(sweep_table({"fake", "sessions", "", d}).find("server memory per session: 51200 bytes"), std::string::npos);
}

TEST(SweepDocument, aStepThatWasNotMeasuredKeepsItsStateAndNoFigures) {
  StepResult s = step(5000, 32, "ok", 10, 9, 1);
  s.outcome.state = CellState::refused;
  s.outcome.verdict = "refused";
  s.outcome.reason = "off-core";
  s.result = {{"verdict", "refused"}, {"withheld", {{"client_verdict", "ok"}}}};
  const json d = sweep_document("fake", "rate", {s}, {});
  EXPECT_EQ(d["steps"][0]["state"], "refused");
  EXPECT_EQ(d["steps"][0]["reason"], "off-core");
  EXPECT_FALSE(d["steps"][0].contains("response"));
  EXPECT_TRUE(d["knee"].is_null()) << "a refused step publishes no figures, so it is no knee";
}

std::string env_or_source() { return test::env_or("KITE_SOURCE_DIR", "."); }

SweepOptions options(const fs::path& root) {
  SweepOptions o;
  o.sitting = test::test_sitting_options(env_or_source(), root,
                                         "flavours = ['cpp']\ntransports = ['kernel']\n"
                                         "models = ['single']\nloops = ['open']\n",
                                         "sweep");
  return o;
}

TEST(SweepPlan, refusesWhatCannotBeSwept) {
  const fs::path root = fs::temp_directory_path() / ("kite-sweep-plan-" + std::to_string(getpid()));
  std::vector<std::string> notes;
  auto refused = [&](auto change, const std::string& says) {
    SweepOptions o = options(root);
    o.flavours = {"cpp"};
    change(o);
    try {
      sweep_plan(o, notes);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused([](SweepOptions& o) { o.flavours.clear(); }, "--flavours");
  refused([](SweepOptions& o) { o.series = {"latency"}; }, "'latency' is no series");
  refused([](SweepOptions& o) { o.transport = "carrier-pigeon"; }, "--transport");
  refused([](SweepOptions& o) { o.model = "swarm"; }, "--model");
  refused([](SweepOptions& o) { o.start_rate = 9000, o.max_rate = 8000; }, "above --max-rate");
  refused([](SweepOptions& o) { o.model = "single", o.series = {"sessions"}; }, "one session");
  refused([](SweepOptions& o) { o.session_counts = {0}; }, "at least 1");
  refused([](SweepOptions& o) { o.session_counts = {2000000}; }, "open-file limit");
}

TEST(SweepPlan, fillsTheDefaultsAndLeavesOutCountsOverTheOpenFileLimit) {
  const fs::path root = fs::temp_directory_path() / ("kite-sweep-plan-" + std::to_string(getpid()));
  SweepOptions o = options(root);
  o.flavours = {"cpp"};
  o.model = "mono";
  o.session_counts = {1, 8, 1900000};
  std::vector<std::string> notes;
  sweep_plan(o, notes);
  EXPECT_EQ(o.start_rate, 5000);
  EXPECT_EQ(o.bisections, 3);
  EXPECT_EQ(o.client_threads, 1) << "testbox has one client core";
  EXPECT_EQ(o.session_counts, (std::vector<int>{1, 8}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("1900000 sessions left out"), std::string::npos) << notes[0];
  EXPECT_EQ(o.sitting.matrix.name, "sweep");
  EXPECT_EQ(o.sitting.matrix.loops, (std::vector<std::string>{"open"}));
}

}  // namespace
