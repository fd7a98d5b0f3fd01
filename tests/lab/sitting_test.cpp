// Sittings driven against a fake bench_roundtrip (tests/lab/fake_bench_roundtrip.py)
// that obeys the contract: markers, unsupported and unbuilt cells, errors and
// repeats, resume, a binary that changes, compare. The audit is off here (it
// has its own tests) so that other work on a shared machine cannot refuse cells.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kite/lab/method.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/util.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using namespace kite::lab::test;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

class Sitting : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = env_or("KITE_SOURCE_DIR", ".");
    root_ = fs::temp_directory_path() / ("kite-lab-sitting-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    place_fake_bench_roundtrip(src_, root_ / "build");
    for (const char* k : {"FAKE_BR_UNSUPPORTED", "FAKE_BR_NO_READY", "FAKE_BR_CLIENT_FAIL", "FAKE_BR_LOG",
                          "FAKE_BR_FAIL_ONCE", "FAKE_BR_MUTATE", "FAKE_BR_MUTATE_FILE"})
      unsetenv(k);
    setenv("FAKE_BR_SCALE", "0.05", 1);
  }
  void TearDown() override {
    for (const char* k : {"FAKE_BR_UNSUPPORTED", "FAKE_BR_NO_READY", "FAKE_BR_CLIENT_FAIL", "FAKE_BR_LOG",
                          "FAKE_BR_FAIL_ONCE", "FAKE_BR_MUTATE", "FAKE_BR_MUTATE_FILE"})
      unsetenv(k);
    fs::remove_all(root_);
  }
  SittingOptions options(const std::string& matrix_body, const std::string& name = "s1") {
    return test_sitting_options(src_, root_, matrix_body, name);
  }
  json cell_json(const std::string& sitting, const std::string& file) {
    return json::parse(read_text((root_ / "results" / "testbox" / sitting / file).string()));
  }
  json sitting_json(const std::string& sitting) {
    return json::parse(read_text((root_ / "results" / "testbox" / sitting / "sitting.json").string()));
  }
  // A flavour file in the test's own flavours folder; `extra` adds keys.
  void write_flavour(const std::string& name, const std::string& binary, const std::string& args,
                     const std::string& extra = "") {
    fs::create_directories(root_ / "flavours");
    std::ofstream(root_ / "flavours" / (name + ".toml"))
        << "name = '" << name << "'\nbinary = '" << binary << "'\nargs = [" << args << "]\n"
        << "models = ['single', 'mono', 'pool', 'shard']\ntransports = ['kernel']\n"
        << extra;
  }
  // A flavour served by the fake bench_roundtrip, as cpp is.
  void write_fake_br_flavour(const std::string& name, const std::string& extra = "") {
    write_flavour(name, "bench_roundtrip",
                  "'server', '--flavour', '{flavour}', '--transport', '{transport}', '--model', '{model}', "
                  "'--bind', '{bind}', '--port', '{port}', '--workers', '{workers}', '--cores', '{cores}', "
                  "'--ready-file', '{ready_file}'",
                  extra);
  }
  // A flavour served by tests/lab/fake_flavour.cpp, a real FIX server, broken as `--break` says.
  void write_fake_flavour(const std::string& name, const std::string& broken) {
    fs::create_directories(root_ / "flavours");
    std::ofstream(root_ / "flavours" / (name + ".toml"))
        << "name = '" << name << "'\nbinary = '" KITE_FAKE_FLAVOUR "'\n"
        << "args = ['--model', '{model}', '--transport', '{transport}', '--bind', '{bind}', '--port', '{port}', "
           "'--cores', '{cores}', '--busy-poll-usecs', '{busy_poll_usecs}', '--ready-file', '{ready_file}', "
           "'--break', '"
        << broken << "']\nmodels = ['single']\ntransports = ['kernel']\n";
  }
  std::vector<std::string> log_lines(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }
  std::string src_;
  fs::path root_;
};

const CellOutcome* find(const SittingResult& r, const std::string& id) {
  for (const auto& c : r.cells)
    if (c.cell.id() == id) return &c;
  return nullptr;
}

}  // namespace

// The texts are the result files' lab.state: they must not change.
TEST(CellStateTest, eachStateIsWrittenAsItsResultFileTextAndReadBack) {
  const std::pair<CellState, const char*> states[] = {
      {CellState::measured, "measured"}, {CellState::refused, "refused"}, {CellState::marked, "marked"},
      {CellState::unbuilt, "unbuilt"},   {CellState::error, "error"},     {CellState::check_failed, "check-failed"}};
  for (const auto& [state, text] : states) {
    EXPECT_EQ(to_string(state), text);
    EXPECT_EQ(cell_state_from_string(text), state) << text;
  }
  EXPECT_EQ(cell_state_from_string("unsupported"), std::nullopt);
  EXPECT_EQ(cell_state_from_string(""), std::nullopt);
}

