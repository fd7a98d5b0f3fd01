// Machine, matrix and flavour files: every kind of mistake gives an error
// naming the file, the key and the problem; the shipped files load.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#include "kite/lab/config.hpp"
#include "kite/lab/util.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const char* kMachine = R"(
name = "box"
cpu_model = "Test CPU 9000"
[cores]
housekeeping = "0"
coordinator = 1
server = "2-3"
client = "4,5"
reserved = "6"
)";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string source_dir() {
  const char* s = std::getenv("KITE_SOURCE_DIR");
  return s ? s : ".";
}

// A shipped machine file; one that describes its own host (local = true, as
// scan.toml does) is read here as another host's, since its cores need not exist here.
Machine load_shipped_machine(const std::string& path) {
  try {
    return load_machine(path);
  } catch (const ConfigError& e) {
    if (std::string(e.what()).find("does not exist on this host") == std::string::npos) throw;
  }
  std::string text = read_text(path);
  const std::string local = "\nlocal = true\n";
  if (const auto at = text.find(local); at != std::string::npos)
    text.replace(at, local.size(), "\nlocal = false\ncpu_model = \"another host's CPU\"\n");
  return parse_machine(text, path);
}

}  // namespace

TEST(CoreList, parsesRangesAndListsAndFormatsThemBack) {
  EXPECT_EQ(parse_core_list("9-12,14"), (CoreSet{9, 10, 11, 12, 14}));
  EXPECT_EQ(parse_core_list(""), CoreSet{});
  EXPECT_EQ(format_core_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_THROW(parse_core_list("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_core_list("a"), std::invalid_argument);
  EXPECT_THROW(parse_core_list("1,1"), std::invalid_argument);
}

TEST(MachineFile, readsEveryRoleAndDerivesTheEpochFromTheCpuModel) {
  Machine m = parse_machine(kMachine, "box.toml");
  EXPECT_EQ(m.server, (CoreSet{2, 3}));
  EXPECT_EQ(m.client, (CoreSet{4, 5}));
  ASSERT_TRUE(m.coordinator.has_value());
  EXPECT_EQ(*m.coordinator, 1);
  EXPECT_EQ(m.measured_cores(), (CoreSet{1, 2, 3, 4, 5}));
  EXPECT_EQ(m.network, "loopback");
  EXPECT_EQ(m.transports, std::vector<std::string>{"kernel"});
  EXPECT_EQ(m.epoch, epoch_of("Test CPU 9000", host_cpu_identity())) << "the model string and this host's CPU identity";
  Machine other = parse_machine(std::string(kMachine).replace(std::string(kMachine).find("9000"), 4, "9001"), "b");
  EXPECT_NE(other.epoch, m.epoch);
}

TEST(MachineFile, busyPollPerModelOverridesTheTransportsValue) {
  const Machine m = parse_machine(std::string(kMachine) +
                                      "[transports.kernel]\nbusy_poll_usecs = 20\n"
                                      "[transports.kernel.busy_poll_by_model]\nsingle = 50\nmono = 0\n",
                                  "box.toml");
  EXPECT_EQ(m.busy_poll_for("kernel", "single"), 50);
  EXPECT_EQ(m.busy_poll_for("kernel", "mono"), 0);
  EXPECT_EQ(m.busy_poll_for("kernel", "pool"), 20);
  EXPECT_EQ(m.busy_poll_for("uring", "single"), 0) << "SO_BUSY_POLL is kernel TCP's";
  EXPECT_EQ(m.busy_poll_source("kernel", "mono"), "transports.kernel.busy_poll_by_model.mono");
  EXPECT_EQ(m.busy_poll_source("kernel", "shard"), "transports.kernel.busy_poll_usecs");
  EXPECT_THAT(error_of([] {
                parse_machine(std::string(kMachine) + "[transports.kernel.busy_poll_by_model]\nsingel = 50\n", "b");
              }),
              HasSubstr("transports.kernel.busy_poll_by_model.singel: unknown key"));
  EXPECT_THAT(error_of([] {
                parse_machine(std::string(kMachine) + "[transports.kernel.busy_poll_by_model]\nmono = -1\n", "b");
              }),
              HasSubstr("transports.kernel.busy_poll_by_model.mono: must be >= 0"));
}

TEST(MachineFile, rejectsAnUnknownKeyNamingFileAndKey) {
  std::string e = error_of([] { parse_machine(std::string(kMachine) + "servers = \"1\"\n", "box.toml"); });
  EXPECT_THAT(e, HasSubstr("box.toml"));
  EXPECT_THAT(e, HasSubstr("cores.servers"));
  EXPECT_THAT(e, HasSubstr("unknown key"));
  EXPECT_THAT(
      error_of([] { parse_machine("name='x'\ncpu_model='y'\ncolour='red'\n[cores]\nserver='0'\nclient='1'\n", "m"); }),
      HasSubstr("colour: unknown key"));
}

TEST(MachineFile, rejectsACoreInTwoRoles) {
  std::string text = kMachine;
  text.replace(text.find("client = \"4,5\""), 14, "client = \"3,4\"");
  std::string e = error_of([&] { parse_machine(text, "box.toml"); });
  EXPECT_THAT(e, HasSubstr("core 3 is in two roles (server and client)"));
  EXPECT_THAT(error_of([] {
                parse_machine("name='x'\ncpu_model='y'\n[cores]\ncoordinator=0\nserver='0-1'\nclient='2'\n", "m");
              }),
              HasSubstr("core 0 is in two roles (coordinator and server)"));
}

TEST(MachineFile, rejectsAServerCoreThatDoesNotExistOnThisHost) {
  std::string e =
      error_of([] { parse_machine("name='x'\nlocal=true\n[cores]\nserver='4095'\nclient='0'\n", "here.toml"); });
  EXPECT_THAT(e, HasSubstr("cores.server"));
  EXPECT_THAT(e, HasSubstr("server core 4095 does not exist on this host"));
  // A file for another host may name cores this one lacks.
  EXPECT_NO_THROW(parse_machine("name='x'\ncpu_model='y'\n[cores]\nserver='4095'\nclient='0'\n", "other.toml"));
}

TEST(MachineFile, rejectsEmptyServerOrClientSets) {
  EXPECT_THAT(error_of([] { parse_machine("name='x'\ncpu_model='y'\n[cores]\nserver=''\nclient='1'\n", "m"); }),
              HasSubstr("cores.server: empty"));
  EXPECT_THAT(error_of([] { parse_machine("name='x'\ncpu_model='y'\n[cores]\nserver='1'\n", "m"); }),
              HasSubstr("cores.client: empty"));
}

TEST(MachineFile, rejectsWrongTypesUnknownTransportsAndBadNetworks) {
  const std::string head = "name='x'\ncpu_model='y'\n[cores]\nserver='0'\nclient='1'\n";
  EXPECT_THAT(error_of([&] { parse_machine(head + "[transports]\navailable=['kernel','dpdk']\n", "m"); }),
              HasSubstr("unknown transport 'dpdk'"));
  EXPECT_THAT(error_of([&] { parse_machine(head + "[transports.kernel]\nbusy_poll_usecs='50'\n", "m"); }),
              HasSubstr("transports.kernel.busy_poll_usecs: expected an integer, got a string"));
  EXPECT_THAT(error_of([&] { parse_machine(head + "[network]\npath='netns'\nserver_addr='192.168.1.1'\n", "m"); }),
              HasSubstr("10.77.0.0/16"));
  EXPECT_THAT(error_of([&] { parse_machine(head + "[network]\npath='nic'\n", "m"); }), HasSubstr("network.nic"));
  EXPECT_THAT(error_of([&] { parse_machine(head + "[network]\npath='wifi'\n", "m"); }),
              HasSubstr("unknown network path 'wifi'"));
  EXPECT_THAT(error_of([] { parse_machine("name='x'\n[cores\n", "broken.toml"); }), HasSubstr("broken.toml:2"));
}

TEST(MatrixFile, rejectsUnknownKeysWrongTypesAndUnknownNames) {
  const std::string ok = "flavours=['cpp']\ntransports=['kernel']\nmodels=['single']\nloops=['closed']\n";
  EXPECT_NO_THROW(parse_matrix(ok, "q.toml"));
  EXPECT_THAT(error_of([&] { parse_matrix(ok + "run=3\n", "q.toml"); }), HasSubstr("q.toml: run: unknown key"));
  EXPECT_THAT(error_of([&] { parse_matrix(ok + "runs='3'\n", "q.toml"); }),
              HasSubstr("runs: expected an integer, got a string"));
  EXPECT_THAT(error_of([&] { parse_matrix(ok + "[open]\nrate=1.5\n", "q.toml"); }),
              HasSubstr("open.rate: expected an integer"));
  EXPECT_THAT(error_of([] {
                parse_matrix("flavours=['cpp']\ntransports=['kernel']\nmodels=['pool','ring']\nloops=['open']\n", "q");
              }),
              HasSubstr("models: unknown model 'ring'"));
  EXPECT_THAT(
      error_of([] { parse_matrix("flavours=['cpp']\ntransports=['tcp']\nmodels=['pool']\nloops=['open']\n", "q"); }),
      HasSubstr("transports: unknown transport 'tcp'"));
  EXPECT_THAT(
      error_of([] { parse_matrix("flavours=['cpp']\ntransports=['kernel']\nmodels=['pool']\nloops=['half']\n", "q"); }),
      HasSubstr("loops: unknown loop 'half'"));
  EXPECT_THAT(error_of([&] { parse_matrix(ok + "[sessions]\nsingle=2\n", "q"); }), HasSubstr("sessions.single"));
  EXPECT_THAT(error_of([&] { parse_matrix(ok + "idle='sleep'\n", "q"); }), HasSubstr("unknown idle strategy 'sleep'"));
  EXPECT_THAT(error_of([] { parse_matrix("transports=['kernel']\nmodels=['pool']\nloops=['open']\n", "q"); }),
              HasSubstr("flavours: missing"));
  const std::string rounds = ok + "pairing='rounds'\n[rounds]\nmin_rounds=8\nmax_rounds=20\n";
  EXPECT_EQ(parse_matrix(rounds + "budget_rounds=10\n", "q").rounds.budget_rounds, 10);
  EXPECT_EQ(parse_matrix(rounds, "q").rounds.budget_rounds, 0) << "0: the budget is max_rounds";
  EXPECT_THAT(error_of([&] { parse_matrix(rounds + "budget_rounds=21\n", "q"); }),
              HasSubstr("rounds.budget_rounds: must be min_rounds..max_rounds"));
  EXPECT_THAT(error_of([&] { parse_matrix(rounds + "budget_rounds=4\n", "q"); }), HasSubstr("rounds.budget_rounds"));
  // A paired run's client lives warm-up + run: two audit samples must fit in it.
  const std::string short_runs = ok + "warmup_s=0.1\nduration_s=0.15\npairing='rounds'\n";
  EXPECT_THAT(error_of([&] { parse_matrix(short_runs, "q"); }),
              HasSubstr("audit.interval_s: must be at most half of warmup_s + duration_s in a paired matrix (0.2 s "
                        "against runs of 0.25 s)"));
  EXPECT_EQ(parse_matrix(short_runs + "[audit]\ninterval_s=0.1\n", "q").audit_interval_s, 0.1);
  EXPECT_NO_THROW(parse_matrix(ok + "warmup_s=0.1\nduration_s=0.15\n", "q"))
      << "a sequential client lives all its runs";
}

TEST(MatrixFile, anUnknownFlavourIsReportedWithItsMissingFile) {
  std::string dir = source_dir() + "/lab/flavours";
  EXPECT_THAT(error_of([&] { load_flavours(dir, {"cpp", "cobol"}); }), HasSubstr("unknown flavour 'cobol'"));
}

TEST(FlavourFile, expandsPlaceholdersAndRejectsUnknownOnes) {
  Flavour f = parse_flavour("name='x'\nbinary='srv'\nargs=['--port','{port}','--model={model}']\n", "x.toml");
  EXPECT_EQ(expand(f.args[2], {{"model", "pool"}}, "x"), "--model=pool");
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='srv'\nargs=['{prot}']\n", "x.toml"); }),
              HasSubstr("unknown placeholder {prot}"));
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nargs=[]\n", "x.toml"); }), HasSubstr("binary: missing"));
}

TEST(Markers, comeFromTheTransportThenTheHostThenTheFlavour) {
  Machine m = parse_machine(std::string(kMachine) + "[transports]\navailable=['kernel','vma','tcpdirect']\n", "m");
  Flavour f = parse_flavour(
      "name='f'\nbinary='b'\nargs=[]\nmodels=['single','mono','pool']\n"
      "transports=['kernel','vma','onload','tcpdirect']\n",
      "f");
  EXPECT_EQ(marker_for({"f", "tcpdirect", "pool", "open"}, m, f), "nopool");
  EXPECT_EQ(marker_for({"f", "vma", "shard", "open"}, m, f), "noshard");
  EXPECT_EQ(marker_for({"f", "onload", "single", "open"}, m, f), "unmeasurable");
  EXPECT_EQ(marker_for({"f", "kernel", "shard", "closed"}, m, f), "unsupported");
  EXPECT_EQ(marker_for({"f", "uring", "single", "closed"}, m, f), "unmeasurable");
  EXPECT_EQ(marker_for({"f", "vma", "pool", "closed"}, m, f), "");
  EXPECT_EQ(marker_for({"f", "kernel", "mono", "closed"}, m, f), "");
}

TEST(MatrixFile, transportModelsPlaysATransportOnTheModelsItNamesOnly) {
  const std::string base =
      "flavours=['cpp']\ntransports=['kernel','tls']\nmodels=['single','mono','pool']\nloops=['closed']\n";
  const Matrix mx = parse_matrix(base + "[transport_models]\ntls=['single','mono']\n", "m.toml");
  std::vector<std::string> ids;
  for (const Cell& c : plan_cells(mx)) ids.push_back(c.id());
  EXPECT_EQ(ids, (std::vector<std::string>{"cpp/kernel/single/closed", "cpp/kernel/mono/closed",
                                           "cpp/kernel/pool/closed", "cpp/tls/single/closed", "cpp/tls/mono/closed"}));
  EXPECT_THAT(error_of([&] { parse_matrix(base + "[transport_models]\nuring=['single']\n", "m.toml"); }),
              HasSubstr("transport_models.uring"));
  EXPECT_THAT(error_of([&] { parse_matrix(base + "[transport_models]\ntls=['shard']\n", "m.toml"); }),
              HasSubstr("not one of the matrix's models"));
}

TEST(MatrixFile, theDefaultMatrixPlaysTlsOnTheSingleAndMonoModelsOnly) {
  const Matrix mx = load_matrix(source_dir() + "/lab/matrices/default.toml");
  int tls = 0;
  for (const Cell& c : plan_cells(mx))
    if (c.transport == "tls") {
      ++tls;
      EXPECT_TRUE(c.model == "single" || c.model == "mono") << c.id();
    }
  EXPECT_EQ(tls, static_cast<int>(2 * mx.loops.size() * mx.flavours.size()));
}

TEST(Markers, tlsIsMeasurableWhereverKernelIsAndUnsupportedByAFlavourThatLacksIt) {
  Machine m = parse_machine(std::string(kMachine) + "[transports]\navailable=['kernel']\n", "m");
  EXPECT_TRUE(m.has_transport("tls"));
  Machine none = parse_machine(std::string(kMachine) + "[transports]\navailable=['onload']\n", "m");
  EXPECT_FALSE(none.has_transport("tls"));
  Flavour with = parse_flavour("name='f'\nbinary='b'\nargs=[]\ntransports=['kernel','tls']\n", "f");
  Flavour without = parse_flavour("name='g'\nbinary='b'\nargs=[]\ntransports=['kernel']\n", "g");
  EXPECT_EQ(marker_for({"f", "tls", "single", "closed"}, m, with), "");
  EXPECT_EQ(marker_for({"f", "tls", "pool", "closed"}, m, with), "");
  EXPECT_EQ(marker_for({"g", "tls", "mono", "closed"}, m, without), "unsupported");
  EXPECT_EQ(marker_for({"f", "tls", "single", "closed"}, none, with), "unmeasurable");
}

TEST(Markers, aPoolOrShardWithMoreWorkersThanServerCoresIsOversubscribed) {
  Machine m = parse_machine(std::string(kMachine) + "[transports]\navailable=['kernel']\n", "m");
  Flavour f = parse_flavour("name='f'\nbinary='b'\nargs=[]\n", "f");
  const Workers over{3, 2, true};
  EXPECT_EQ(marker_for({"f", "kernel", "pool", "open"}, m, f, over), "oversubscribed");
  EXPECT_EQ(marker_for({"f", "kernel", "shard", "open"}, m, f, over), "oversubscribed");
  EXPECT_EQ(marker_for({"f", "kernel", "mono", "open"}, m, f, over), "");
  EXPECT_EQ(marker_for({"f", "uring", "pool", "open"}, m, f, over), "unmeasurable");  // the host comes first
  EXPECT_EQ(marker_for({"f", "kernel", "pool", "open"}, m, f, Workers{2, 2, true}), "");
}

TEST(MatrixFile, workersAreAutoByDefaultOnePerServerCore) {
  const std::string mx = "flavours=['cpp']\ntransports=['kernel']\nmodels=['pool']\nloops=['open']\n";
  Machine m = parse_machine(std::string(kMachine), "m");
  Workers w = workers_for(parse_matrix(mx, "q"), m);
  EXPECT_EQ(w.count, static_cast<int>(m.server.size()));
  EXPECT_EQ(w.from(), "server cores");
  EXPECT_FALSE(w.oversubscribed());
  EXPECT_EQ(workers_for(parse_matrix(mx + "[server]\nworkers = 'auto'\n", "q"), m).count, w.count);
  Workers explicit_ = workers_for(parse_matrix(mx + "[server]\nworkers = 64\n", "q"), m);
  EXPECT_EQ(explicit_.count, 64);
  EXPECT_EQ(explicit_.from(), "matrix");
  EXPECT_TRUE(explicit_.oversubscribed());
  EXPECT_THAT(error_of([&] { parse_matrix(mx + "[server]\nworkers = 'many'\n", "q"); }), HasSubstr("server.workers"));
  EXPECT_THAT(error_of([&] { parse_matrix(mx + "[server]\nworkers = 0\n", "q"); }), HasSubstr("server.workers"));
}

TEST(ShippedFiles, everyMachineMatrixAndFlavourFileLoads) {
  namespace fs = std::filesystem;
  std::string src = source_dir();
  int n = 0;
  for (const char* sub : {"machines", "matrices", "flavours"})
    for (const auto& e : fs::directory_iterator(src + "/lab/" + sub)) {
      if (e.path().extension() != ".toml") continue;
      std::string p = e.path().string();
      if (std::string(sub) == "machines") {
        Machine m = load_shipped_machine(p);
        EXPECT_FALSE(m.server.empty()) << p;
      } else if (std::string(sub) == "matrices") {
        Matrix mx = load_matrix(p);
        EXPECT_NO_THROW(load_flavours(src + "/lab/flavours", mx.flavours)) << p;
      } else {
        EXPECT_NO_THROW(load_flavour(p)) << p;
      }
      ++n;
    }
  EXPECT_GE(n, 7);
  Machine hp = load_machine(src + "/lab/machines/example-hp.toml");
  EXPECT_EQ(hp.housekeeping, parse_core_list("0-7"));
  EXPECT_EQ(hp.server, parse_core_list("9-12"));
  EXPECT_EQ(hp.reserved, CoreSet{13});
  EXPECT_EQ(hp.client, parse_core_list("14-17"));
  EXPECT_EQ(hp.kernel_busy_poll_usecs, 50);
  EXPECT_EQ(hp.nics.size(), 2u);
}

// scan.toml describes the host it runs on (its CPU is read there), so it is
// checked here as another host's file: the seeds' core map and busy polling.
TEST(MachineFiles, scanHasTheSeedsCoreMap) {
  const Machine scan = load_shipped_machine(source_dir() + "/lab/machines/scan.toml");
  EXPECT_EQ(scan.name, "scan");
  EXPECT_EQ(scan.housekeeping, parse_core_list("0-9"));
  ASSERT_TRUE(scan.coordinator.has_value());
  EXPECT_EQ(*scan.coordinator, 19);
  CoreSet measured = scan.measured_cores();
  measured.insert(measured.end(), scan.reserved.begin(), scan.reserved.end());
  std::sort(measured.begin(), measured.end());
  EXPECT_EQ(measured, parse_core_list("10-19")) << "the isolated cores, and only they, are measured or reserved";
  EXPECT_EQ(scan.busy_poll_for("kernel", "single"), 50);
  EXPECT_EQ(scan.busy_poll_for("kernel", "mono"), 0);
  EXPECT_EQ(scan.nics.size(), 2u);
  if (host_online_cores().size() < 20) {  // on a smaller host the file is refused for its cores
    EXPECT_THAT(error_of([] { load_machine(source_dir() + "/lab/machines/scan.toml"); }),
                HasSubstr("does not exist on this host"));
  }
}

TEST(LocalMachine, derivesSeparateServerAndClientCoresOnThisHost) {
  if (host_online_cores().size() < 2) GTEST_SKIP() << "this host has one core: no local machine can be derived";
  Machine m = derive_local_machine();
  EXPECT_TRUE(m.local);
  EXPECT_FALSE(m.server.empty());
  EXPECT_FALSE(m.client.empty());
  EXPECT_TRUE(m.has_transport("kernel"));
  EXPECT_EQ(m.cpu_model, host_cpu_model());
}

TEST(Sha256, matchesKnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(std::string(1000, 'a')).substr(0, 16), "41edece42d63e8d9");
}

TEST(FlavourFile, readsBuildIdentityAndClaimsAndRejectsUnknownNames) {
  Flavour f = parse_flavour(
      "name='x'\nbinary='srv'\nargs=[]\nbuild=['cargo','build','{source_dir}']\n"
      "requires=['cargo']\nartifacts=['lib/x.so']\n[cannot]\nbusy_poll='no option'\n"
      "[not_claimed]\nthreads='its own'\ngap='later'\n",
      "x.toml");
  EXPECT_EQ(f.build.size(), 3u);
  EXPECT_EQ(f.required_tools, std::vector<std::string>{"cargo"});
  EXPECT_EQ(f.artifacts, std::vector<std::string>{"lib/x.so"});
  EXPECT_EQ(f.cannot.at("busy_poll"), "no option");
  EXPECT_EQ(f.not_claimed.at("threads"), "its own");
  EXPECT_EQ(f.not_claimed.at("gap"), "later");
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='b'\nargs=[]\n[cannot]\nnagle='?'\n", "x.toml"); }),
              HasSubstr("x.toml: cannot.nagle: unknown transport setting"));
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='b'\nargs=[]\n[not_claimed]\nmoods='?'\n", "x.toml"); }),
              HasSubstr("not_claimed.moods: unknown contract part or check"));
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='b'\nargs=[]\n[not_claimed]\norders=''\n", "x.toml"); }),
              HasSubstr("not_claimed.orders: needs the reason"));
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='b'\nargs=[]\nrequires=['/usr/bin/cargo']\n", "x.toml"); }),
              HasSubstr("requires: '/usr/bin/cargo' is not a command name"));
  EXPECT_THAT(error_of([] { parse_flavour("name='x'\nbinary='b'\nargs=[]\nbuild=['make','{tagret}']\n", "x.toml"); }),
              HasSubstr("unknown placeholder {tagret}"));
}

