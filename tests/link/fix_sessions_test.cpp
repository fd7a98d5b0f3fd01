// Real FIX sessions (the link's SessionConnection as the engine's Protocol)
// on every acceptor model and transport: 32 initiator sessions on one client
// thread log on, send orders one after another, get each ExecutionReport in
// order, log out, and every connection closes cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "kite/codec/codec.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"
#include "kite/session/store.hpp"
#include "support/engine_testing.hpp"

namespace kite::engine::test {
namespace {

namespace tag = codec::tag;
using session::Session;

constexpr int kSessions = 32;
constexpr int kOrders = 20;

// Acceptor application: every NewOrderSingle gets an ExecutionReport (New)
// echoing its ClOrdID.
class OrderServer final : public session::Application {
 public:
  void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "D") return;
    std::string_view clordid;
    if (ix.get(tag::ClOrdID, clordid) != codec::Get::ok) return;
    const std::uint64_t n = ++orders;
    s.send("8", [&](codec::MessageWriter& w) {
      w.add_uint(tag::OrderID, n);
      w.add_uint(tag::ExecID, n);
      w.add_string(tag::ClOrdID, clordid);
      w.add_char(tag::ExecType, '0');
      w.add_char(tag::OrdStatus, '0');
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_uint(tag::LeavesQty, 100);
      w.add_uint(tag::CumQty, 0);
      w.add_uint(tag::AvgPx, 0);
    });
  }
  std::atomic<std::uint64_t> orders{0};
};

// Initiator application: after Logon sends order 1; each ExecutionReport for
// the expected ClOrdID sends the next; after the last one, logs out.
class OrderClient final : public session::Application {
 public:
  explicit OrderClient(int id) : id_(id) {}
  void on_logon(Session& s) noexcept override {
    logged_on = true;
    send_next(s);
  }
  void on_logout(Session&, const char*) noexcept override { logged_out = true; }
  void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "8") return;
    std::string_view clordid;
    if (ix.get(tag::ClOrdID, clordid) == codec::Get::ok && clordid == expected_)
      ++answered;
    else
      ++wrong;
    if (answered + wrong == kOrders)
      s.logout("done");
    else
      send_next(s);
  }
  bool logged_on = false;
  bool logged_out = false;
  int answered = 0;
  int wrong = 0;

 private:
  void send_next(Session& s) {
    expected_ = cat("C", id_, "-", answered + wrong + 1);
    s.send("D", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, expected_);
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_timestamp(tag::TransactTime, clock_.now_ns());
      w.add_uint(tag::OrderQty, 100);
      w.add_char(tag::OrdType, '2');
      w.add_decimal(tag::Price, codec::Decimal{10125, -2});
    });
  }
  int id_;
  std::string expected_;
  session::SystemClock clock_;
};

// Deals the engine's connections to the initiator sessions one by one.
class Initiators final : public ProtocolFactory {
 public:
  Initiators(const session::Clock& clock, session::Logger& log, int first, int count) {
    for (int i = first; i < first + count; ++i) {
      session::SessionSettings st;
      st.role = session::Role::initiator;
      st.sender_comp_id = cat("CLI", i);
      st.target_comp_id = "SRV";
      st.heart_bt_int = 30;
      apps.push_back(std::make_unique<OrderClient>(i));
      stores.push_back(std::make_unique<session::MemoryStore>());
      sessions.push_back(std::make_unique<Session>(st, *stores.back(), *apps.back(), clock, log));
      factories.push_back(std::make_unique<link::InitiatorFactory>(*sessions.back(), clock, log));
    }
  }
  Protocol* open(int id) noexcept override {
    if (next_ >= factories.size()) return nullptr;
    link::InitiatorFactory* f = factories[next_++].get();
    Protocol* p = f->open(id);
    owner_[p] = f;
    return p;
  }
  void release(Protocol* p) noexcept override {
    owner_[p]->release(p);
    ++released;
  }
  std::vector<std::unique_ptr<OrderClient>> apps;
  std::vector<std::unique_ptr<session::MemoryStore>> stores;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<link::InitiatorFactory>> factories;
  int released = 0;