TEST_F(Sitting, measuresMarksAndRecordsEveryCell) {
  setenv("FAKE_BR_UNSUPPORTED", "quickfix", 1);
  SittingResult r = run_sitting(
      options("flavours = ['cpp', 'quickfix']\ntransports = ['kernel', 'uring', 'vma']\nmodels = ['single', 'shard']\n"
              "loops = ['closed', 'open']\n"));
  EXPECT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 24u);
  const CellOutcome* cpp = find(r, "cpp/kernel/single/closed");
  ASSERT_NE(cpp, nullptr);
  EXPECT_EQ(cpp->state, CellState::measured) << cpp->reason;
  EXPECT_EQ(cpp->verdict, "ok");
  EXPECT_NEAR(cpp->p50, 20.0, 1.0);
  EXPECT_EQ(find(r, "quickfix/kernel/single/closed")->marker, "unsupported");
  EXPECT_EQ(find(r, "cpp/uring/single/open")->marker, "unmeasurable");
  EXPECT_EQ(find(r, "cpp/vma/shard/closed")->marker, "noshard");
  EXPECT_EQ(find(r, "quickfix/uring/shard/open")->marker, "unmeasurable");

  json j = cell_json("s1", "cpp_kernel_single_open.json");
  EXPECT_EQ(j["verdict"], "ok");
  EXPECT_TRUE(j["summary"]["response"]["p50"].is_number());
  const json& eff = j["stamp"]["effective"];
  EXPECT_EQ(eff["network"], "loopback");
  EXPECT_EQ(eff["cores"]["server"], "0");
  EXPECT_EQ(eff["cores"]["client"], "1");
  std::string client_argv = eff["client_argv"].dump();
  EXPECT_THAT(eff["server_argv"].dump(), HasSubstr("\"--acceptor-config\""));
  EXPECT_THAT(eff["acceptor_config"].get<std::string>(), HasSubstr("model = \"single\"\n"));
  EXPECT_THAT(client_argv, HasSubstr("\"--rate\",\"50000\""));
  EXPECT_THAT(client_argv, HasSubstr("\"--cell\",\"cpp/kernel/single/open\""));
  EXPECT_EQ(j["audit"]["enabled"], false);
  EXPECT_EQ(j["method"], kSequentialMethodVersion) << "every result names its method";

  json st = json::parse(read_text((root_ / "results" / "testbox" / "s1" / "sitting.json").string()));
  EXPECT_EQ(st["epoch"], epoch_of("Test CPU 9000", host_cpu_identity()));
  EXPECT_EQ(st["method"]["version"], kSequentialMethodVersion);
  EXPECT_EQ(st["cpu"]["family"], host_cpu_identity().family);
  bool hashed = false;
  for (const auto& [path, b] : st["binaries"].items())
    if (b["sha256"] == sha256_file((root_ / "build" / "bench_roundtrip").string())) hashed = true;
  EXPECT_TRUE(hashed) << st["binaries"].dump();
  EXPECT_THAT(st["machine_file"].get<std::string>(), HasSubstr("Test CPU 9000"));
  EXPECT_TRUE(st["end"].is_string());
  EXPECT_TRUE(fs::exists(root_ / "results" / "site" / "index.html"));
  std::string table = matrix_table(r.cells);
  EXPECT_THAT(table, HasSubstr("| kernel/single"));
  EXPECT_THAT(table, HasSubstr("noshard"));
}

TEST_F(Sitting, anUnbuiltFlavourIsReportedAndTheSittingStillSucceeds) {
  fs::create_directories(root_ / "flavours");
  std::ofstream(root_ / "flavours" / "ghost.toml")
      << "name='ghost'\nbinary='ghost_server_not_built'\nargs=['{port}']\n";
  SittingOptions o =
      options("flavours = ['ghost']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n");
  o.flavours_dir = (root_ / "flavours").string();
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::unbuilt);
  EXPECT_THAT(r.cells[0].reason, HasSubstr("ghost_server_not_built"));
}

TEST_F(Sitting, aServerThatNeverGetsReadyIsACellErrorAndExitCodeTwo) {
  setenv("FAKE_BR_NO_READY", "1", 1);
  SittingOptions o = options(
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"
      "[cell]\nready_timeout_s = 0.5\nattempts = 2\n");
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::error);
  EXPECT_THAT(r.cells[0].reason, HasSubstr("not ready"));
  json j = cell_json("s1", "cpp_kernel_single_closed.json");
  EXPECT_EQ(j["lab"]["attempts"].size(), 2u);
}

TEST_F(Sitting, aCellThatNeededASecondAttemptIsPartial) {
  setenv("FAKE_BR_FAIL_ONCE", (root_ / "failed-once").c_str(), 1);
  SittingResult r =
      run_sitting(options("flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"));
  EXPECT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::measured);
  EXPECT_EQ(r.cells[0].verdict, "partial");
  json j = cell_json("s1", "cpp_kernel_single_closed.json");
  EXPECT_THAT(j["verdict_reasons"].dump(), HasSubstr("repeated"));
}

