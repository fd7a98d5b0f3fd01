// The pool's front door waits when every worker is full and goes on when a
// session ends and room appears; nothing is refused or dropped.
#include <gtest/gtest.h>

#include "kite/engine/engine.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

std::string echo_once(Client& c, const std::string& rec) {
  std::string got;
  if (!c.send_all(rec) || !c.read_line(got)) return "<no reply>";
  return got;
}

class PoolFrontDoor : public ::testing::TestWithParam<transport::Kind> {};

TEST_P(PoolFrontDoor, waitsWhenAllWorkersAreFullAndHandsOverWhenRoomAppears) {
  const char* why = nullptr;
  if (GetParam() == transport::Kind::uring && !transport::uring_available(&why)) GTEST_SKIP() << why;
  EchoFactory factory;
  EngineConfig cfg;
  cfg.model = Model::pool;
  cfg.transport = GetParam();
  cfg.workers = 2;
  cfg.max_connections = 2;  // per worker: room for 4 sessions in all
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  std::string error;
  auto engine = Engine::start(cfg, factory, error);
  ASSERT_TRUE(engine) << error;

  std::vector<std::unique_ptr<Client>> full;
  for (int i = 0; i < 4; ++i) {
    full.push_back(std::make_unique<Client>());
    ASSERT_TRUE(full.back()->connect(engine->port()));
    const std::string rec = cat("first-", i, "\n");
    ASSERT_EQ(echo_once(*full.back(), rec), rec);
  }
  EXPECT_EQ(engine->stats().front_door_waits, 0u);

  // A fifth connection: the kernel completes the handshake, the front door
  // accepts it but every worker is full, so it waits with it in hand.
  Client fifth;
  ASSERT_TRUE(fifth.connect(engine->port()));
  ASSERT_TRUE(fifth.send_all("fifth\n"));
  ASSERT_TRUE(eventually([&] { return engine->stats().front_door_waits == 1; }));
  EXPECT_TRUE(fifth.nothing_to_read(50));  // not served while it waits
  EXPECT_EQ(engine->stats().accepted, 4u);

  // Room appears: one session ends; the waiting connection is handed over.
  ASSERT_TRUE(full[1]->close_and_wait_eof());
  std::string got;
  ASSERT_TRUE(fifth.read_line(got));
  EXPECT_EQ(got, "fifth\n");
  EXPECT_EQ(echo_once(fifth, "again\n"), "again\n");

  const EngineStats st = engine->stats();
  EXPECT_EQ(st.accepted, 5u);
  EXPECT_EQ(st.refused, 0u);
  EXPECT_EQ(st.front_door_waits, 1u);
  // The other sessions were served throughout.
  EXPECT_EQ(echo_once(*full[0], "still\n"), "still\n");
  EXPECT_EQ(echo_once(*full[3], "still\n"), "still\n");
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(Transports, PoolFrontDoor, ::testing::Values(transport::Kind::kernel, transport::Kind::uring),
                         [](const auto& info) { return std::string(transport::to_string(info.param)); });

}  // namespace
}  // namespace kite::engine::test
