// bench_roundtrip end to end: a raw server and tiny closed and open client
// runs, the result JSON checked against the contract with bench-run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string binary() {
  const char* dir = std::getenv("KITE_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/bench_roundtrip";
}

pid_t spawn(const std::vector<std::string>& args, const std::string& err_file = "") {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (std::FILE* devnull = std::fopen("/dev/null", "w")) ::dup2(::fileno(devnull), 1);  // the human summary
    if (!err_file.empty()) {
      if (std::FILE* f = std::fopen(err_file.c_str(), "w")) ::dup2(::fileno(f), 2);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid, int timeout_s = 30) {
  for (int i = 0; i < timeout_s * 100; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class RoundtripE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kite-rt-e2e-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int start_server(const std::string& flavour = "raw") {
    const fs::path ready = dir_ / "ready";
    server_ = spawn({binary(), "server", "--flavour", flavour, "--transport", "kernel", "--model", "mono", "--port",
                     "0", "--sessions", "2", "--idle", "block", "--ready-file", ready.string()});
    for (int i = 0; i < 500 && !fs::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!fs::exists(ready)) return -1;
    return std::stoi(slurp(ready));
  }
  int stop_server() {
    ::kill(server_, SIGTERM);
    return wait_exit(server_, 10);
  }

  static void check_latency(const json& l, bool cell) {
    for (const char* k : {"p50", "p90", "p99", "p999", "max"}) {
      ASSERT_TRUE(l.contains(k)) << k;
      EXPECT_TRUE(l[k].is_number_float()) << k;
    }
    EXPECT_TRUE(l.contains(cell ? "mean_max" : "mean"));
    EXPECT_GT(l["p50"].get<double>(), 0.0);
    EXPECT_LE(l["p50"].get<double>(), l["p99"].get<double>());
    EXPECT_LE(l["p99"].get<double>(), l["max"].get<double>());
  }

  json run_client(const std::string& loop, int port, const std::string& flavour = "raw") {
    const fs::path out = dir_ / (loop + ".json");
    std::vector<std::string> args = {binary(),   "client",     "--port",     std::to_string(port),
                                     "--loop",   loop,         "--sessions", "2",
                                     "--warmup", "0.2",        "--duration", "0.3",
                                     "--runs",   "2",          "--idle",     "block",
                                     "--json",   out.string(), "--cell",     flavour + "/kernel/mono/" + loop};
    if (loop == "open") args.insert(args.end(), {"--rate", "2000"});
    const fs::path err = dir_ / (loop + ".err");
    const int rc = wait_exit(spawn(args, err.string()));
    EXPECT_EQ(rc, 0) << slurp(err);
    const std::string progress = slurp(err);
    EXPECT_NE(progress.find("run 1/2 done: p50="), std::string::npos) << progress;
    EXPECT_NE(progress.find("run 2/2 done: p50="), std::string::npos) << progress;
    return json::parse(slurp(out));
  }

  fs::path dir_;
  pid_t server_ = -1;
};

TEST_F(RoundtripE2E, rawServerClosedAndOpenRunsWriteTheContractJson) {
  const int port = start_server();
  ASSERT_GT(port, 0);
  for (const std::string loop : {"closed", "open"}) {
    SCOPED_TRACE(loop);
    const json j = run_client(loop, port);
    const bool open = loop == "open";
    EXPECT_EQ(j["schema"], 1);
    EXPECT_EQ(j["cell"], json({{"flavour", "raw"}, {"transport", "kernel"}, {"model", "mono"}, {"loop", loop}}));
    EXPECT_EQ(j["sessions"], 2);
    EXPECT_EQ(j["rate"].get<double>(), open ? 2000.0 : 0.0);
    EXPECT_TRUE(j.contains("think_us"));
    EXPECT_DOUBLE_EQ(j["warmup_s"].get<double>(), 0.2);
    EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 0.3);
    const std::string method = j["clock"]["method"];
    EXPECT_TRUE(method == "tsc" || method == "clock_gettime");
    EXPECT_TRUE(j["clock"].contains("tsc_ghz"));
    EXPECT_EQ(j["idle"], "block");
    ASSERT_EQ(j["runs"].size(), 2u);
    for (const auto& r : j["runs"]) {
      EXPECT_GT(r["count"].get<int>(), 0);
      EXPECT_EQ(r["errors"], 0);
      EXPECT_GT(r["achieved_rate"].get<double>(), 0.0);
      EXPECT_GE(r["max_in_flight"].get<int>(), 1);
      EXPECT_TRUE(r.contains("cap_hits"));
      check_latency(r["service"], false);
      EXPECT_EQ(r.contains("response"), open);
      if (open) check_latency(r["response"], false);
      const json& c = r["client"];
      EXPECT_GT(c["polls"].get<double>(), 0.0);
      EXPECT_LE(c["empty_polls"].get<double>(), c["polls"].get<double>());
      for (const char* k : {"empty_share", "busy_share"}) {
        EXPECT_GE(c[k].get<double>(), 0.0) << k;
        EXPECT_LE(c[k].get<double>(), 1.0) << k;
      }
      EXPECT_GT(c["busy_s"].get<double>(), 0.0);
      EXPECT_TRUE(c["idle_s"].is_number());
      EXPECT_GT(c["busy_us_per_order"].get<double>(), 0.0);
    }
    const json& s = j["summary"];
    check_latency(s["service"], true);
    EXPECT_EQ(s.contains("response"), open);
    if (open) check_latency(s["response"], true);
    EXPECT_TRUE(s["cv"]["p50"].is_number());
    EXPECT_TRUE(s["cv"]["p99"].is_number());
    for (const char* k : {"achieved_rate", "count", "errors", "max_in_flight"}) EXPECT_TRUE(s.contains(k)) << k;
    for (const char* k : {"empty_share", "busy_share", "busy_us_per_order"})
      EXPECT_TRUE(s["client"][k].is_number()) << k;
    const std::string verdict = j["verdict"];
    EXPECT_TRUE(verdict == "ok" || verdict == "partial" || verdict == "saturated") << verdict;
    EXPECT_TRUE(j["verdict_reasons"].is_array());
    EXPECT_EQ(j["verdict_reasons"].empty(), verdict == "ok");
    for (const char* k : {"cv_p50", "cv_p99", "rate_fraction", "response_over_service"})
      EXPECT_TRUE(j["thresholds"].contains(k)) << k;
    const json& cdf = j["cdf"];
    ASSERT_GE(cdf.size(), 2u);
    EXPECT_LE(cdf.size(), 201u);
    for (std::size_t i = 1; i < cdf.size(); ++i) {
      EXPECT_GE(cdf[i][0].get<double>(), cdf[i - 1][0].get<double>());
      EXPECT_GE(cdf[i][1].get<double>(), cdf[i - 1][1].get<double>());
    }
    EXPECT_DOUBLE_EQ(cdf.back()[1].get<double>(), 1.0);
    EXPECT_EQ(j["stamp"]["binary"], "bench_roundtrip");
    for (const char* k : {"build_flags", "compiler", "git", "codec_level"}) EXPECT_TRUE(j["stamp"].contains(k)) << k;
  }
  EXPECT_EQ(stop_server(), 0) << "the server exits 0 on SIGTERM";
}

TEST_F(RoundtripE2E, cppServerAnswersEveryOrderOfAClosedRun) {
  const int port = start_server("cpp");
  ASSERT_GT(port, 0);
  const json j = run_client("closed", port, "cpp");
  EXPECT_EQ(j["cell"]["flavour"], "cpp");
  for (const auto& r : j["runs"]) {
    EXPECT_GT(r["count"].get<int>(), 0);
    EXPECT_EQ(r["errors"], 0);
  }
  EXPECT_EQ(stop_server(), 0);
}

TEST_F(RoundtripE2E, unsupportedCombinationExitsThreeWithOneLine) {
  const fs::path err = dir_ / "err";
  const int rc =
      wait_exit(spawn({binary(), "server", "--flavour", "quickfix", "--model", "shard", "--port", "0"}, err.string()));
  EXPECT_EQ(rc, 3);
  EXPECT_EQ(slurp(err).rfind("unsupported:", 0), 0u) << slurp(err);
}

TEST_F(RoundtripE2E, clientExitsNonZeroWhenItCannotConnect) {
  const fs::path err = dir_ / "err";
  const int rc = wait_exit(
      spawn({binary(), "client", "--port", "1", "--duration", "0.1", "--runs", "1", "--connect-timeout", "0.2"},
            err.string()));
  EXPECT_NE(rc, 0);
  EXPECT_NE(slurp(err).find("cannot connect"), std::string::npos) << slurp(err);
}

}  // namespace
