// Each acceptor model, on each transport that runs here, serves 32
// connections with an echo protocol on loopback: every record is answered in
// order, and every connection closes cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>

#include "kite/engine/engine.hpp"
#include "kite/transport/transport.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

using transport::Kind;

constexpr int kConnections = 32;
constexpr int kRounds = 20;

std::string record(int conn, int round) {
  return "conn-" + std::to_string(conn) + " round-" + std::to_string(round) + " payload-" +
         std::string(static_cast<std::size_t>(10 + (conn * 7 + round) % 90), 'x') + "\n";
}

class ModelTest : public ::testing::TestWithParam<std::tuple<Kind, Model>> {
 protected:
  void SetUp() override {
    const auto [kind, model] = GetParam();
    const char* why = nullptr;
    if (kind == Kind::uring && !transport::uring_available(&why)) GTEST_SKIP() << "io_uring unavailable here: " << why;
    cfg.transport = kind;
    cfg.model = model;
    cfg.workers = 2;
    cfg.max_connections = kConnections;
    cfg.idle = {IdleKind::block, 0, 1000};  // two shared cores: do not spin in tests
    cfg.log = false;
  }
  EngineConfig cfg;
  EchoFactory factory;
};

TEST_P(ModelTest, servesThirtyTwoConnectionsInOrderAndClosesCleanly) {
  std::string error;
  auto engine = Engine::start(cfg, factory, error);
  ASSERT_TRUE(engine) << error;
  const std::uint16_t port = engine->port();
  ASSERT_NE(port, 0);

  if (cfg.model == Model::single) {
    // One session at a time: the 32 connections are served one after another.
    for (int c = 0; c < kConnections; ++c) {
      Client cl;
      ASSERT_TRUE(cl.connect(port));
      for (int r = 0; r < kRounds; ++r) {
        const std::string rec = record(c, r);
        ASSERT_TRUE(cl.send_all(rec));
        std::string got;
        ASSERT_TRUE(cl.read_line(got)) << "conn " << c << " round " << r;
        ASSERT_EQ(got, rec);
      }
      ASSERT_TRUE(cl.close_and_wait_eof()) << "conn " << c;
    }
  } else {
    std::vector<std::unique_ptr<Client>> clients;
    for (int c = 0; c < kConnections; ++c) {
      clients.push_back(std::make_unique<Client>());
      ASSERT_TRUE(clients.back()->connect(port));
    }
    for (int r = 0; r < kRounds; ++r) {
      // Two records per round in one write, so frames also arrive back to back.
      for (int c = 0; c < kConnections; ++c) ASSERT_TRUE(clients[c]->send_all(record(c, 2 * r) + record(c, 2 * r + 1)));
      for (int c = 0; c < kConnections; ++c) {
        for (int k = 0; k < 2; ++k) {
          std::string got;
          ASSERT_TRUE(clients[c]->read_line(got)) << "conn " << c << " round " << r;
          ASSERT_EQ(got, record(c, 2 * r + k));
        }
      }
    }
    for (auto& cl : clients) ASSERT_TRUE(cl->close_and_wait_eof());
  }

  ASSERT_TRUE(eventually([&] { return factory.released_count() == kConnections; }));
  EXPECT_EQ(factory.reason_count("peer closed"), kConnections);
  const EngineStats st = engine->stats();
  EXPECT_EQ(st.accepted, static_cast<std::uint64_t>(kConnections));
  EXPECT_EQ(st.closed, static_cast<std::uint64_t>(kConnections));
  EXPECT_EQ(st.refused, 0u);
  EXPECT_EQ(st.active, 0);
  if (cfg.model == Model::shard) {
    // SO_REUSEPORT spread the connections over both shards (2^-31 odds otherwise).
    ASSERT_EQ(st.per_thread_accepted.size(), 2u);
    EXPECT_GT(st.per_thread_accepted[0], 0);
    EXPECT_GT(st.per_thread_accepted[1], 0);
  }
  engine->stop();
}

