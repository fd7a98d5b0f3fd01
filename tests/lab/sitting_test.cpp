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

#include "kite/lab/report.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/util.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using namespace kite::lab::test;
using ::testing::HasSubstr;
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
                              "FAKE_BR_FAIL_ONCE", "FAKE_BR_MUTATE"})
            unsetenv(k);
        setenv("FAKE_BR_SCALE", "0.05", 1);
    }
    void TearDown() override {
        for (const char* k : {"FAKE_BR_UNSUPPORTED", "FAKE_BR_NO_READY", "FAKE_BR_CLIENT_FAIL", "FAKE_BR_LOG",
                              "FAKE_BR_FAIL_ONCE", "FAKE_BR_MUTATE"})
            unsetenv(k);
        fs::remove_all(root_);
    }
    SittingOptions options(const std::string& matrix_body, const std::string& name = "s1") {
        return test_sitting_options(src_, root_, matrix_body, name);
    }
    json cell_json(const std::string& sitting, const std::string& file) {
        return json::parse(read_text((root_ / "results" / "testbox" / sitting / file).string()));
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
    const std::pair<CellState, const char*> states[] = {{CellState::measured, "measured"},
                                                        {CellState::refused, "refused"},
                                                        {CellState::marked, "marked"},
                                                        {CellState::unbuilt, "unbuilt"},
                                                        {CellState::error, "error"}};
    for (const auto& [state, text] : states) {
        EXPECT_EQ(to_string(state), text);
        EXPECT_EQ(cell_state_from_string(text), state) << text;
    }
    EXPECT_EQ(cell_state_from_string("unsupported"), std::nullopt);
    EXPECT_EQ(cell_state_from_string(""), std::nullopt);
}

TEST_F(Sitting, measuresMarksAndRecordsEveryCell) {
    setenv("FAKE_BR_UNSUPPORTED", "quickfix", 1);
    SittingResult r = run_sitting(options(
        "flavours = ['cpp', 'quickfix']\ntransports = ['kernel', 'uring', 'vma']\nmodels = ['single', 'shard']\n"
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
    std::string server_argv = eff["server_argv"].dump(), client_argv = eff["client_argv"].dump();
    EXPECT_THAT(server_argv, HasSubstr("\"--model\",\"single\""));
    EXPECT_THAT(client_argv, HasSubstr("\"--rate\",\"50000\""));
    EXPECT_THAT(client_argv, HasSubstr("\"--cell\",\"cpp/kernel/single/open\""));
    EXPECT_EQ(j["audit"]["enabled"], false);

    json st = json::parse(read_text((root_ / "results" / "testbox" / "s1" / "sitting.json").string()));
    EXPECT_EQ(st["epoch"], sha256_hex("Test CPU 9000").substr(0, 12));
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
    std::ofstream(root_ / "flavours" / "ghost.toml") << "name='ghost'\nbinary='ghost_server_not_built'\nargs=['{port}']\n";
    SittingOptions o = options("flavours = ['ghost']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n");
    o.flavours_dir = (root_ / "flavours").string();
    SittingResult r = run_sitting(o);
    EXPECT_EQ(r.exit_code, 0) << r.message;
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].state, CellState::unbuilt);
    EXPECT_THAT(r.cells[0].reason, HasSubstr("ghost_server_not_built"));
}

TEST_F(Sitting, aServerThatNeverGetsReadyIsACellErrorAndExitCodeTwo) {
    setenv("FAKE_BR_NO_READY", "1", 1);
    SittingOptions o = options("flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"
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
    SittingResult r = run_sitting(
        options("flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"));
    EXPECT_EQ(r.exit_code, 0) << r.message;
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].state, CellState::measured);
    EXPECT_EQ(r.cells[0].verdict, "partial");
    json j = cell_json("s1", "cpp_kernel_single_closed.json");
    EXPECT_THAT(j["verdict_reasons"].dump(), HasSubstr("repeated"));
}

TEST_F(Sitting, aClientThatCannotMeasureIsACellError) {
    setenv("FAKE_BR_CLIENT_FAIL", "1", 1);
    SittingResult r = run_sitting(
        options("flavours = ['raw']\ntransports = ['kernel']\nmodels = ['mono']\nloops = ['open']\n[cell]\nattempts = 1\n"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.cells.at(0).reason, HasSubstr("logon refused"));
}

TEST_F(Sitting, resumesAnInterruptedSittingRunningOnlyTheCellsNotDone) {
    const std::string mx = "flavours = ['cpp', 'raw']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n";
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
    const std::string mx = "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n";
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
    const std::string mx = "flavours = ['cpp', 'quickfix']\ntransports = ['kernel']\nmodels = ['single', 'mono']\n"
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
    EXPECT_THAT(r.text, HasSubstr("| Cell | Before | Now | quickfix |"));
    EXPECT_THAT(r.text, ::testing::ContainsRegex("\\| kernel/single \\| [12][0-9]\\.[0-9][0-9] \\| [12][0-9]\\.[0-9][0-9] \\| 4[0-9]\\.[0-9][0-9] \\|"));
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
