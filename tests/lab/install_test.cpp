// Installed binaries (docs/lab.md "Installed binaries"): `bench-run install`
// stages a flavour's files into an immutable folder named by their hash, and a
// sitting with `--installed` measures that install, not the build tree. Driven
// with the fake bench_roundtrip (tests/lab/fake_bench_roundtrip.py), audit off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kite/lab/install.hpp"
#include "kite/lab/process.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/util.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using namespace kite::lab::test;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kOneCell = "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n";

class Installs : public ::testing::Test {
 protected:
  void SetUp() override {
    src_ = env_or("KITE_SOURCE_DIR", ".");
    root_ = fs::temp_directory_path() / ("kite-lab-install-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    remove_tree(root_);
    place_fake_bench_roundtrip(src_, root_ / "build");
    setenv("FAKE_BR_SCALE", "0.05", 1);
  }
  void TearDown() override { remove_tree(root_); }

  // Installs are read-only folders: a user who removes one makes it writable first.
  static void remove_tree(const fs::path& p) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); ++it)
      if (it->is_directory()) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(p, ec);
  }
  fs::path fake() const { return root_ / "build" / "bench_roundtrip"; }
  std::string results() const { return (root_ / "results").string(); }
  fs::path installs() const { return installs_dir(results(), "testbox"); }

  InstallRequest request(const std::string& flavour = "cpp") const {
    InstallRequest r;
    r.flavour = flavour;
    r.build_dir = (root_ / "build").string();
    r.source_dir = src_;
    r.results_dir = results();
    r.host = "testbox";
    return r;
  }
  SittingOptions options(const std::string& matrix_body) const {
    SittingOptions o = test_sitting_options(src_, root_, matrix_body, "s1");
    o.build_site = false;
    return o;
  }
  json read_json(const fs::path& p) const { return json::parse(read_text(p.string())); }
  std::vector<std::string> folders(const fs::path& dir) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  // The build tree's fake, replaced by one that fails as server and client alike.
  void break_build_tree() const {
    fs::remove(fake());
    std::ofstream(fake()) << "#!/bin/sh\necho 'build tree binary: must not run' >&2\nexit 7\n";
    fs::permissions(fake(), fs::perms::owner_all, fs::perm_options::add);
  }

  std::string src_;
  fs::path root_;
};

}  // namespace

TEST_F(Installs, installingTheSameFilesTwiceKeepsOneFolder) {
  InstallOutcome first = install_flavour(request());
  InstallOutcome second = install_flavour(request());
  EXPECT_FALSE(first.reused);
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(first.install.id, second.install.id);
  EXPECT_THAT(first.install.id, ::testing::MatchesRegex("cpp-[0-9a-f]{12}"));
  EXPECT_EQ(folders(installs()), std::vector<std::string>{first.install.id});  // no staging folder left either
  EXPECT_EQ(fs::path(first.install.binary), installs() / first.install.id / "bench_roundtrip");

  std::ofstream(fake(), std::ios::app) << "# rebuilt\n";
  InstallOutcome third = install_flavour(request());
  EXPECT_FALSE(third.reused);
  EXPECT_NE(third.install.id, first.install.id);
  ASSERT_EQ(list_installs(results(), "testbox", "cpp").size(), 2u);
  EXPECT_EQ(list_installs(results(), "testbox", "cpp").back().id, third.install.id);
}

TEST_F(Installs, installJsonSaysWhatWasInstalledFromWhere) {
  Install in = install_flavour(request()).install;
  json j = read_json(installs() / in.id / "install.json");
  EXPECT_EQ(j["install"], in.id);
  EXPECT_EQ(j["flavour"], "cpp");
  EXPECT_EQ(j["host"], "testbox");
  EXPECT_THAT(j["date"].get<std::string>(), ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"));
  EXPECT_TRUE(j["git"]["revision"].is_string());
  EXPECT_TRUE(j["git"]["dirty"].is_boolean());
  EXPECT_THAT(j["version"].get<std::string>(), HasSubstr("fake"));
  EXPECT_EQ(j["compiler"], "python");
  EXPECT_EQ(j["flags"], "none");
  EXPECT_EQ(j["host_tuned"], false);
  EXPECT_EQ(j["build"], "portable");
  EXPECT_EQ(j["binary"], "bench_roundtrip");
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["sha256"], sha256_file(fake().string()));
  EXPECT_EQ(j["files"][0]["source"], fake().lexically_normal().string());
  EXPECT_EQ(in.id, "cpp-" + j["hash"].get<std::string>().substr(0, 12));
  EXPECT_EQ(verify_install(in), "");
}

