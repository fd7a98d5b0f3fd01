// Engine threads are named, pin themselves to their configured cores, and say
// where they run; shown from /proc/self/task/*/{comm,stat} and sched_getaffinity.
#include <gtest/gtest.h>
#include <sched.h>

#include <dirent.h>
#include <fstream>
#include <sstream>

#include "kite/engine/engine.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

struct TaskView {
  int tid;
  std::string comm;
  int processor;  // /proc/.../stat field 39: CPU last run on
  std::vector<int> affinity;
};

std::vector<TaskView> tasks() {
  std::vector<TaskView> out;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    TaskView t{};
    t.tid = std::atoi(e->d_name);
    const std::string base = std::string("/proc/self/task/") + e->d_name;
    std::ifstream(base + "/comm") >> t.comm;
    std::ifstream st(base + "/stat");
    std::string line;
    std::getline(st, line);
    // Fields after the parenthesised comm start at field 3.
    const auto close = line.rfind(')');
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 39 && rest >> field; ++i) {
      if (i == 39) t.processor = std::stoi(field);
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(t.tid, sizeof set, &set) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) t.affinity.push_back(c);
      }
    }
    out.push_back(t);
  }
  ::closedir(d);
  return out;
}

const TaskView* find(const std::vector<TaskView>& ts, const std::string& comm) {
  for (const auto& t : ts) {
    if (t.comm == comm) return &t;
  }
  return nullptr;
}

TEST(EngineThreads, poolThreadsAreNamedAndPinnedToTheirCores) {
  const std::vector<int> cores = allowed_cores();
  ASSERT_FALSE(cores.empty());
  const int a = cores.front();
  const int b = cores.back();
  EchoFactory factory;
  EngineConfig cfg;
  cfg.model = Model::pool;
  cfg.workers = 2;
  cfg.cores = {a, b};
  cfg.coordinator_core = a;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  std::string error;
  auto engine = Engine::start(cfg, factory, error);
  ASSERT_TRUE(engine) << error;

  // Some traffic, so the threads have run since pinning.
  Client c;
  ASSERT_TRUE(c.connect(engine->port()));
  std::string got;
  ASSERT_TRUE(c.send_all("ping\n") && c.read_line(got));

  const auto ts = tasks();
  const std::pair<const char*, int> expected[] = {{"kite-front", a}, {"kite-pool-0", a}, {"kite-pool-1", b}};
  for (const auto& [name, core] : expected) {
    const TaskView* t = find(ts, name);
    ASSERT_NE(t, nullptr) << name << " not in /proc/self/task";
    EXPECT_EQ(t->affinity, std::vector<int>{core}) << name;
    EXPECT_EQ(t->processor, core) << name;
  }
  // The threads' own reports agree with /proc.
  for (const ThreadInfo& info : engine->threads()) {
    const TaskView* t = find(ts, info.name);
    ASSERT_NE(t, nullptr) << info.describe();
    EXPECT_EQ(t->tid, info.tid);
    EXPECT_EQ(info.affinity, t->affinity) << info.describe();
    EXPECT_EQ(info.cpu, info.cores.front()) << info.describe();
  }
  engine->stop();
}

TEST(EngineThreads, shardAndMonoThreadsCarryTheirModelNames) {
  EchoFactory factory;
  EngineConfig cfg;
  cfg.model = Model::shard;
  cfg.workers = 2;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  std::string error;
  auto shard = Engine::start(cfg, factory, error);
  ASSERT_TRUE(shard) << error;
  cfg.model = Model::mono;
  auto mono = Engine::start(cfg, factory, error);
  ASSERT_TRUE(mono) << error;
  const auto ts = tasks();
  EXPECT_NE(find(ts, "kite-shard-0"), nullptr);
  EXPECT_NE(find(ts, "kite-shard-1"), nullptr);
  EXPECT_NE(find(ts, "kite-mono"), nullptr);
  EXPECT_EQ(find(ts, "kite-front"), nullptr);
}

TEST(EngineThreads, everyIdleStrategyServesTraffic) {
  for (IdleKind k : {IdleKind::busy_spin, IdleKind::spin_yield, IdleKind::block}) {
    EchoFactory factory;
    EngineConfig cfg;
    cfg.model = Model::mono;
    cfg.idle = {k, 10, 1000};
    cfg.log = false;
    std::string error;
    auto engine = Engine::start(cfg, factory, error);
    ASSERT_TRUE(engine) << error;
    Client c;
    ASSERT_TRUE(c.connect(engine->port()));
    for (int i = 0; i < 10; ++i) {
      std::string got;
      const std::string rec = std::string(to_string(k)) + "-" + std::to_string(i) + "\n";
      ASSERT_TRUE(c.send_all(rec) && c.read_line(got)) << to_string(k);
      EXPECT_EQ(got, rec);
    }
    engine->stop();
  }
}

}  // namespace
}  // namespace kite::engine::test