TEST_F(Sitting, aClientThatCannotMeasureIsACellError) {
  setenv("FAKE_BR_CLIENT_FAIL", "1", 1);
  SittingResult r = run_sitting(options(
      "flavours = ['raw']\ntransports = ['kernel']\nmodels = ['mono']\nloops = ['open']\n[cell]\nattempts = 1\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.cells.at(0).reason, HasSubstr("logon refused"));
}

TEST_F(Sitting, resumesAnInterruptedSittingRunningOnlyTheCellsNotDone) {
  const std::string mx =
      "flavours = ['cpp', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n";
  SittingResult first = run_sitting(options(mx));
  ASSERT_EQ(first.exit_code, 0) << first.message;
  ASSERT_EQ(first.cells.size(), 4u);
  // As an interrupted sitting leaves it: two cells never written, one in error.
  fs::path dir = root_ / "results" / "testbox" / "s1";
  fs::remove(dir / "raw_kernel_single_closed.json");
  fs::remove(dir / "cpp_kernel_mono_closed.json");
  json err = cell_json("s1", "raw_kernel_mono_closed.json");
  err["lab"]["state"] = "error";
  write_text_atomic((dir / "raw_kernel_mono_closed.json").string(), err.dump());

  setenv("FAKE_BR_LOG", (root_ / "starts.log").c_str(), 1);
  SittingOptions again = options(mx);
  again.matrix = parse_matrix("flavours=['raw']\ntransports=['kernel']\nmodels=['single']\nloops=['open']\n", "other");
  SittingResult second = run_sitting(again);  // same name: resumed, with the recorded matrix
  EXPECT_EQ(second.exit_code, 0) << second.message;
  auto starts = log_lines(root_ / "starts.log");
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<std::string>{"cpp/kernel/mono", "raw/kernel/mono", "raw/kernel/single"}));
  ASSERT_EQ(second.cells.size(), 4u);
  EXPECT_TRUE(find(second, "cpp/kernel/single/closed")->reused);
  EXPECT_FALSE(find(second, "raw/kernel/single/closed")->reused);
  for (const auto& c : second.cells) EXPECT_EQ(c.state, CellState::measured) << c.cell.id();
  json st = json::parse(read_text((dir / "sitting.json").string()));
  EXPECT_EQ(st["resumed"].size(), 1u);
}

TEST_F(Sitting, refusesToResumeWithADifferentBinary) {
  const std::string mx =
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n";
  ASSERT_EQ(run_sitting(options(mx)).exit_code, 0);
  fs::remove(root_ / "results" / "testbox" / "s1" / "cpp_kernel_mono_closed.json");
  std::ofstream(root_ / "build" / "bench_roundtrip", std::ios::app) << "# rebuilt\n";
  SittingOptions o;
  o = options(mx);
  o.resume_dir = (root_ / "results" / "testbox" / "s1").string();
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.message, HasSubstr("not the binary the sitting started with"));
}

TEST_F(Sitting, aBinaryThatChangesDuringTheSittingStopsIt) {
  setenv("FAKE_BR_MUTATE", "1", 1);
  SittingResult r = run_sitting(
      options("flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.message, HasSubstr("changed during the sitting"));
  EXPECT_EQ(r.cells.size(), 1u);  // the first cell ran; the second was never started
}

TEST_F(Sitting, compareTablesAndVerdictChanges) {
  const std::string mx =
      "flavours = ['cpp', 'quickfix']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed', 'open']\n";
  ASSERT_EQ(run_sitting(options(mx, "before")).exit_code, 0);
  ASSERT_EQ(run_sitting(options(mx, "now")).exit_code, 0);
  fs::path a = root_ / "results" / "testbox" / "before", b = root_ / "results" / "testbox" / "now";
  json c = json::parse(read_text((b / "cpp_kernel_mono_closed.json").string()));
  c["verdict"] = "partial";
  write_text_atomic((b / "cpp_kernel_mono_closed.json").string(), c.dump());
  CompareResult r = compare_sittings(a.string(), b.string(), {});
  ASSERT_TRUE(r.ok) << r.text;
  EXPECT_THAT(r.text, HasSubstr("## Closed, p50 in us"));
  EXPECT_THAT(r.text, HasSubstr("## Open, service p50 in us"));
  EXPECT_THAT(r.text, HasSubstr("## Closed, p99 in us"));
  EXPECT_THAT(r.text, HasSubstr("## Open, service max in us"));
  EXPECT_THAT(r.text, HasSubstr("| Cell | Before | Now | Change | quickfix |"));
  EXPECT_THAT(r.text,
              ::testing::ContainsRegex("\\| kernel/single \\| [12][0-9]\\.[0-9][0-9] \\| [12][0-9]\\.[0-9][0-9] "
                                       "\\| [-+][0-9]+\\.[0-9]% \\| 4[0-9]\\.[0-9][0-9] \\|"));
  EXPECT_THAT(r.text, HasSubstr("## Where the quickfix column comes from"));
  EXPECT_THAT(r.text, HasSubstr("- cpp/kernel/mono/closed: ok to partial"));
}

TEST_F(Sitting, compareRefusesTwoHardwareEpochs) {
  const std::string mx = "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n";
  ASSERT_EQ(run_sitting(options(mx, "old")).exit_code, 0);
  SittingOptions o = options(mx, "new");
  std::string text = kTestMachine;
  text.replace(text.find("9000"), 4, "9500");
  o.machine = parse_machine(text, "testbox.toml");
  ASSERT_EQ(run_sitting(o).exit_code, 0);
  CompareResult r = compare_sittings((root_ / "results" / "testbox" / "old").string(),
                                     (root_ / "results" / "testbox" / "new").string(), {});
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.text, HasSubstr("refused"));
  EXPECT_THAT(r.text, HasSubstr("Test CPU 9000"));
  EXPECT_THAT(r.text, HasSubstr("Test CPU 9500"));
  EXPECT_THAT(r.text, HasSubstr("never compared"));
}

TEST_F(Sitting, aFlavourThatFailsItsCheckHasItsCellsCheckFailedAndExitCodeTwo) {
  write_fake_flavour("good", "nothing");
  write_fake_flavour("broken", "no-report");
  SittingOptions o = options(
      "flavours = ['good', 'broken']\ntransports = ['kernel']\nmodels = ['single', 'pool']\n"
      "loops = ['closed', 'open']\n");
  o.flavours_dir = (root_ / "flavours").string();
  o.check = true;
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 2) << r.message;
  EXPECT_THAT(r.message, HasSubstr("failed its check"));
  EXPECT_EQ(find(r, "good/kernel/single/closed")->state, CellState::measured)
      << find(r, "good/kernel/single/closed")->reason;
  for (const char* id : {"broken/kernel/single/closed", "broken/kernel/single/open"}) {
    const CellOutcome* b = find(r, id);
    ASSERT_NE(b, nullptr) << id;
    EXPECT_EQ(b->state, CellState::check_failed) << id;
    EXPECT_THAT(b->reason, HasSubstr("single/kernel orders"));
  }
  EXPECT_EQ(find(r, "broken/kernel/pool/closed")->marker, "unsupported");  // markers come first

  json cell = cell_json("s1", "broken_kernel_single_closed.json");
  EXPECT_EQ(cell["lab"]["state"], "check-failed");
  EXPECT_EQ(cell["lab"]["check"]["outcome"], "failed");
  EXPECT_EQ(cell_json("s1", "good_kernel_single_open.json")["lab"]["check"]["outcome"], "passed");

  json checks = sitting_json("s1")["checks"];
  EXPECT_EQ(checks["good"]["failed"], 0);
  EXPECT_GT(checks["good"]["passed"].get<int>(), 10);
  EXPECT_EQ(checks["good"]["models"], json::array({"single"}));  // the matrix's models the flavour declares
  EXPECT_EQ(checks["broken"]["failed"], 1);
  ASSERT_EQ(checks["broken"]["failing"].size(), 1u);
  EXPECT_THAT(checks["broken"]["failing"][0].get<std::string>(), HasSubstr("FAIL single/kernel orders"));
  fs::path log = root_ / "results" / "testbox" / "s1" / checks["broken"]["log"].get<std::string>();
  EXPECT_THAT(read_text(log.string()), HasSubstr("1 failed"));
}