TEST(FlavourFile, placeholderValuesGiveEveryPlaceholderAndCoresAsACommaList) {
  ServerStart s;
  s.model = "pool";
  s.cores = {9, 10, 11};
  s.port = 4000;
  auto v = placeholder_values(s);
  EXPECT_EQ(v.size(), kPlaceholders.size());
  EXPECT_EQ(v.at("cores"), "9,10,11");
  s.tls_cert = "/s/.work/tls/server.pem";
  s.tls_key = "/s/.work/tls/server.key";
  s.tls_ca = "/s/.work/tls/ca.pem";
  v = placeholder_values(s);
  EXPECT_EQ(v.at("tls_cert"), s.tls_cert);
  EXPECT_EQ(v.at("tls_key"), s.tls_key);
  EXPECT_EQ(v.at("tls_ca"), s.tls_ca);
  Flavour f = parse_flavour("name='x'\nbinary='b'\nargs=['--model={model}','{port}']\n", "x.toml");
  EXPECT_EQ(server_argv(f, "/bin/b", s), (std::vector<std::string>{"/bin/b", "--model=pool", "4000"}));
}

// {acceptor_config}: the lab renders the cell's kite-acceptor file once, for
// every flavour on Kite's engine, beside the ready file.
TEST(FlavourFile, anAcceptorConfigPlaceholderWritesTheCellsFileFirst) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kite-acceptor-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ServerStart s;
  s.model = "mono";
  s.transport = "kernel";
  s.sessions = 2;
  s.cores = {3};
  s.idle = "block";
  s.store = "postgresql";
  s.store_commit = "sync";
  s.store_conninfo = "host=/tmp dbname=\"m1\"";
  s.ready_file = (dir / "ready").string();
  Flavour f = parse_flavour("name='x'\nbinary='b'\nargs=['--acceptor-config', '{acceptor_config}']\n", "x.toml");
  const std::vector<std::string> argv = server_argv(f, "/bin/b", s);
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[2], s.ready_file + ".acceptor.toml");
  std::ifstream in(argv[2]);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_THAT(text, HasSubstr("model = \"mono\"\n"));
  EXPECT_THAT(text, HasSubstr("cores = [3]\n"));
  EXPECT_THAT(text, HasSubstr("idle = \"block\"\n"));
  EXPECT_THAT(text, HasSubstr("PostgreSQLStoreConnectionString = \"host=/tmp dbname=\\\"m1\\\"\"\n"));
  EXPECT_THAT(text, HasSubstr("PostgreSQLStoreCommit = \"sync\"\n"));
  EXPECT_THAT(text, HasSubstr("TargetCompID = \"BENCH1\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("BENCH2")));

  // A flavour that does not name it gets no file; one that cannot be written is an error.
  std::filesystem::remove(argv[2]);
  server_argv(parse_flavour("name='y'\nbinary='b'\nargs=['{port}']\n", "y.toml"), "/bin/b", s);
  EXPECT_FALSE(std::filesystem::exists(argv[2]));
  s.ready_file = (dir / "no such folder" / "ready").string();
  try {
    server_argv(f, "/bin/b", s);
    ADD_FAILURE() << "no error for an acceptor file that cannot be written";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot write the acceptor file"));
  }
  std::filesystem::remove_all(dir);
}

TEST(MatrixFile, aCellSelectionKeepsOnlyTheCellsItMatches) {
  const std::string m =
      "flavours=['cpp','rust-pure','raw']\ntransports=['kernel','uring']\nmodels=['single','mono']\n"
      "loops=['closed','open']\n";
  EXPECT_EQ(plan_cells(parse_matrix(m, "q")).size(), 24u);
  const Matrix sel = parse_matrix(m + "cells=['rust-pure/*/mono/closed','cpp/kernel/*/*']\n", "q");
  std::vector<std::string> ids;
  for (const auto& c : plan_cells(sel)) ids.push_back(c.id());
  EXPECT_EQ(ids, (std::vector<std::string>{"cpp/kernel/single/closed", "cpp/kernel/single/open",
                                           "cpp/kernel/mono/closed", "rust-pure/kernel/mono/closed",
                                           "cpp/kernel/mono/open", "rust-pure/uring/mono/closed"}));
  Matrix globbed = parse_matrix(m, "q");
  globbed.cells = split_cell_selection("r*/kernel/single/open,");
  ASSERT_EQ(globbed.cells.size(), 1u);
  EXPECT_EQ(plan_cells(globbed).size(), 2u) << "rust-pure and raw";
  EXPECT_THAT(error_of([&] { parse_matrix(m + "cells=['cpp/kernel/single']\n", "q"); }),
              HasSubstr("cells: 'cpp/kernel/single' is not FLAVOUR/TRANSPORT/MODEL/LOOP"));
  EXPECT_THAT(error_of([&] { parse_matrix(m + "cells=['quickfix/*/*/*']\n", "q"); }),
              HasSubstr("'quickfix/*/*/*' matches no cell of the matrix"));
  EXPECT_EQ(check_cell_selection(parse_matrix(m, "q"), {"cpp/uring/mono/open"}), "");
}

// The wire path's pairs: both ends in one subnet (each end gets its address in
// its own namespace, where the subnet is the only route), an interface in one
// pair only; each transport crosses the first pair that lists it.
TEST(MachineFile, nicPairsShareASubnetAndEachInterfaceIsInOnePair) {
  const std::string head = std::string(kMachine) + "[network]\npath = 'nic'\n";
  auto pair = [](const std::string& name, const std::string& s_if, const std::string& c_if, const std::string& s,
                 const std::string& c, const std::string& extra) {
    return "[[network.nic]]\nname = '" + name + "'\nserver_if = '" + s_if + "'\nclient_if = '" + c_if +
           "'\nserver_addr = '" + s + "'\nclient_addr = '" + c + "'\n" + extra;
  };
  const Machine m =
      parse_machine(head + pair("mlx", "mlxA", "mlxB", "10.9.1.1", "10.9.1.2", "transports = ['kernel', 'vma']\n") +
                        pair("sfc", "sfcA", "sfcB", "10.9.0.1", "10.9.0.2", "prefix = 30\ntransports = ['onload']\n"),
                    "m");
  ASSERT_EQ(m.nics.size(), 2u);
  EXPECT_EQ(m.nics[0].prefix, 24) << "the default";
  EXPECT_EQ(m.nics[1].prefix, 30);
  EXPECT_EQ(m.nic_for("vma")->name, "mlx");
  EXPECT_EQ(m.nic_for("onload")->name, "sfc");
  EXPECT_EQ(m.nic_for("tls")->name, "mlx") << "tls crosses the kernel pair";
  EXPECT_EQ(m.nic_for("uring")->name, "mlx") << "a transport no pair lists crosses the first";
  EXPECT_THAT(error_of([&] { parse_machine(head + pair("p", "a0", "a1", "10.9.1.1", "10.9.2.2", ""), "m"); }),
              HasSubstr("network.nic[0].client_addr: 10.9.2.2 is not in 10.9.1.1/24's subnet"));
  EXPECT_THAT(error_of([&] { parse_machine(head + pair("p", "a0", "a0", "10.9.1.1", "10.9.1.2", ""), "m"); }),
              HasSubstr("the two ends of a pair are two interfaces"));
  EXPECT_THAT(error_of([&] {
                parse_machine(head + pair("p", "a0", "a1", "10.9.1.1", "10.9.1.2", "") +
                                  pair("q", "b0", "a1", "10.9.0.1", "10.9.0.2", ""),
                              "m");
              }),
              HasSubstr("interface 'a1' is in two pairs (p and q)"));
  EXPECT_THAT(
      error_of([&] { parse_machine(head + pair("p", "a0", "a1", "10.9.1.1", "10.9.1.2", "prefix = 31\n"), "m"); }),
      HasSubstr("network.nic[0].prefix: must be 8..30"));
}

// libvma's maintenance thread goes on a reserved core, through
// VMA_INTERNAL_THREAD_AFFINITY in the environment of vma and socketxtreme
// processes; onload gets its own env only.
TEST(MachineFile, vmasThreadIsPlacedOnAReservedCoreThroughTheLaunchersEnvironment) {
  const std::string vendor = std::string(kMachine) +
                             "[transports]\navailable = ['kernel', 'onload', 'vma', 'socketxtreme']\n"
                             "[transports.onload]\nenv = { EF_POLL_USEC = 100000 }\n";
  const Machine m =
      parse_machine(vendor + "[transports.vma]\nenv = { VMA_SPEC = 'latency' }\ninternal_thread_core = 6\n", "m");
  ASSERT_TRUE(m.vma_internal_thread_core.has_value());
  EXPECT_EQ(*m.vma_internal_thread_core, 6);
  using Env = std::map<std::string, std::string>;
  EXPECT_EQ(m.launcher_env("vma"), (Env{{"VMA_INTERNAL_THREAD_AFFINITY", "6"}, {"VMA_SPEC", "latency"}}));
  EXPECT_EQ(m.launcher_env("socketxtreme"), m.launcher_env("vma")) << "socketxtreme runs under libvma";
  EXPECT_EQ(m.launcher_env("onload"), (Env{{"EF_POLL_USEC", "100000"}}));
  EXPECT_TRUE(m.launcher_env("kernel").empty());
  EXPECT_FALSE(parse_machine(vendor, "m").vma_internal_thread_core.has_value());
  EXPECT_EQ(parse_machine(vendor, "m").launcher_env("vma").count("VMA_INTERNAL_THREAD_AFFINITY"), 0u);
  EXPECT_THAT(error_of([&] { parse_machine(vendor + "[transports.vma]\ninternal_thread_core = 2\n", "m"); }),
              HasSubstr("transports.vma.internal_thread_core: core 2 is not one of cores.reserved (6)"));
  EXPECT_THAT(error_of([&] {
                parse_machine(vendor +
                                  "[transports.vma]\nenv = { VMA_INTERNAL_THREAD_AFFINITY = '6' }\n"
                                  "internal_thread_core = 6\n",
                              "m");
              }),
              HasSubstr("both place libvma's thread"));
  // The seeds' hosts keep one reserved core for it.
  Machine hp = load_machine(source_dir() + "/lab/machines/example-hp.toml");
  ASSERT_TRUE(hp.vma_internal_thread_core.has_value());
  EXPECT_EQ(*hp.vma_internal_thread_core, 13);
  EXPECT_EQ(hp.launcher_env("vma").at("VMA_INTERNAL_THREAD_AFFINITY"), "13");
  EXPECT_EQ(hp.busy_poll_for("kernel", "single"), 50) << "hp busy-polls its single-session kernel cells";
  EXPECT_EQ(hp.busy_poll_for("kernel", "mono"), 0) << "and leaves the 32-session ones interrupt-driven";
  Machine scan = load_shipped_machine(source_dir() + "/lab/machines/scan.toml");
  ASSERT_TRUE(scan.vma_internal_thread_core.has_value());
  EXPECT_EQ(*scan.vma_internal_thread_core, 14);
}

// [build_only]: transports declared that a server has only where their SDK
// is installed; each must be one the flavour declares.
TEST(FlavourFile, buildOnlyNamesDeclaredTransportsWithTheirReason) {
  const std::string f = "name='f'\nbinary='b'\nargs=[]\ntransports=['kernel','tcpdirect']\n";
  const Flavour ok = parse_flavour(f + "[build_only]\ntcpdirect = 'needs zf/zf.h'\n", "f.toml");
  EXPECT_EQ(ok.build_only, (std::map<std::string, std::string>{{"tcpdirect", "needs zf/zf.h"}}));
  EXPECT_THAT(error_of([&] { parse_flavour(f + "[build_only]\nsocketxtreme = 'x'\n", "f.toml"); }),
              HasSubstr("build_only.socketxtreme: 'socketxtreme' is not one of the flavour's transports"));
  EXPECT_THAT(error_of([&] { parse_flavour(f + "[build_only]\ntcpdirect = ' '\n", "f.toml"); }),
              HasSubstr("needs the reason"));
  EXPECT_THAT(error_of([&] { parse_flavour(f + "[build_only]\ndpdk = 'x'\n", "f.toml"); }),
              HasSubstr("unknown transport 'dpdk'"));
  // rust-pure declares both native vendor APIs, build-only, besides its preload transports.
  const Flavour rp = load_flavour(source_dir() + "/lab/flavours/rust-pure.toml");
  for (const char* t : {"kernel", "onload", "vma", "tcpdirect", "socketxtreme"})
    EXPECT_NE(std::find(rp.transports.begin(), rp.transports.end(), t), rp.transports.end()) << t;
  EXPECT_EQ(rp.build_only.size(), 2u);
  EXPECT_THAT(rp.build_only.at("tcpdirect"), HasSubstr("TCPDirect SDK"));
  EXPECT_THAT(rp.build_only.at("socketxtreme"), HasSubstr("vma_extra.h"));
}
