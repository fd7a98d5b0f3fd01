// The wire path (network path "nic") over a veth pair that stands in for the
// two ports of a cabled NIC pair. The test makes the pair beforehand in its
// own namespace, with addresses of its own and GRO on / TSO off (what busy
// polling needs on veth); a sitting moves the two ends into two namespaces,
// runs the server in one and the client in the other, and puts the ends back
// with their addresses: at its end, and, when it was killed, at the start of
// the next sitting (the results folder's wire-state.json). Needs root,
// iproute2 and 2 cores; SKIPPED otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kite/lab/process.hpp"
#include "kite/lab/sitting.hpp"
#include "kite/lab/util.hpp"
#include "kite/lab/wire.hpp"
#include "sitting_fixture.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string netns_of(pid_t pid) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net", ec);
  return ec ? "" : p.string();
}

// `ip -j addr show dev IF` in the test's namespace: null when the interface is not here.
json link_here(const std::string& ifname) {
  CommandResult r = run_command({"ip", "-j", "addr", "show", "dev", ifname});
  if (r.code != 0 || r.output.find('[') == std::string::npos) return nullptr;
  json j = json::parse(r.output.substr(r.output.find('['), r.output.rfind(']') - r.output.find('[') + 1));
  return j.empty() ? json(nullptr) : j[0];
}

std::vector<std::string> ipv4_of(const json& link) {
  std::vector<std::string> out;
  for (const auto& a : link.value("addr_info", json::array()))
    if (a.value("family", "") == "inet")
      out.push_back(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0)));
  return out;
}

bool is_up(const json& link) {
  const auto flags = link.value("flags", std::vector<std::string>{});
  return std::find(flags.begin(), flags.end(), "UP") != flags.end();
}

std::string ns_prefix(pid_t lab) { return "kite-" + std::to_string(lab % 1000000) + "-"; }

bool has_namespaces_of(pid_t lab) {
  for (const auto& n : list_namespaces())
    if (n.rfind(ns_prefix(lab), 0) == 0) return true;
  return false;
}

// Processes whose command line mentions `needle`, by the role their argv names (server or client).
std::map<std::string, std::set<std::string>> namespaces_by_role(const std::string& needle) {
  std::map<std::string, std::set<std::string>> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmd = read_text_or_empty(e.path().string() + "/cmdline");
    if (cmd.find(needle) == std::string::npos) continue;
    std::vector<std::string> argv;
    for (std::size_t at = 0; at < cmd.size();) {
      const std::size_t end = cmd.find('\0', at);
      argv.push_back(cmd.substr(at, end - at));
      if (end == std::string::npos) break;
      at = end + 1;
    }
    for (const auto& a : argv)
      if (a == "server" || a == "client") {
        const std::string ns = netns_of(std::stoi(name));
        if (!ns.empty()) out[a].insert(ns);
        break;
      }
  }
  return out;
}