TEST_F(Sitting, noCheckAndEachFlavoursCannotAreRecordedInEveryResult) {
  SittingResult r = run_sitting(
      options("flavours = ['cpp', 'quickfix']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"));
  EXPECT_EQ(r.exit_code, 0) << r.message;
  json st = sitting_json("s1");
  EXPECT_EQ(st["overrides"]["check"], false);
  EXPECT_EQ(st["effective"]["check"], false);
  EXPECT_EQ(st["checks"]["cpp"]["outcome"], "not run: --no-check");
  json q = cell_json("s1", "quickfix_kernel_single_closed.json");
  EXPECT_EQ(q["lab"]["check"]["enabled"], false);
  EXPECT_EQ(q["lab"]["check"]["outcome"], "not run: --no-check");
  EXPECT_THAT(q["stamp"]["effective"]["cannot"]["busy_poll"].get<std::string>(), HasSubstr("QuickFIX"));
  EXPECT_TRUE(q["stamp"]["effective"]["cannot"].contains("direct_read"));
  EXPECT_EQ(cell_json("s1", "cpp_kernel_single_closed.json")["stamp"]["effective"]["cannot"], json::object());
}

TEST_F(Sitting, anArtifactThatChangesDuringTheSittingStopsItAndAResumeRefusesIt) {
  const fs::path jar = root_ / "build" / "engine.jar";
  std::ofstream(jar) << "the engine\n";
  write_fake_br_flavour("jvm", "artifacts = ['engine.jar']\n");
  setenv("FAKE_BR_MUTATE_FILE", jar.c_str(), 1);
  SittingOptions o =
      options("flavours = ['jvm']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n");
  o.flavours_dir = (root_ / "flavours").string();
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.message, HasSubstr("engine.jar changed during the sitting"));
  EXPECT_EQ(r.cells.size(), 1u);  // the first cell ran; the second was never started
  json bins = sitting_json("s1")["binaries"];
  bool stamped = false;
  for (const auto& [path, b] : bins.items())
    if (path.find("engine.jar") != std::string::npos) {
      stamped = true;
      EXPECT_EQ(b["used_by"], json::array({"artifact:jvm"}));
      EXPECT_FALSE(b.contains("version"));  // an artifact is not run
    }
  EXPECT_TRUE(stamped) << bins.dump();

  unsetenv("FAKE_BR_MUTATE_FILE");
  SittingOptions again = o;
  again.resume_dir = (root_ / "results" / "testbox" / "s1").string();
  SittingResult resumed = run_sitting(again);
  EXPECT_EQ(resumed.exit_code, 3);
  EXPECT_THAT(resumed.message, HasSubstr("not the artifact the sitting started with"));
}

