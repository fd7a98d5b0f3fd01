// The result schema (lab/src/result_schema.hpp): every record reads back what
// it writes; older results, without the keys later sittings added, read with
// those keys absent; a key of the wrong type is an error naming it.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result_schema.hpp"

using namespace kite::lab;
using json = nlohmann::json;

namespace {

PairingRecord member_record() {
  PairingRecord p;
  p.mode = "rounds";
  p.group = "kernel/single/closed";
  p.on = "flavour";
  p.members = {"cpp", "raw"};
  p.reference = "cpp";
  p.seed = 7;
  p.rounds = 3;
  p.stop = "target";
  p.target = 0.05;
  p.resolution = 0.02;
  p.width_reached = 0.031;
  p.runs = 9;
  p.budget_runs = 90;
  p.bracketed = true;
  p.orders = {{0, 1, 0}, {0, 1, 0}, {0, 1, 0}};
  p.p50_per_round = {{12.5}, std::nullopt, {12.75}};
  p.ratios = {0.98, 0.99};
  p.ratio = RatioRecord{0.985, 0.97, 0.995};
  p.judged = true;
  p.verdict = "faster";
  p.refused_rounds = {"round 2: audit"};
  p.unsteady_rounds = {3};
  return p;
}

// What bench/src/result.cpp writes as a result's summary, open loop.
json bench_summary() {
  const json latency = {{"p50", 10.5},  {"p90", 11.0}, {"p99", 14.25},
                        {"p999", 20.0}, {"max", 31.0}, {"mean_max", 29.5}};
  return {{"service", latency},
          {"response", latency},
          {"cv", {{"p50", 0.01}, {"p99", 0.04}}},
          {"achieved_rate", 9990.5},
          {"count", 29971},
          {"errors", 0},
          {"max_in_flight", 3},
          {"cap_hits", 0},
          {"client", {{"empty_share", 0.5}, {"busy_share", 0.25}, {"busy_us_per_order", 1.5}, {"lateness", latency}}}};
}

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const ResultSchemaError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(ResultSchemaTest, pairingRecordReadsBackWhatItWrites) {
  const PairingRecord member = member_record();
  EXPECT_EQ(pairing_record_from_json(to_json(member)), member);
  PairingRecord reference = member_record();
  reference.ratio.reset();
  reference.ratios.reset();
  reference.judged = false;
  reference.verdict.reset();
  EXPECT_EQ(pairing_record_from_json(to_json(reference)), reference);
  PairingRecord alone;
  alone.mode = "sequential";
  alone.reason = "the only flavour of its group that ran";
  EXPECT_EQ(pairing_record_from_json(to_json(alone)), alone);
  EXPECT_EQ(to_json(alone), json({{"mode", "sequential"}, {"reason", "the only flavour of its group that ran"}}));
}

TEST(ResultSchemaTest, pairingRecordWritesNoneAsTheSittingsAlwaysHave) {
  PairingRecord reference = member_record();
  reference.ratio.reset();
  reference.ratios.reset();
  reference.judged = false;
  reference.verdict.reset();
  const json r = to_json(reference);
  EXPECT_TRUE(r.contains("ratio") && r["ratio"].is_null()) << "the reference's ratio is null";
  EXPECT_FALSE(r.contains("verdict")) << "the reference has no verdict against itself";
  EXPECT_FALSE(r.contains("ratios"));
  PairingRecord unmeasured = reference;
  unmeasured.judged = true;  // a member without a round beside a measured reference
  const json u = to_json(unmeasured);
  EXPECT_TRUE(u.contains("verdict") && u["verdict"].is_null());
  EXPECT_EQ(to_json(member_record())["p50_per_round"], json::parse("[12.5, null, 12.75]"));
  EXPECT_EQ(to_json(member_record())["ratio"], json({{"median", 0.985}, {"low", 0.97}, {"high", 0.995}}));
}

TEST(ResultSchemaTest, olderPairingRecordReadsWithLaterKeysAbsent) {
  // A v2 result from before pair_on, the run budget, brackets and refused rounds.
  const json old = {{"mode", "rounds"},
                    {"group", "kernel/single/closed"},
                    {"members", {"cpp", "raw"}},
                    {"reference", "cpp"},
                    {"seed", 3},
                    {"rounds", 8},
                    {"stop", "target"},
                    {"target", 0.05},
                    {"ratio", nullptr},
                    {"verdict", nullptr}};
  const PairingRecord p = pairing_record_from_json(old);
  EXPECT_FALSE(p.on || p.runs || p.budget_runs || p.bracketed || p.refused_rounds || p.unsteady_rounds || p.orders ||
               p.ratios);
  EXPECT_FALSE(p.ratio.has_value());
  EXPECT_TRUE(p.judged);
  EXPECT_FALSE(p.verdict.has_value());
  EXPECT_EQ(p.members, (std::vector<std::string>{"cpp", "raw"}));
  EXPECT_EQ(p.seed, 3u);
}

TEST(ResultSchemaTest, summaryReadsAndWritesWhatBenchWrites) {
  const SummaryRecord s = summary_record_from_json(bench_summary());
  EXPECT_EQ(to_json(s), bench_summary());
  EXPECT_EQ(summary_record_from_json(to_json(s)), s);
  ASSERT_NE(s.view("response"), nullptr);
  EXPECT_EQ(s.view("response")->p99, 14.25);
  EXPECT_EQ(s.count, 29971);
  EXPECT_EQ(s.lateness->mean_max, 29.5);
}

TEST(ResultSchemaTest, closedLoopSummaryHasNoResponse) {
  json closed = bench_summary();
  closed.erase("response");
  closed["client"].erase("lateness");
  const SummaryRecord s = summary_record_from_json(closed);
  EXPECT_EQ(s.view("response"), nullptr);
  EXPECT_FALSE(s.lateness.has_value());
  EXPECT_EQ(s.view("service")->p50, 10.5);
  EXPECT_EQ(s.view("nonsense"), nullptr);
  EXPECT_EQ(to_json(s), closed);
}

TEST(ResultSchemaTest, resultWithoutPairingOrSummaryReadsEmpty) {
  // A v1 result has no pairing; a refused one has its figures withheld.
  const json v1 = {{"schema", 1}, {"summary", bench_summary()}, {"verdict", "ok"}};
  EXPECT_FALSE(result_record_from_json(v1).pairing.has_value());
  const json refused = {{"schema", 1}, {"withheld", {{"summary", bench_summary()}}}, {"verdict", "refused"}};
  const ResultRecord r = result_record_from_json(refused);
  EXPECT_EQ(r.summary, SummaryRecord{});
  EXPECT_EQ(r.summary.view("service"), nullptr);
  EXPECT_EQ(summary_of(StoredResult{}), SummaryRecord{});
  EXPECT_EQ(pairing_of(StoredResult{}), nullptr);
}

TEST(ResultSchemaTest, wrongTypeIsAnErrorNamingTheKey) {
  json p = to_json(member_record());
  p["seed"] = "seven";
  EXPECT_EQ(error_of([&] { pairing_record_from_json(p); }), "pairing.seed: must be a non-negative integer, not string");
  p = to_json(member_record());
  p["ratio"]["low"] = "0.9";
  EXPECT_EQ(error_of([&] { pairing_record_from_json(p); }), "pairing.ratio.low: must be a number, not string");
  p = to_json(member_record());
  p["orders"][1][2] = -1;
  EXPECT_EQ(error_of([&] { pairing_record_from_json(p); }), "pairing.orders[1][2]: must be an index, not number");
  p = to_json(member_record());
  p.erase("mode");
  EXPECT_EQ(error_of([&] { pairing_record_from_json(p); }), "pairing.mode: missing");
  json s = bench_summary();
  s["service"]["p99"] = true;
  EXPECT_EQ(error_of([&] { summary_record_from_json(s); }), "summary.service.p99: must be a number, not boolean");
  s = bench_summary();
  s["client"]["lateness"] = 3;
  EXPECT_EQ(error_of([&] { summary_record_from_json(s); }), "summary.client.lateness: must be an object, not number");
  EXPECT_EQ(error_of([&] {
              result_record_from_json({{"pairing", {{"mode", 1}}}});
            }),
            "pairing.mode: must be a string, not number");
}

TEST(ResultSchemaTest, sittingPairingReadsBackWhatItWrites) {
  SittingPairingRecord p;
  p.reference = "cpp";
  p.target = 0.05;
  p.resolution = 0.02;
  p.min_rounds = 8;
  p.max_rounds = 30;
  p.budget_rounds = 30;
  p.seed = 0x9e3779b97f4a7c15ull;  // a drawn seed uses all 64 bits
  EXPECT_EQ(sitting_pairing_record_from_json(to_json(p)), p);
  EXPECT_FALSE(sitting_pairing_record_from_json({{"mode", "rounds"}}).seed.has_value());
  EXPECT_EQ(error_of([&] {
              sitting_pairing_record_from_json({{"seed", -3}});
            }),
            "sitting.json pairing.seed: must be a non-negative integer, not number");
}

namespace {

SweepRecord sessions_sweep() {
  SweepRecord d;
  d.flavour = "cpp";
  d.series = "sessions";
  d.method = "v1";
  d.transport = "kernel";
  d.model = "mono";
  d.settings = {{"rate", 20000}, {"runs", 2}};
  SweepStepRecord ok;
  ok.step = 1;
  ok.file = "step-01.json";
  ok.rate = 20000;
  ok.sessions = 8;
  ok.state = "measured";
  ok.verdict = "ok";
  ok.response = LatencyRecord{10.0, std::nullopt, 20.0, 30.0, 40.0, std::nullopt};
  ok.service = ok.response;
  ok.achieved_rate = 19990.0;
  ok.max_in_flight = 3;
  ok.cap_hits = 0;
  ok.busy_share = 0.5;
  ok.server = {{"rss_kb", 10240}, {"cpu_us_per_order", 2.5}};
  SweepStepRecord refused = ok;
  refused.step = 2;
  refused.sessions = 32;
  refused.state = "refused";
  refused.verdict.reset();
  refused.reason = "audit: a foreign thread";
  refused.response = refused.service = refused.lateness = std::nullopt;
  refused.achieved_rate = refused.busy_share = std::nullopt;
  refused.max_in_flight = refused.cap_hits = std::nullopt;
  refused.server = nullptr;
  d.steps = {ok, refused};
  d.knee = SweepMarkRecord{8, 1, ok.response, std::nullopt};
  d.memory_per_session_bytes = 51200;
  return d;
}

}  // namespace

TEST(ResultSchemaTest, sweepReadsBackWhatItWrites) {
  const SweepRecord d = sessions_sweep();
  const json j = to_json(d);
  EXPECT_EQ(sweep_record_from_json(j), d);
  EXPECT_TRUE(j["saturated_from"].is_null()) << "none is written null, as sweep.json always had it";
  EXPECT_TRUE(j["steps"][0]["limit"].is_null());
  EXPECT_FALSE(j["steps"][1].contains("limit")) << "an unmeasured step has no figures";
  EXPECT_EQ(j["knee"], json({{"sessions", 8}, {"step", 1}, {"response", to_json(*d.steps[0].response)}}));
  EXPECT_EQ(d.steps[0].server_rss_kb(), 10240.0);
  EXPECT_FALSE(d.steps[1].server_cpu_us_per_order().has_value());
}

TEST(ResultSchemaTest, sweepWrongTypeNamesTheStep) {
  json j = to_json(sessions_sweep());
  j["steps"][1]["rate"] = "fast";
  EXPECT_EQ(error_of([&] { sweep_record_from_json(j); }), "sweep.json.steps[1].rate: must be a number, not string");
}