class Wire : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the wire moves interfaces between network namespaces";
    if (host_online_cores().size() < 2) GTEST_SKIP() << "needs 2 cores";
    if (run_command({"ip", "-j", "link", "show", "lo"}).code != 0) GTEST_SKIP() << "needs iproute2 with -j";
    const std::string tag = std::to_string(getpid() % 100000);
    s_if_ = "kws" + tag;
    c_if_ = "kwc" + tag;
    if (run_command({"ip", "link", "add", s_if_, "type", "veth", "peer", "name", c_if_}).code != 0)
      GTEST_SKIP() << "cannot create a veth pair here";
    made_ = true;
    CommandResult ns = run_command({"ip", "netns", "add", "kite-wire-probe-" + tag});
    run_command({"ip", "netns", "del", "kite-wire-probe-" + tag});
    if (ns.code != 0) GTEST_SKIP() << "cannot create a network namespace here: " << trim(ns.output);
    // The ports' own set-up, which the sitting must give back.
    for (const auto& [i, a] : {std::pair{s_if_, kServerOwn}, std::pair{c_if_, kClientOwn}}) {
      ASSERT_EQ(run_command({"ip", "addr", "add", a, "dev", i}).code, 0);
      ASSERT_EQ(run_command({"ip", "link", "set", "dev", i, "up"}).code, 0);
      auto f = interface_offloads("", i, true);
      if (!f || !(*f & 1) || (*f & 2)) GTEST_SKIP() << i << " does not take GRO on / TSO off here";
    }
    src_ = test::env_or("KITE_SOURCE_DIR", ".");
    root_ = fs::temp_directory_path() / ("kite-lab-wire-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    machine_ =
        "name = \"wirebox\"\ncpu_model = \"Test CPU 9000\"\n[cores]\nserver = \"0\"\nclient = \"1\"\n"
        "[network]\npath = \"nic\"\n[[network.nic]]\nname = \"veth\"\nserver_if = \"" +
        s_if_ + "\"\nclient_if = \"" + c_if_ +
        "\"\nserver_addr = \"192.0.2.1\"\nclient_addr = \"192.0.2.2\"\nprefix = 30\n"
        "transports = [\"kernel\"]\n[transports]\navailable = [\"kernel\"]\n"
        "[transports.kernel]\nbusy_poll_usecs = 50\n";
  }
  void TearDown() override {
    unsetenv("FAKE_BR_SCALE");
    if (!root_.empty()) restore_wire(wire_state_path((root_ / "results").string()));
    for (pid_t p : {getpid(), lab_pid_})
      for (const auto& n : list_namespaces())
        if (p > 0 && n.rfind(ns_prefix(p), 0) == 0) {
          kill_processes_in(n);
          run_command({"ip", "netns", "del", n});
        }
    if (made_) run_command({"ip", "link", "del", s_if_});  // its peer goes with it
    if (!root_.empty()) fs::remove_all(root_);
  }

  // What a killed lab leaves running in its namespaces: its server (the client ends on its own).
  static void kill_processes_in(const std::string& ns) {
    CommandResult r = run_command({"ip", "netns", "pids", ns});
    std::istringstream in(r.output);
    for (std::string pid; in >> pid;)
      if (pid.find_first_not_of("0123456789") == std::string::npos) kill(std::stoi(pid), SIGKILL);
  }

  SittingOptions options(const std::string& build_dir, const std::string& matrix, const std::string& name) {
    SittingOptions o;
    o.source_dir = src_;
    o.build_dir = build_dir;
    o.results_dir = (root_ / "results").string();
    o.sitting_name = name;
    o.machine = parse_machine(machine_, "wirebox.toml");
    o.matrix = parse_matrix(matrix, "wire-matrix.toml");
    o.audit = false;  // other work on a shared machine could refuse the cell; the audit has its own tests
    o.check = false;
    o.progress = false;
    o.build_site = false;
    return o;
  }

  // Both ends are back in the test's namespace with their own addresses, up, and nothing is left over.
  void expect_put_back(pid_t lab) {
    for (const auto& [i, a] : {std::pair{s_if_, kServerOwn}, std::pair{c_if_, kClientOwn}}) {
      const json l = link_here(i);
      ASSERT_FALSE(l.is_null()) << i << " is not back in the root namespace";
      EXPECT_EQ(ipv4_of(l), std::vector<std::string>{a}) << i;
      EXPECT_TRUE(is_up(l)) << i;
    }
    EXPECT_FALSE(fs::exists(wire_state_path((root_ / "results").string())));
    EXPECT_FALSE(has_namespaces_of(lab));
  }

  static constexpr const char* kServerOwn = "198.51.100.1/24";
  static constexpr const char* kClientOwn = "198.51.100.2/24";
  std::string s_if_, c_if_, src_, machine_;
  fs::path root_;
  bool made_ = false;
  pid_t lab_pid_ = 0;
};

}  // namespace