TEST_F(Sitting, aFlavourWhoseRequiredCommandIsMissingIsUnbuilt) {
  write_fake_br_flavour("needy", "requires = ['kite-no-such-toolchain']\n");
  write_fake_br_flavour("lost", "artifacts = ['lost.jar']\n");
  SittingOptions o =
      options("flavours = ['needy', 'lost']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n");
  o.flavours_dir = (root_ / "flavours").string();
  o.check = true;  // an unbuilt flavour is not checked
  SittingResult r = run_sitting(o);
  EXPECT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(find(r, "needy/kernel/single/closed")->state, CellState::unbuilt);
  EXPECT_EQ(find(r, "needy/kernel/single/closed")->reason, "needs kite-no-such-toolchain, not found on PATH");
  EXPECT_EQ(find(r, "lost/kernel/single/closed")->state, CellState::unbuilt);
  EXPECT_THAT(find(r, "lost/kernel/single/closed")->reason, HasSubstr("artifact 'lost.jar'"));
  EXPECT_EQ(sitting_json("s1")["checks"]["needy"]["outcome"], "not run: unbuilt");
}

TEST_F(Sitting, autoWorkersAreTheServerCoresAndMoreAreOversubscribed) {
  const std::string mx =
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'pool', 'shard']\nloops = ['closed']\n";
  SittingResult r = run_sitting(options(mx));  // workers = "auto" by default
  EXPECT_EQ(r.exit_code, 0) << r.message;
  for (const auto& c : r.cells) EXPECT_EQ(c.state, CellState::measured) << c.cell.id();
  json pool = cell_json("s1", "cpp_kernel_pool_closed.json");
  EXPECT_EQ(pool["lab"]["workers"], json({{"count", 1}, {"server_cores", 1}, {"from", "server cores"}}));
  EXPECT_THAT(pool["stamp"]["effective"]["acceptor_config"].get<std::string>(), HasSubstr("workers = 1\n"));
  EXPECT_FALSE(cell_json("s1", "cpp_kernel_single_closed.json")["lab"].contains("workers"));

  SittingResult over = run_sitting(options(mx + "[server]\nworkers = 2\n", "s2"));
  EXPECT_EQ(over.exit_code, 0) << over.message;
  EXPECT_EQ(find(over, "cpp/kernel/single/closed")->state, CellState::measured);
  for (const char* id : {"cpp/kernel/pool/closed", "cpp/kernel/shard/closed"}) {
    EXPECT_EQ(find(over, id)->marker, "oversubscribed") << id;
    EXPECT_THAT(find(over, id)->reason, HasSubstr("time slicing"));
  }
  json shard = cell_json("s2", "cpp_kernel_shard_closed.json");
  EXPECT_EQ(shard["lab"]["workers"], json({{"count", 2}, {"server_cores", 1}, {"from", "matrix"}}));
  EXPECT_FALSE(shard.contains("summary"));
}

// --cells: only the selected cells run and get result files, and sitting.json
// keeps the selection (a resume needs it).
TEST_F(Sitting, aCellSelectionRunsOnlyItsCellsAndIsRecorded) {
  SittingOptions o = options(
      "flavours = ['cpp', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed', 'open']\n");
  o.cells = split_cell_selection("raw/*/mono/closed,cpp/kernel/single/*");
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  std::vector<std::string> ids;
  for (const auto& c : r.cells) ids.push_back(c.cell.id());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids,
            (std::vector<std::string>{"cpp/kernel/single/closed", "cpp/kernel/single/open", "raw/kernel/mono/closed"}));
  EXPECT_FALSE(fs::exists(root_ / "results" / "testbox" / "s1" / "cpp_kernel_mono_closed.json"));
  EXPECT_EQ(sitting_json("s1")["overrides"]["cells"], (json{"raw/*/mono/closed", "cpp/kernel/single/*"}));
}

TEST_F(Sitting, aCellPatternThatSelectsNothingStopsTheSittingBeforeItStarts) {
  SittingOptions o = options("flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n");
  o.cells = split_cell_selection("cpp/kernel/single/closed,rust-pure/*/*/*");
  try {
    run_sitting(o);
    FAIL() << "a pattern that selects nothing ran";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--cells: 'rust-pure/*/*/*' matches no cell"));
  }
  EXPECT_FALSE(fs::exists(root_ / "results" / "testbox" / "s1"));
}

// A paired matrix's group is the selected cells that differ only in flavour:
// quickfix is left out of kernel/single/closed, and kernel/mono/closed, with
// cpp alone selected, is a group of one (sequential).
TEST_F(Sitting, aSelectionOfAPairedMatrixGroupsTheSelectedCellsOnly) {
  SittingOptions o = options(
      "flavours = ['cpp', 'quickfix', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed']\npairing = 'rounds'\n[rounds]\nmin_rounds = 2\nmax_rounds = 2\nseed = 7\n");
  o.matrix.runs = 1;
  o.cells = split_cell_selection("cpp/kernel/*/closed,raw/kernel/single/closed");
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 3u);
  const json single = cell_json("s1", "raw_kernel_single_closed.json")["pairing"];
  EXPECT_EQ(single["mode"], "rounds");
  EXPECT_EQ(single["members"], (json{"cpp", "raw"}));
  EXPECT_EQ(cell_json("s1", "cpp_kernel_mono_closed.json")["pairing"]["mode"], "sequential");
  EXPECT_FALSE(fs::exists(root_ / "results" / "testbox" / "s1" / "quickfix_kernel_single_closed.json"));
}