TEST_F(Installs, theFilesAndTheFolderAreReadOnly) {
  Install in = install_flavour(request()).install;
  const fs::perms write = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  for (const char* name : {"", "bench_roundtrip", "install.json"})
    EXPECT_EQ(fs::status(installs() / in.id / name).permissions() & write, fs::perms::none) << name;
  EXPECT_NE(fs::status(in.binary).permissions() & fs::perms::owner_exec, fs::perms::none);
}

TEST_F(Installs, artifactsAreInstalledBesideTheBinaryAndNameTheInstall) {
  fs::create_directories(root_ / "flavours");
  fs::create_directories(root_ / "build" / "lib");
  std::ofstream(root_ / "build" / "lib" / "engine.so") << "v1";
  std::ofstream(root_ / "flavours" / "ext.toml")
      << "name='ext'\nbinary='bench_roundtrip'\nargs=['server']\nartifacts=['lib/engine.so']\n";
  InstallRequest rq = request("ext");
  rq.flavours_dir = (root_ / "flavours").string();
  Install v1 = install_flavour(rq).install;
  ASSERT_EQ(v1.files.size(), 2u);
  EXPECT_EQ(read_text(v1.dir + "/engine.so"), "v1");
  std::ofstream(root_ / "build" / "lib" / "engine.so") << "v2";
  Install v2 = install_flavour(rq).install;
  EXPECT_NE(v1.id, v2.id);

  // A missing artifact installs nothing.
  std::ofstream(root_ / "flavours" / "ext.toml")
      << "name='ext'\nbinary='bench_roundtrip'\nargs=['server']\nartifacts=['lib/missing.so']\n";
  EXPECT_THROW(install_flavour(rq), ConfigError);
  EXPECT_EQ(folders(installs()).size(), 2u);
}

TEST_F(Installs, anAlteredInstallIsNotReused) {
  Install in = install_flavour(request()).install;
  fs::permissions(in.binary, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(in.binary, std::ios::app) << "# tampered\n";
  EXPECT_THAT(verify_install(in), HasSubstr("bench_roundtrip"));
  EXPECT_THROW(install_flavour(request()), std::runtime_error);
}

TEST(HostTunedFlags, nativeTargetsAreHostTunedAndTheRestPortable) {
  EXPECT_TRUE(host_tuned_flags("-O3 -march=native -DNDEBUG"));
  EXPECT_TRUE(host_tuned_flags("-C target-cpu=native"));
  EXPECT_TRUE(host_tuned_flags("-O2 -mcpu=native"));
  EXPECT_FALSE(host_tuned_flags("-O3 -DNDEBUG -g"));
  EXPECT_FALSE(host_tuned_flags(""));
}

TEST_F(Installs, theListingNamesEachInstallAndTheNewest) {
  std::string first = install_flavour(request()).install.id;
  std::ofstream(fake(), std::ios::app) << "# rebuilt\n";
  std::string second = install_flavour(request()).install.id;
  std::string text = install_listing(list_installs(results(), "testbox"));
  EXPECT_THAT(text, HasSubstr(first));
  EXPECT_THAT(text, ::testing::ContainsRegex(second + " [^\n]* portable +newest"));
  EXPECT_THAT(text, ::testing::Not(::testing::ContainsRegex(first + " [^\n]*newest")));
  EXPECT_EQ(install_listing({}), "no installs\n");
}

TEST_F(Installs, anInstalledSittingRunsTheInstallNotTheBuildTree) {
  Install in = install_flavour(request()).install;
  break_build_tree();
  SittingOptions o = options(kOneCell);
  o.installed = true;
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::measured) << r.cells[0].reason;

  json cell = read_json(fs::path(r.dir) / "cpp_kernel_single_closed.json");
  const json& eff = cell["stamp"]["effective"];
  EXPECT_EQ(eff["server_build"]["from"], "install");
  EXPECT_EQ(eff["server_build"]["install"], in.id);
  EXPECT_EQ(eff["server_build"]["sha256"], in.files[0].sha256);
  EXPECT_EQ(eff["client_build"]["from"], "install");
  EXPECT_EQ(eff["server_argv"][0], in.binary);
  EXPECT_EQ(eff["client_argv"][0], in.binary);

  json st = read_json(fs::path(r.dir) / "sitting.json");
  ASSERT_EQ(st["installs"].size(), 1u);
  EXPECT_EQ(st["installs"][0]["install"], in.id);
  EXPECT_EQ(st["installs"][0]["used_by"], json({"server:cpp", "client"}));
  EXPECT_EQ(st["overrides"]["installed"], true);
}