std::string name(const ::testing::TestParamInfo<ModelTest::ParamType>& info) {
  return std::string(transport::to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllModels, ModelTest,
                         ::testing::Combine(::testing::Values(Kind::kernel, Kind::uring),
                                            ::testing::Values(Model::single, Model::mono, Model::pool, Model::shard)),
                         name);

// Counts its timer turns and asks for none for an hour after each.
class QuietProtocol final : public Protocol {
 public:
  explicit QuietProtocol(std::atomic<int>& turns) noexcept : turns_(turns) {}
  void on_connected(Outbound&, std::int64_t) noexcept override {}
  std::size_t on_data(const char*, std::size_t n, std::int64_t) noexcept override { return n; }
  int on_timer(std::int64_t) noexcept override {
    turns_.fetch_add(1);
    return 0;
  }
  std::int64_t timer_quiet_ns() noexcept override { return 3'600'000'000'000; }
  void on_disconnected(const char*, std::int64_t) noexcept override {}

 private:
  std::atomic<int>& turns_;
};

class QuietFactory final : public ProtocolFactory {
 public:
  Protocol* open(int) noexcept override { return new QuietProtocol(turns); }
  void release(Protocol* p) noexcept override { delete p; }
  std::atomic<int> turns{0};
};

TEST(TimerTurns, aQuietConnectionGetsNoTurnUntilTheEngineIsWoken) {
  EngineConfig cfg;
  cfg.model = Model::mono;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  QuietFactory f;
  std::string error;
  auto engine = Engine::start(cfg, f, error);
  ASSERT_TRUE(engine) << error;
  Client cl;
  ASSERT_TRUE(cl.connect(engine->port()));
  ASSERT_TRUE(eventually([&] { return f.turns.load() >= 1; }));  // the first, before it said when
  ASSERT_TRUE(cl.send_all("bytes do not bring a turn forward\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 500 timer intervals
  EXPECT_EQ(f.turns.load(), 1);
  engine->wake_timers();
  EXPECT_TRUE(eventually([&] { return f.turns.load() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(f.turns.load(), 2);
  engine->stop();
}

TEST(ModelSupport, reportsWhichTransportsCanRunWhichModels) {
  EXPECT_TRUE(supports(Kind::kernel, Model::pool));
  EXPECT_TRUE(supports(Kind::uring, Model::shard));
  EXPECT_FALSE(supports(Kind::vma, Model::shard));
  EXPECT_FALSE(supports(Kind::tcpdirect, Model::pool));
  EXPECT_FALSE(supports(Kind::socketxtreme, Model::shard));
  EXPECT_TRUE(supports(Kind::socketxtreme, Model::mono));
}

TEST(ModelSupport, startRefusesAModelTheTransportCannotRun) {
  EchoFactory f;
  EngineConfig cfg;
  cfg.transport = Kind::vma;
  cfg.model = Model::shard;
  cfg.log = false;
  std::string error;
  EXPECT_FALSE(Engine::start(cfg, f, error));
  EXPECT_NE(error.find("noshard"), std::string::npos) << error;
}

TEST(EngineErrors, portInUseIsAClearMessage) {
  EchoFactory f;
  EngineConfig cfg;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  std::string error;
  auto first = Engine::start(cfg, f, error);
  ASSERT_TRUE(first) << error;
  cfg.port = first->port();
  auto second = Engine::start(cfg, f, error);
  EXPECT_FALSE(second);
  EXPECT_NE(error.find("port in use"), std::string::npos) << error;
}

TEST(EngineErrors, aCoreThatDoesNotExistIsAClearMessage) {
  EchoFactory f;
  EngineConfig cfg;
  cfg.cores = {4095};
  cfg.log = false;
  std::string error;
  EXPECT_FALSE(Engine::start(cfg, f, error));
  EXPECT_NE(error.find("core 4095 does not exist"), std::string::npos) << error;
}

}  // namespace
}  // namespace kite::engine::test