TEST_F(Sitting, oneSittingPerCellGivesEachSelectedCellItsOwnSitting) {
  SittingOptions o = options(
      "flavours = ['cpp', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed']\n",
      "series");
  o.cells = split_cell_selection("*/kernel/mono/closed,cpp/*/single/*");
  std::vector<SittingResult> rs = run_sitting_per_cell(o);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(series_exit_code(rs), 0);
  std::vector<std::string> names;
  for (const auto& r : rs) {
    ASSERT_EQ(r.cells.size(), 1u) << r.dir;
    names.push_back(fs::path(r.dir).filename().string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"series-cpp_kernel_single_closed", "series-cpp_kernel_mono_closed",
                                             "series-raw_kernel_mono_closed"}));
  const json st = sitting_json("series-raw_kernel_mono_closed");
  EXPECT_EQ(st["overrides"]["cells"], (json{"raw/kernel/mono/closed"}));
  EXPECT_EQ(st["overrides"]["one_sitting_per_cell"], "series");
  // Run again under the same name: refused before anything runs.
  EXPECT_THROW(run_sitting_per_cell(o), ConfigError);
}

TEST_F(Sitting, oneSittingPerCellOfAPairedMatrixIsOneSittingPerGroup) {
  SittingOptions o = options(
      "flavours = ['cpp', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n"
      "pairing = 'rounds'\n[rounds]\nmin_rounds = 2\nmax_rounds = 2\nseed = 7\n",
      "g");
  o.matrix.runs = 1;
  std::vector<SittingResult> rs = run_sitting_per_cell(o);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(fs::path(rs[0].dir).filename(), "g-kernel_single_closed");
  EXPECT_EQ(rs[0].cells.size(), 2u);
  EXPECT_EQ(cell_json("g-kernel_mono_closed", "raw_kernel_mono_closed.json")["pairing"]["members"],
            (json{"cpp", "raw"}));
}

TEST(SittingSeries, theSeriesExitCodeIsAStopOrTheWorstSitting) {
  auto with = [](std::vector<int> codes) {
    std::vector<SittingResult> rs;
    for (int c : codes) rs.push_back({"", {}, c, ""});
    return series_exit_code(rs);
  };
  EXPECT_EQ(with({0, 0}), 0);
  EXPECT_EQ(with({0, 2, 0}), 2);
  EXPECT_EQ(with({2, 130}), 130);
  EXPECT_EQ(with({3, 2}), 3);
}