// raw's real server and the real client, one closed single cell across the pair.
TEST_F(Wire, aSittingRunsServerAndClientInTwoNamespacesAcrossThePairAndPutsItBack) {
  SittingOptions o = options(fs::path(KITE_BENCH_ROUNDTRIP).parent_path().string(),
                             "flavours = ['raw']\ntransports = ['kernel']\nmodels = ['single']\nloops = ['closed']\n"
                             "runs = 2\nwarmup_s = 0.2\nduration_s = 0.3\n",
                             "wire");
  o.client_binary = KITE_BENCH_ROUNDTRIP;
  o.build_site = true;
  std::atomic<bool> done{false};
  std::map<std::string, std::set<std::string>> seen;
  std::thread watch([&] {
    while (!done) {
      for (const auto& [role, nss] : namespaces_by_role(root_.string())) seen[role].insert(nss.begin(), nss.end());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  SittingResult r = run_sitting(o);
  done = true;
  watch.join();
  ASSERT_EQ(r.exit_code, 0) << r.message;
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].state, CellState::measured) << r.cells[0].reason;

  // Two namespaces, neither the lab's.
  const std::string mine = netns_of(getpid());
  ASSERT_EQ(seen["server"].size(), 1u) << "the server was not seen, or in more than one namespace";
  ASSERT_EQ(seen["client"].size(), 1u) << "the client was not seen, or in more than one namespace";
  EXPECT_NE(*seen["server"].begin(), *seen["client"].begin());
  EXPECT_NE(*seen["server"].begin(), mine);
  EXPECT_NE(*seen["client"].begin(), mine);

  // The stamp records the path.
  const fs::path dir = root_ / "results" / "wirebox" / "wire";
  const json st = json::parse(read_text((dir / "sitting.json").string()));
  EXPECT_EQ(st["effective"]["network"], "nic");
  const json& w = st["wire"];
  ASSERT_TRUE(w.is_object()) << st.dump(1);
  EXPECT_EQ(w["server_ns"], ns_prefix(getpid()) + "srv");
  EXPECT_EQ(w["client_ns"], ns_prefix(getpid()) + "cli");
  ASSERT_EQ(w["pairs"].size(), 1u);
  const json& p = w["pairs"][0];
  EXPECT_EQ(p["name"], "veth");
  EXPECT_EQ(p["server"]["interface"], s_if_);
  EXPECT_EQ(p["server"]["address"], "192.0.2.1/30");
  EXPECT_EQ(p["server"]["addresses_before"], json::array({kServerOwn}));
  EXPECT_THAT(p["server"]["offloads"].get<std::string>(), HasSubstr("gro=on tso=off"));
  EXPECT_EQ(p["client"]["interface"], c_if_);
  EXPECT_EQ(p["client"]["netns"], ns_prefix(getpid()) + "cli");
  EXPECT_EQ(w["restored"]["done"].size(), 2u) << w["restored"].dump();
  EXPECT_TRUE(w["restored"]["failed"].empty()) << w["restored"].dump();
  const json cell = json::parse(read_text((dir / "raw_kernel_single_closed.json").string()));
  const json& eff = cell["stamp"]["effective"];
  EXPECT_EQ(eff["network"], "nic");
  EXPECT_EQ(eff["bind"], "192.0.2.1");
  EXPECT_EQ(eff["server_netns"], w["server_ns"]);
  EXPECT_EQ(eff["client_netns"], w["client_ns"]);
  EXPECT_EQ(eff["wire"]["pair"], "veth");
  EXPECT_THAT(eff["client_argv"].dump(), HasSubstr("\"--host\",\"192.0.2.1\""));
  // Busy polling across the pair (why the veth ends have GRO on and TSO off).
  EXPECT_EQ(cell["busy_poll"]["usecs"], 50);
  if (cell["busy_poll"]["read_back"].contains("matches")) {
    EXPECT_EQ(cell["busy_poll"]["read_back"]["matches"], true) << cell["busy_poll"].dump();
  }
  // The page says so where it describes the sitting's network.
  const std::string page =
      read_text((root_ / "results" / "site" / "wirebox" / "sitting" / "wire" / "index.html").string());
  EXPECT_THAT(page, HasSubstr("the NIC pairs moved into two namespaces"));
  EXPECT_THAT(page, HasSubstr(s_if_ + " 192.0.2.1/30 in " + ns_prefix(getpid()) + "srv"));

  expect_put_back(getpid());
}

// A sitting killed mid-cell (SIGKILL: no clean-up at all) leaves the ends in
// its namespaces and the state file; the next sitting puts them back first.
TEST_F(Wire, theNextSittingPutsBackWhatAKilledSittingMoved) {
  const std::string bench_run = test::env_or("KITE_BINARY_DIR", ".") + std::string("/bench-run");
  if (access(bench_run.c_str(), X_OK) != 0) GTEST_SKIP() << "bench-run not built at " << bench_run;
  test::place_fake_bench_roundtrip(src_, root_ / "build");
  std::ofstream(root_ / "machine.toml") << machine_;
  std::ofstream(root_ / "matrix.toml") << "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\n"
                                          "loops = ['closed']\nruns = 5\nwarmup_s = 0.5\nduration_s = 1\n";
  SpawnSpec s;
  s.argv = {bench_run,
            "--machine",
            (root_ / "machine.toml").string(),
            "--matrix",
            (root_ / "matrix.toml").string(),
            "--build-dir",
            (root_ / "build").string(),
            "--results",
            (root_ / "results").string(),
            "--source-dir",
            src_,
            "--sitting",
            "killed",
            "--no-audit",
            "--no-check",
            "--no-site",
            "--no-progress"};
  s.env = {{"FAKE_BR_SCALE", "1"}};
  s.stdout_path = (root_ / "out.log").string();
  s.stderr_path = (root_ / "err.log").string();
  Child lab = Child::spawn(s);
  lab_pid_ = lab.pid();
  const std::string state = wire_state_path((root_ / "results").string());
  bool moved = false;
  for (int i = 0; i < 200 && !moved; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    moved = fs::exists(state) && link_here(s_if_).is_null() && link_here(c_if_).is_null() &&
            fs::exists(root_ / "results" / "wirebox" / "killed" / ".work" / "cpp_kernel_single_closed" / "ready");
  }
  ASSERT_TRUE(moved) << "the sitting did not move the pair: " << read_text_or_empty((root_ / "err.log").string());
  kill(lab.pid(), SIGKILL);
  ASSERT_TRUE(lab.wait_for(10.0).has_value());
  for (const auto& role : {"srv", "cli"}) kill_processes_in(ns_prefix(lab.pid()) + role);
  ASSERT_TRUE(fs::exists(state)) << "a killed sitting leaves its state file";
  const WireState left = WireState::from_json(json::parse(read_text(state)));
  EXPECT_EQ(left.owner, lab.pid());
  ASSERT_EQ(left.interfaces.size(), 2u);
  EXPECT_TRUE(link_here(s_if_).is_null()) << "still in the killed sitting's namespace";

  // The next sitting, on the same results folder: it puts the pair back before anything else.
  setenv("FAKE_BR_SCALE", "0.05", 1);
  SittingResult r = run_sitting(options((root_ / "build").string(),
                                        "flavours = ['cpp']\ntransports = ['kernel']\nmodels = ['single']\n"
                                        "loops = ['closed']\nruns = 2\nwarmup_s = 0.2\nduration_s = 0.2\n",
                                        "next"));
  ASSERT_EQ(r.exit_code, 0) << r.message;
  EXPECT_EQ(r.cells[0].state, CellState::measured) << r.cells[0].reason;
  const json st = json::parse(read_text((root_ / "results" / "wirebox" / "next" / "sitting.json").string()));
  const json& at_start = st["wire_restored_at_start"];
  EXPECT_THAT(at_start["owner"].get<std::string>(), HasSubstr("pid " + std::to_string(lab.pid())));
  ASSERT_EQ(at_start["done"].size(), 2u) << at_start.dump();
  EXPECT_THAT(at_start["done"][0].get<std::string>(), HasSubstr("back with 198.51.100."));
  EXPECT_TRUE(st["wire"]["restored"]["failed"].empty()) << st["wire"].dump();
  expect_put_back(lab.pid());
  expect_put_back(getpid());
}

// The state file round-trips, and a wire whose owner still runs is left alone.
TEST(WireState, roundTripsAndIsLeftAloneWhileItsOwnerRuns) {
  WireState s;
  s.owner = getpid();
  s.owner_start = process_start_time(getpid());
  s.sitting = "results/hp/x";
  s.server_ns = "kite-1-srv";
  s.client_ns = "kite-1-cli";
  s.interfaces.push_back({"mlxA",
                          "mellanox",
                          "server",
                          "kite-1-srv",
                          "10.9.1.1/24",
                          true,
                          {{"inet", "10.9.1.1", 24, "10.9.1.255"}},
                          "mlxA: gro=on tso=off"});
  const WireState back = WireState::from_json(s.to_json());
  EXPECT_EQ(back.to_json(), s.to_json());
  ASSERT_FALSE(s.owner_start.empty());

  const fs::path dir = fs::temp_directory_path() / ("kite-lab-wire-state-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string file = wire_state_path(dir.string());
  write_text_atomic(file, s.to_json().dump());
  WireRestore r = restore_wire(file);
  EXPECT_TRUE(r.found);
  EXPECT_TRUE(r.held) << "its owner (this process) runs";
  EXPECT_TRUE(fs::exists(file));
  write_text_atomic(file, "{\"owner\": 1}");
  r = restore_wire(file);
  EXPECT_FALSE(r.held);
  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_THAT(r.failed[0], HasSubstr("not a wire state file"));
  EXPECT_TRUE(fs::exists(file)) << "a file that cannot be read is kept";
  EXPECT_TRUE(restore_wire((dir / "absent.json").string()).done.empty());
  EXPECT_FALSE(restore_wire((dir / "absent.json").string()).found);
  fs::remove_all(dir);
}
