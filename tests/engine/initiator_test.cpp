// Initiator sessions (32 on one thread, or one thread each) connect through
// the same transports and drive the protocol: on_connected, on_data, on_timer.
#include <gtest/gtest.h>

#include "kite/engine/engine.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

struct Case {
  transport::Kind kind;
  int threads;
};

class InitiatorTest : public ::testing::TestWithParam<Case> {};

TEST_P(InitiatorTest, sessionsGetEveryReplyInOrderAndCloseCleanly) {
  const Case c = GetParam();
  const char* why = nullptr;
  if (c.kind == transport::Kind::uring && !transport::uring_available(&why)) GTEST_SKIP() << why;
  EchoFactory echo;
  EngineConfig ecfg;
  ecfg.model = Model::mono;
  ecfg.transport = c.kind;
  ecfg.idle = {IdleKind::block, 0, 1000};
  ecfg.log = false;
  std::string error;
  auto engine = Engine::start(ecfg, echo, error);
  ASSERT_TRUE(engine) << error;

  constexpr int kSessions = 32, kCount = 50;
  PingerFactory pingers(kCount);
  InitiatorConfig icfg;
  icfg.transport = c.kind;
  icfg.port = engine->port();
  icfg.sessions = kSessions;
  icfg.threads = c.threads;
  icfg.idle = {IdleKind::block, 0, 1000};
  auto init = Initiator::start(icfg, pingers, error);
  ASSERT_TRUE(init) << error;
  ASSERT_TRUE(init->wait_closed(20000));
  EXPECT_EQ(init->threads().size(), static_cast<std::size_t>(c.threads));
  init->stop();

  ASSERT_EQ(pingers.all.size(), static_cast<std::size_t>(kSessions));
  EXPECT_EQ(pingers.released, kSessions);
  for (const auto& p : pingers.all) {
    EXPECT_EQ(p->answered, kCount);
    EXPECT_EQ(p->wrong, 0);
    EXPECT_EQ(p->reason, "done");
    EXPECT_GT(p->timer_turns, 0u);
  }
  ASSERT_TRUE(eventually([&] { return echo.released_count() == kSessions; }));
  EXPECT_EQ(echo.reason_count("peer closed"), kSessions);
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(Layouts, InitiatorTest,
                         ::testing::Values(Case{transport::Kind::kernel, 1}, Case{transport::Kind::kernel, 32},
                                           Case{transport::Kind::uring, 1}),
                         [](const auto& info) {
                           return cat(transport::to_string(info.param.kind), "_threads", info.param.threads);
                         });

}  // namespace
}  // namespace kite::engine::test