 private:
  std::size_t next_ = 0;
  std::map<Protocol*, link::InitiatorFactory*> owner_;
};

// Counts the acceptor's releases (the engine serialises factory calls).
class CountingFactory final : public ProtocolFactory {
 public:
  explicit CountingFactory(ProtocolFactory& inner) : inner_(inner) {}
  Protocol* open(int id) noexcept override { return inner_.open(id); }
  void release(Protocol* p) noexcept override {
    inner_.release(p);
    released.fetch_add(1);
  }
  std::atomic<int> released{0};

 private:
  ProtocolFactory& inner_;
};

class FixSessions : public ::testing::TestWithParam<std::tuple<transport::Kind, Model>> {};

TEST_P(FixSessions, thirtyTwoSessionsOfOrdersAreAnsweredInOrderAndLogOutCleanly) {
  const auto [kind, model] = GetParam();
  const char* why = nullptr;
  if (kind == transport::Kind::uring && !transport::uring_available(&why)) GTEST_SKIP() << why;

  session::SystemClock clock;
  session::NullLogger log;
  session::SessionRegistry registry(clock, log);
  OrderServer server_app;
  for (int i = 0; i < kSessions; ++i) {
    session::SessionSettings st;
    st.role = session::Role::acceptor;
    st.sender_comp_id = "SRV";
    st.target_comp_id = cat("CLI", i);
    registry.add(st, server_app);
  }
  link::AcceptorLimits limits;
  limits.max_connections = kSessions;
  link::AcceptorFactory acceptor(registry, limits);
  CountingFactory counted(acceptor);

  EngineConfig cfg;
  cfg.model = model;
  cfg.transport = kind;
  cfg.workers = 2;
  cfg.max_connections = kSessions;
  cfg.idle = {IdleKind::block, 0, 1000};
  cfg.log = false;
  std::string error;
  auto engine = Engine::start(cfg, counted, error);
  ASSERT_TRUE(engine) << error;

  // single serves one session at a time: its sessions run one after another.
  const int batch = model == Model::single ? 1 : kSessions;
  std::vector<std::unique_ptr<Initiators>> clients;
  for (int first = 0; first < kSessions; first += batch) {
    clients.push_back(std::make_unique<Initiators>(clock, log, first, batch));
    InitiatorConfig icfg;
    icfg.transport = kind;
    icfg.port = engine->port();
    icfg.sessions = batch;
    icfg.threads = 1;  // 32 sessions on one client thread, as the load generator runs them
    icfg.idle = {IdleKind::block, 0, 1000};
    auto init = Initiator::start(icfg, *clients.back(), error);
    ASSERT_TRUE(init) << error;
    ASSERT_TRUE(init->wait_closed(30000)) << "sessions from " << first << " did not finish";
    init->stop();
  }

  int total = 0;
  for (const auto& c : clients) {
    EXPECT_EQ(c->released, batch);
    for (const auto& app : c->apps) {
      EXPECT_TRUE(app->logged_on);
      EXPECT_TRUE(app->logged_out);
      EXPECT_EQ(app->answered, kOrders);
      EXPECT_EQ(app->wrong, 0);
      total += app->answered;
    }
  }
  EXPECT_EQ(total, kSessions * kOrders);
  EXPECT_EQ(server_app.orders.load(), static_cast<std::uint64_t>(kSessions * kOrders));
  ASSERT_TRUE(eventually([&] { return counted.released.load() == kSessions; }));
  const EngineStats st = engine->stats();
  EXPECT_EQ(st.accepted, static_cast<std::uint64_t>(kSessions));
  EXPECT_EQ(st.refused, 0u);
  EXPECT_EQ(st.slow_consumers, 0u);
  engine->stop();
}

INSTANTIATE_TEST_SUITE_P(AllModels, FixSessions,
                         ::testing::Combine(::testing::Values(transport::Kind::kernel, transport::Kind::uring),
                                            ::testing::Values(Model::single, Model::mono, Model::pool, Model::shard)),
                         [](const auto& info) {
                           return cat(transport::to_string(std::get<0>(info.param)), "_",
                                      to_string(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace kite::engine::test