TEST_F(Installs, aSittingOfTheBuildTreeSaysSo) {
  SittingResult r = run_sitting(options(kOneCell));
  ASSERT_EQ(r.exit_code, 0) << r.message;
  json eff = read_json(fs::path(r.dir) / "cpp_kernel_single_closed.json")["stamp"]["effective"];
  EXPECT_EQ(eff["server_build"]["from"], "build tree");
  EXPECT_EQ(eff["server_build"]["sha256"], sha256_file(fake().string()));
  EXPECT_THAT(eff["server_build"]["path"].get<std::string>(), HasSubstr("bench_roundtrip"));
  EXPECT_EQ(eff["client_build"]["from"], "build tree");
  EXPECT_EQ(read_json(fs::path(r.dir) / "sitting.json")["installs"], json::array());
}

TEST_F(Installs, aSittingOfInstallsRefusesAFlavourWithoutOneBeforeAnyCell) {
  install_flavour(request());
  SittingOptions o = options(
      "installed = true\nflavours = ['cpp', 'raw']\ntransports = ['kernel']\n"
      "models = ['single']\nloops = ['closed']\n");
  try {
    run_sitting(o);
    FAIL() << "a flavour without an install was measured";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("flavour raw has no install"));
    EXPECT_THAT(e.what(), HasSubstr("bench-run install raw"));
  }
  EXPECT_FALSE(fs::exists(root_ / "results" / "testbox" / "s1"));
}

TEST_F(Installs, aResumedSittingKeepsTheInstallsItStartedWith) {
  Install first = install_flavour(request()).install;
  const std::string mx =
      "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single', 'mono']\nloops = ['closed']\n";
  SittingOptions o = options(mx);
  o.installed = true;
  SittingResult r = run_sitting(o);
  ASSERT_EQ(r.exit_code, 0) << r.message;
  fs::remove(fs::path(r.dir) / "cpp_kernel_mono_closed.json");
  std::ofstream(fake(), std::ios::app) << "# rebuilt\n";
  ASSERT_NE(install_flavour(request()).install.id, first.id);

  SittingOptions again = options(mx);  // same name: resumed, with the recorded --installed and installs
  SittingResult resumed = run_sitting(again);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.message;
  json eff = read_json(fs::path(r.dir) / "cpp_kernel_mono_closed.json")["stamp"]["effective"];
  EXPECT_EQ(eff["server_build"]["install"], first.id);
}

// The command line: install, install again, --list, and a sitting that refuses (exit 1).
TEST_F(Installs, benchRunInstallListAndRefusal) {
  const std::string bench_run = env_or("KITE_BINARY_DIR", "build/release") + "/bench-run";
  std::ofstream(root_ / "testbox.toml") << kTestMachine;
  const std::vector<std::string> common = {
      "--source-dir", src_, "--build-dir", (root_ / "build").string(), "--machine", (root_ / "testbox.toml").string()};
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {bench_run};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), common.begin(), common.end());
    return run_command(argv, 60.0);
  };
  CommandResult a = run({"install", "cpp", "--results", results()});
  EXPECT_EQ(a.code, 0) << a.output;
  EXPECT_THAT(a.output, HasSubstr("installed cpp-"));
  CommandResult b = run({"install", "cpp", "--results", results()});
  EXPECT_EQ(b.code, 0) << b.output;
  EXPECT_THAT(b.output, HasSubstr("reused"));
  CommandResult l = run({"install", "--list", "cpp", "--results", results()});
  EXPECT_EQ(l.code, 0) << l.output;
  EXPECT_THAT(l.output, ::testing::ContainsRegex("cpp-[0-9a-f]{12} [^\n]* portable +newest"));

  std::ofstream(root_ / "m.toml") << kOneCell;
  CommandResult s = run({"--installed", "--matrix", (root_ / "m.toml").string(), "--results",
                         (root_ / "elsewhere").string(), "--no-progress", "--no-audit"});
  EXPECT_EQ(s.code, 1) << s.output;
  EXPECT_THAT(s.output, HasSubstr("bench-run install cpp"));
}
