// Initiator sessions (32 on one thread, or one thread each) connect through
// the same transports and drive the protocol: on_connected, on_data, on_timer.
#include <gtest/gtest.h>

#include "kite/engine/engine.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

// Sends numbered records one at a time, each after the previous reply, then
// closes. Checks every reply is the record it sent.
class Pinger final : public Protocol {
 public:
  explicit Pinger(int id, int count) : id_(id), count_(count) {}
  void on_connected(Outbound& out, std::int64_t) noexcept override {
    out_ = &out;
    send_next();
  }
  std::size_t on_data(const char* d, std::size_t n, std::int64_t) noexcept override {
    std::size_t used = 0;
    while (const void* nl = std::memchr(d + used, '\n', n - used)) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - (d + used)) + 1;
      if (std::string_view(d + used, len) == expected_) ++answered; else ++wrong;
      used += len;
      if (answered + wrong == count_) out_->close("done", true);
      else send_next();
    }
    return used;
  }
  int on_timer(std::int64_t) noexcept override {
    ++timer_turns;
    return 0;
  }
  void on_disconnected(const char* why, std::int64_t) noexcept override { reason = why; }

  int answered = 0, wrong = 0;
  std::uint64_t timer_turns = 0;
  std::string reason;

 private:
  void send_next() {
    expected_ = cat("s", id_, "-", answered + wrong, "\n");
    char* p = out_->claim(expected_.size());
    if (p == nullptr) return;
    std::memcpy(p, expected_.data(), expected_.size());
    out_->commit(expected_.size());
  }
  int id_, count_;
  Outbound* out_ = nullptr;
  std::string expected_;
};

class PingerFactory final : public ProtocolFactory {
 public:
  explicit PingerFactory(int count) : count_(count) {}
  Protocol* open(int id) noexcept override {
    all.push_back(std::make_unique<Pinger>(id, count_));
    return all.back().get();
  }
  void release(Protocol*) noexcept override { ++released; }
  std::vector<std::unique_ptr<Pinger>> all;  // kept for the checks
  int released = 0;

 private:
  int count_;
};

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