// Busy polling per model: the machine file gives single 50 us and mono 0;
// each result says what it was given and where from, and what the server's
// socket carried, read back from it while the client ran.
TEST_F(Sitting, busyPollPerModelIsAppliedRecordedAndReadBackFromTheServer) {
  setenv("FAKE_BR_SCALE", "1", 1);  // the client holds its connection long enough to be read
  SittingOptions o = options(
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed']\n");
  o.matrix.runs = 1;
  o.matrix.warmup_s = 1.0;
  o.machine = parse_machine(std::string(kTestMachine) +
                                "[transports.kernel]\nbusy_poll_usecs = 20\n"
                                "[transports.kernel.busy_poll_by_model]\nsingle = 50\nmono = 0\n",
                            "testbox.toml");
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  const json single = cell_json("s1", "cpp_kernel_single_closed.json");
  EXPECT_EQ(single["stamp"]["effective"]["busy_poll_usecs"], 50);
  EXPECT_EQ(single["stamp"]["effective"]["transport"]["busy_poll_usecs"], 50);
  EXPECT_EQ(single["busy_poll"]["usecs"], 50);
  EXPECT_EQ(single["busy_poll"]["from"], "transports.kernel.busy_poll_by_model.single");
  EXPECT_EQ(single["busy_poll"]["read_back"]["values"], (json{{"50", 1}})) << single["busy_poll"].dump();
  EXPECT_EQ(single["busy_poll"]["read_back"]["matches"], true);
  EXPECT_THAT(single["stamp"]["effective"]["acceptor_config"].get<std::string>(), HasSubstr("busy_poll_usecs = 50\n"));
  const json mono = cell_json("s1", "cpp_kernel_mono_closed.json");
  EXPECT_EQ(mono["busy_poll"]["usecs"], 0);
  EXPECT_EQ(mono["busy_poll"]["read_back"]["values"], (json{{"0", 1}})) << mono["busy_poll"].dump();
  const json eff = sitting_json("s1")["effective"];
  EXPECT_EQ(eff["busy_poll_by_model"], (json{{"single", 50}, {"mono", 0}, {"pool", 20}, {"shard", 20}}));
}

TEST_F(Sitting, theBusyPollOverrideIsEveryModelsValue) {
  SittingOptions o = options(
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
      "loops = ['closed']\n");
  o.machine = parse_machine(std::string(kTestMachine) + "[transports.kernel.busy_poll_by_model]\nsingle = 50\n",
                            "testbox.toml");
  o.busy_poll_usecs = 7;
  ASSERT_EQ(run_sitting(o).exit_code, 0);
  for (const char* f : {"cpp_kernel_single_closed.json", "cpp_kernel_mono_closed.json"}) {
    EXPECT_EQ(cell_json("s1", f)["busy_poll"]["usecs"], 7) << f;
    EXPECT_EQ(cell_json("s1", f)["busy_poll"]["from"], "--busy-poll-usecs") << f;
  }
}

// Host provenance: recorded in sitting.json, warned in every cell's stamp and
// on the sitting's page, and named by compare when it differs.
TEST_F(Sitting, hostProvenanceIsStampedWarnedAndCompared) {
  fs::create_directories(root_ / "boot");
  for (const char* k : {"vmlinuz-6.1.0-13-amd64", "vmlinuz-6.1.0-21-amd64"}) std::ofstream(root_ / "boot" / k) << "";
  const std::string mx = "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n";
  SittingOptions o = options(mx, "old");
  o.host_sources.boot_dir = (root_ / "boot").string();
  o.host_sources.running_kernel = "6.1.0-13-amd64";
  ASSERT_EQ(run_sitting(o).exit_code, 0);
  const json st = sitting_json("old");
  EXPECT_EQ(st["provenance"]["kernel"]["newer_not_booted"], true);
  EXPECT_THAT(st["provenance"]["warnings"].dump(), HasSubstr("kernel 6.1.0-21-amd64 is installed but not booted"));
  EXPECT_EQ(cell_json("old", "cpp_kernel_single_closed.json")["stamp"]["sitting"]["host_warnings"],
            st["provenance"]["warnings"]);
  const std::string page =
      read_text((root_ / "results" / "site" / "testbox" / "sitting" / "old" / "index.html").string());
  EXPECT_THAT(page, HasSubstr("host-warnings"));
  EXPECT_THAT(page, HasSubstr("installed, not booted"));

  o = options(mx, "new");
  o.host_sources.boot_dir = (root_ / "boot").string();
  o.host_sources.running_kernel = "6.1.0-21-amd64";
  ASSERT_EQ(run_sitting(o).exit_code, 0);
  CompareResult r = compare_sittings((root_ / "results" / "testbox" / "old").string(),
                                     (root_ / "results" / "testbox" / "new").string(), {});
  ASSERT_TRUE(r.ok) << r.text;
  EXPECT_THAT(r.text, HasSubstr("The host differs between the two sittings"));
  EXPECT_THAT(r.text, HasSubstr("- kernel 6.1.0-13-amd64 -> 6.1.0-21-amd64"));
  EXPECT_THAT(r.text, HasSubstr("- newer kernel installed but not booted: yes (6.1.0-21-amd64) -> no"));
}

// The vendor stacks' launcher settings: what the machine file sets (VMA_*,
// libvma's thread on a reserved core) reaches the launched server and client,
// is recorded in each cell's stamp and in sitting.json, and compare names a
// setting that differs. No stack is needed: the fake server runs under an
// LD_PRELOAD the loader cannot find, and logs the environment it was given.
TEST_F(Sitting, launcherSettingsReachTheServerAndAreRecordedAndCompared) {
  const fs::path env_log = root_ / "env.log";
  setenv("FAKE_BR_ENV_LOG", env_log.c_str(), 1);
  const std::string mx =
      "flavours = ['cpp']\ntransports = ['vma', 'socketxtreme']\nmodels = ['single']\nloops = ['closed']\n";
  const std::string vendor_host = std::string(kTestMachine) +
                                  "[transports.vma]\nenv = { VMA_SPEC = 'latency', VMA_RX_POLL = '-1' }\n"
                                  "internal_thread_core = 2\n";
  auto machine = [&](const std::string& spec) {
    std::string text = vendor_host;
    text.replace(text.find("[transports]\navailable = [\"kernel\"]"),
                 std::string("[transports]\navailable = [\"kernel\"]").size(),
                 "[transports]\navailable = ['kernel', 'vma', 'socketxtreme']");
    text.replace(text.find("latency"), 7, spec);
    return parse_machine(text.replace(text.find("[cores]\n"), 8, "[cores]\nreserved = \"2\"\n"), "testbox.toml");
  };
  SittingOptions o = options(mx, "before");
  o.machine = machine("latency");
  SittingResult r = run_sitting(o);
  unsetenv("FAKE_BR_ENV_LOG");
  ASSERT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 2u);
  for (const auto& c : r.cells) EXPECT_EQ(c.state, CellState::measured) << c.cell.id() << ": " << c.reason;

  // What each launched process was given.
  std::map<std::string, json> seen;  // "server cpp/vma/single" -> its env
  for (const auto& line : log_lines(env_log)) {
    const json l = json::parse(line);
    std::string cell = l["cell"];
    if (l["role"] == "client") cell = cell.substr(0, cell.rfind('/'));  // the client names the loop too
    seen[l["role"].get<std::string>() + " " + cell] = l["env"];
  }
  for (const char* who : {"server cpp/vma/single", "client cpp/vma/single", "server cpp/socketxtreme/single",
                          "client cpp/socketxtreme/single"}) {
    ASSERT_TRUE(seen.count(who)) << who << " did not log; log: " << read_text_or_empty(env_log.string());
    const json& env = seen[who];
    EXPECT_EQ(env.value("LD_PRELOAD", ""), "libvma.so") << who;
    EXPECT_EQ(env.value("VMA_SPEC", ""), "latency") << who;
    EXPECT_EQ(env.value("VMA_RX_POLL", ""), "-1") << who;
    EXPECT_EQ(env.value("VMA_INTERNAL_THREAD_AFFINITY", ""), "2") << who << ": libvma's thread on the reserved core";
  }
  EXPECT_EQ(seen["server cpp/socketxtreme/single"].value("VMA_SOCKETXTREME", ""), "1");
  EXPECT_FALSE(seen["server cpp/vma/single"].contains("VMA_SOCKETXTREME"));

  // Recorded: the cell's stamp and sitting.json.
  const json cell = cell_json("before", "cpp_vma_single_closed.json");
  const json& launcher = cell["stamp"]["effective"]["launcher"];
  EXPECT_EQ(launcher["preload"], "libvma.so");
  EXPECT_EQ(launcher["vma_internal_thread_core"], 2);
  EXPECT_EQ(launcher["env"]["VMA_INTERNAL_THREAD_AFFINITY"], "2");
  EXPECT_EQ(cell["stamp"]["effective"]["server_env"]["VMA_INTERNAL_THREAD_AFFINITY"], "2");
  EXPECT_EQ(cell["stamp"]["effective"]["client_env"]["VMA_SPEC"], "latency");
  const json st = sitting_json("before");
  EXPECT_EQ(st["vma_internal_thread"]["core"], 2);
  EXPECT_EQ(st["vma_internal_thread"]["env"], "VMA_INTERNAL_THREAD_AFFINITY=2");
  EXPECT_EQ(st["effective"]["launchers"]["vma"]["env"]["VMA_SPEC"], "latency");
  EXPECT_EQ(st["effective"]["launchers"]["socketxtreme"]["env"]["VMA_SOCKETXTREME"], "1");

  // A second sitting with another VMA_SPEC: compare names it on the rows it touches.
  o = options(mx, "now");
  o.machine = machine("throughput");
  ASSERT_EQ(run_sitting(o).exit_code, 0);
  CompareResult c = compare_sittings((root_ / "results" / "testbox" / "before").string(),
                                     (root_ / "results" / "testbox" / "now").string(), {});
  ASSERT_TRUE(c.ok) << c.text;
  EXPECT_THAT(c.text, HasSubstr("VMA_SPEC latency -> throughput: every row")) << c.text;
  EXPECT_THAT(c.text, Not(HasSubstr("VMA_INTERNAL_THREAD_AFFINITY 2 ->"))) << c.text;
}

