// check-flavour against a fake flavour that passes the contract, and against
// copies of it broken in one way each: every break fails exactly its checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "kite/lab/check.hpp"
#include "kite/lab/util.hpp"

using namespace kite::lab;
namespace fs = std::filesystem;

namespace {

// The names of the checks that failed when check-flavour ran the fake with `--break what`.
// `binary` replaces the fake's path (a wrapper around it).
std::set<std::string> failed_checks(const std::string& what, CheckReport* out = nullptr,
                                    const std::string& binary = KITE_FAKE_FLAVOUR, const Machine* machine = nullptr) {
  const fs::path dir = fs::temp_directory_path() / ("kite-check-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_text_atomic(
      (dir / "fake.toml").string(),
      "name = \"fake\"\n"
      "binary = \"" +
          binary +
          "\"\n"
          "args = [\"--model\", \"{model}\", \"--transport\", \"{transport}\", \"--bind\", \"{bind}\",\n"
          "        \"--port\", \"{port}\", \"--cores\", \"{cores}\", \"--busy-poll-usecs\", \"{busy_poll_usecs}\",\n"
          "        \"--ready-file\", \"{ready_file}\", \"--break\", \"" +
          what +
          "\"]\n"
          "models = [\"single\"]\ntransports = [\"kernel\"]\n");
  CheckOptions o;
  o.flavour = "fake";
  o.flavours_dir = dir.string();
  o.build_dir = dir.string();
  o.source_dir = dir.string();
  o.machine = machine ? *machine : derive_local_machine();
  o.grace_s = 2.0;
  CheckReport r = check_flavour(o);
  std::set<std::string> failed;
  for (const auto& l : r.lines) {
    if (l.status == CheckStatus::fail) failed.insert(l.name);
    if (l.status != CheckStatus::ok) std::printf("  %s\n", l.text().c_str());
  }
  if (out) *out = r;
  fs::remove_all(dir);
  return failed;
}

}  // namespace

TEST(CheckFlavour, aFlavourThatKeepsTheContractPassesEveryCheck) {
  CheckReport r;
  EXPECT_EQ(failed_checks("nothing", &r), std::set<std::string>{});
  EXPECT_EQ(r.skipped, 0);
  EXPECT_GE(r.passed, 20);  // build, version, 17 checks of single/kernel, two unsupported starts
}

TEST(CheckFlavour, aWrongThreadNameFailsTheChecksThatGoByName) {
  // Role threads are known by name: a misnamed spinning thread is also a
  // runtime thread over the burn threshold.
  EXPECT_EQ(failed_checks("thread-name"), (std::set<std::string>{"thread-names", "runtime-idle"}));
}

TEST(CheckFlavour, aThreadThatBurnsOnceAfterTheColdPathsPassesOnALaterWindow) {
  // fake-jit spins through the settling orders and the first window, then
  // stops: the first quiet window is judged, and the line says which.
  CheckReport r;
  EXPECT_EQ(failed_checks("compile-once", &r), std::set<std::string>{});
  bool said = false;
  for (const auto& l : r.lines)
    if (l.name == "runtime-idle") said = l.text().find("(window ") != std::string::npos;
  EXPECT_TRUE(said) << "runtime-idle should name the window it judged";
}

TEST(CheckFlavour, anOrderWithoutExecutionReportFailsTheOrderCheckOnly) {
  EXPECT_EQ(failed_checks("no-report"), std::set<std::string>{"orders"});
}

TEST(CheckFlavour, aServerThatIgnoresSigtermFailsTheSigtermCheckOnly) {
  EXPECT_EQ(failed_checks("ignore-sigterm"), std::set<std::string>{"sigterm"});
}

TEST(CheckFlavour, anUnpinnedThreadFailsThePinningCheckOnly) {
  EXPECT_EQ(failed_checks("unpinned"), std::set<std::string>{"pinning"});
}

TEST(CheckFlavour, aServerThatDoesNotAnswerVersionFailsTheVersionCheckOnly) {
  // The fake behind a wrapper that refuses --version and runs it otherwise.
  const fs::path wrapper = fs::temp_directory_path() / ("kite-check-noversion-" + std::to_string(::getpid()));
  write_text_atomic(wrapper.string(),
                    "#!/bin/sh\n[ \"$1\" = --version ] && exit 2\nexec \"" KITE_FAKE_FLAVOUR "\" \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  EXPECT_EQ(failed_checks("nothing", nullptr, wrapper.string()), std::set<std::string>{"version"});
  fs::remove(wrapper);
}

// The machine file's busy poll for the model is what the check reads back from
// the server's socket: a server that never sets it fails at 30 us and passes
// where the model's value is 0 (the seeds' 32-session cells).
TEST(CheckFlavour, theBusyPollCheckReadsBackTheModelsValue) {
  Machine m = derive_local_machine();
  m.kernel_busy_poll_by_model["single"] = 30;
  CheckReport r;
  EXPECT_EQ(failed_checks("nothing", &r, KITE_FAKE_FLAVOUR, &m), std::set<std::string>{});
  bool said = false;
  for (const auto& l : r.lines)
    if (l.name == "busy-poll") said = l.text().find("SO_BUSY_POLL 30") != std::string::npos;
  EXPECT_TRUE(said) << "the busy-poll line names the model's value";
  EXPECT_EQ(failed_checks("busy-poll", nullptr, KITE_FAKE_FLAVOUR, &m), std::set<std::string>{"busy-poll"});
  m.kernel_busy_poll_by_model["single"] = 0;
  EXPECT_EQ(failed_checks("busy-poll", nullptr, KITE_FAKE_FLAVOUR, &m), std::set<std::string>{});
}
