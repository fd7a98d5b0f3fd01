// A peer that stops reading: its send buffer stays bounded, the configured
// policy acts, and the other connections on the same thread keep being
// served (counted in round trips, not timed).
#include <gtest/gtest.h>

#include "kite/engine/engine.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

constexpr std::size_t kSendBuffer = 32 * 1024;

EngineConfig slow_config(transport::Kind kind, SendFullPolicy policy) {
  EngineConfig cfg;
  cfg.model = Model::mono;
  cfg.transport = kind;
  cfg.send_buffer = kSendBuffer;
  cfg.recv_buffer = 16 * 1024;
  cfg.socket_sndbuf = 8 * 1024;  // small kernel buffers: the engine's own buffer fills soon
  cfg.socket_rcvbuf = 8 * 1024;
  cfg.send_full = policy;
  cfg.send_full_limit_ms = 300;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  return cfg;
}

class SlowConsumer : public ::testing::TestWithParam<transport::Kind> {
 protected:
  void SetUp() override {
    const char* why = nullptr;
    if (GetParam() == transport::Kind::uring && !transport::uring_available(&why)) GTEST_SKIP() << why;
  }
};

TEST_P(SlowConsumer, isDisconnectedAfterTheLimitWhileOthersOnTheThreadKeepBeingServed) {
  EchoFactory factory;
  std::string error;
  auto engine = Engine::start(slow_config(GetParam(), SendFullPolicy::disconnect), factory, error);
  ASSERT_TRUE(engine) << error;

  Client slow;
  ASSERT_TRUE(slow.connect(engine->port(), 4096));
  constexpr int kGood = 4;
  std::vector<std::unique_ptr<Client>> good;
  for (int i = 0; i < kGood; ++i) {
    good.push_back(std::make_unique<Client>());
    ASSERT_TRUE(good.back()->connect(engine->port()));
  }
  const std::string chunk = std::string(1023, 's') + "\n";
  std::vector<int> trips(kGood, 0);
  std::vector<int> trips_while_stuck(kGood, 0);
  bool slow_broken = false;
  // Bounded: at most 20000 rounds and 20 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int round = 0; round < 20000 && std::chrono::steady_clock::now() < deadline; ++round) {
    if (!slow_broken && slow.send_some(chunk) < 0) slow_broken = true;
    const bool stuck = engine->stats().send_full_events > 0;
    for (int i = 0; i < kGood; ++i) {
      const std::string rec = cat("good-", i, "-", round, "\n");
      std::string got;
      ASSERT_TRUE(good[i]->send_all(rec) && good[i]->read_line(got)) << "good " << i << " round " << round;
      ASSERT_EQ(got, rec);
      ++trips[i];
      if (stuck && engine->stats().slow_consumers == 0) ++trips_while_stuck[i];
    }
    if (engine->stats().slow_consumers == 1 && round > 50) break;
  }
  const EngineStats st = engine->stats();
  EXPECT_EQ(st.slow_consumers, 1u);
  EXPECT_GT(st.send_full_events, 0u);
  ASSERT_TRUE(eventually([&] { return factory.reason_count("slow consumer") == 1; }));
  EXPECT_LE(engine->stats().tx_high_water, kSendBuffer);  // never grew past its bound
  EXPECT_TRUE(slow.wait_eof());                           // the server closed it
  for (int i = 0; i < kGood; ++i) EXPECT_GT(trips_while_stuck[i], 10) << "good " << i;
  // The survivors are still served after the disconnect.
  for (int i = 0; i < kGood; ++i) {
    std::string got;
    ASSERT_TRUE(good[i]->send_all("after\n") && good[i]->read_line(got));
    EXPECT_EQ(got, "after\n");
  }
  engine->stop();
}

TEST_P(SlowConsumer, waitPolicyBackPressuresAndDeliversEverythingInOrderOnceThePeerReads) {
  EchoFactory factory;
  std::string error;
  auto engine = Engine::start(slow_config(GetParam(), SendFullPolicy::wait), factory, error);
  ASSERT_TRUE(engine) << error;
  Client slow;
  ASSERT_TRUE(slow.connect(engine->port(), 4096));

  // Write without reading until the server's send buffer is full.
  constexpr int kRecords = 2000;
  std::string all;
  for (int i = 0; i < kRecords; ++i) all += cat("rec-", i, std::string(90, '.'), "\n");
  std::size_t sent = 0;
  ASSERT_TRUE(eventually(
      [&] {
        if (sent < all.size()) {
          const ssize_t n = slow.send_some(all.substr(sent, 8192));
          if (n > 0) sent += static_cast<std::size_t>(n);
        }
        return engine->stats().send_full_events > 0;
      },
      10000));
  EXPECT_EQ(engine->stats().slow_consumers, 0u);

  // Now read everything while sending the rest: every record, in order.
  std::size_t received = 0;
  for (int i = 0; i < kRecords; ++i) {
    while (sent < all.size()) {
      const ssize_t n = slow.send_some(all.substr(sent, 8192));
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    std::string got;
    ASSERT_TRUE(slow.read_line(got)) << "record " << i;
    ASSERT_EQ(got, all.substr(received, got.size()));
    received += got.size();
  }
  EXPECT_EQ(received, all.size());
  EXPECT_EQ(engine->stats().slow_consumers, 0u);
  EXPECT_LE(engine->stats().tx_high_water, kSendBuffer);
  ASSERT_TRUE(slow.close_and_wait_eof());
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(Transports, SlowConsumer, ::testing::Values(transport::Kind::kernel, transport::Kind::uring),
                         [](const auto& info) { return std::string(transport::to_string(info.param)); });

}  // namespace
}  // namespace kite::engine::test