// A transport a flavour declares build_only: a host without the stack marks
// it unmeasurable with the declaration's reason; a server that answers
// `unsupported:` for it is marked unsupported with it, and check-flavour is
// not played on it.
TEST_F(Sitting, aBuildOnlyTransportSaysSoInItsMarkers) {
  write_fake_br_flavour("vend", "");
  {
    std::string text = read_text((root_ / "flavours" / "vend.toml").string());
    text.replace(text.find("transports = ['kernel']"), 23, "transports = ['kernel', 'tcpdirect', 'socketxtreme']");
    std::ofstream(root_ / "flavours" / "vend.toml")
        << text << "[build_only]\ntcpdirect = 'needs the TCPDirect SDK'\nsocketxtreme = 'needs vma_extra.h'\n";
  }
  setenv("FAKE_BR_UNSUPPORTED", "vend", 1);
  SittingOptions o = options(
      "flavours = ['vend']\ntransports = ['tcpdirect', 'socketxtreme']\nmodels = ['single']\nloops = ['closed']\n");
  o.flavours_dir = (root_ / "flavours").string();
  std::string text = kTestMachine;
  text.replace(text.find("available = [\"kernel\"]"), 22, "available = ['kernel', 'socketxtreme']");
  o.machine = parse_machine(text, "testbox.toml");
  o.check = true;  // a build_only transport is not checked: nothing else is left to check here
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  const CellOutcome* td = find(r, "vend/tcpdirect/single/closed");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ(td->marker, "unmeasurable");
  EXPECT_THAT(td->reason, HasSubstr("vend has tcpdirect only where its SDK is installed (build_only: needs the "
                                    "TCPDirect SDK)"));
  const CellOutcome* sx = find(r, "vend/socketxtreme/single/closed");
  ASSERT_NE(sx, nullptr);
  EXPECT_EQ(sx->marker, "unsupported");
  EXPECT_THAT(cell_json("s1", "vend_socketxtreme_single_closed.json")["lab"]["reason"].get<std::string>(),
              HasSubstr("build_only: needs vma_extra.h"));
  EXPECT_THAT(sitting_json("s1")["checks"]["vend"]["outcome"].get<std::string>(), HasSubstr("not run"));
}
