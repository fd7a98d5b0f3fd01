// The postgresql store against a real server: the ctest fixture
// session_pg_server_start starts a private one (tests/support/pg_server.sh)
// and names it in the file KITE_PG_STATE. Where it could not start, every
// test here is skipped with its reason ("KITE-SKIP:" marks it for ctest).
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kite/session/held_output.hpp"
#include "kite/session/pg_store.hpp"
#include "support/session_testing.hpp"

namespace kite::session {
namespace {

using namespace std::chrono_literals;

// The server the fixture started: its conninfo, or why there is none.
struct PgServer {
  std::string state_file;
  std::string conninfo;
  std::string skip;

  static const PgServer& get() {
    static const PgServer s = [] {
      PgServer p;
      const char* f = std::getenv("KITE_PG_STATE");
      if (f == nullptr) {
        p.skip = "KITE_PG_STATE is not set (run through ctest: its fixture starts the server)";
        return p;
      }
      p.state_file = f;
      std::ifstream in(f);
      if (!in) p.skip = std::string("no server state in ") + f + " (the fixture did not run)";
      for (std::string line; std::getline(in, line);) {
        if (line.rfind("conninfo=", 0) == 0) p.conninfo = line.substr(9);
        if (line.rfind("skip=", 0) == 0) p.skip = line.substr(5);
      }
      if (p.skip.empty() && p.conninfo.empty()) p.skip = std::string("no conninfo in ") + f;
      return p;
    }();
    return s;
  }
  // The fixture's script: "down" stops the server keeping its data, "up" starts it again.
  static void run(const char* what) {
    const std::string cmd = std::string(KITE_PG_SERVER_SCRIPT) + " " + what + " " + get().state_file + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
};

// An administrator's connection (the server's superuser) for what the tests
// do behind the store's back.
class Admin {
 public:
  explicit Admin(const std::string& conninfo) : c_(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(c_) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(c_));
    PQsetNoticeProcessor(
        c_, [](void*, const char*) {}, nullptr);
  }
  ~Admin() { PQfinish(c_); }
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;
  void exec(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const auto st = PQresultStatus(r);
    const std::string err = PQresultErrorMessage(r);
    PQclear(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) throw std::runtime_error(sql + ": " + err);
  }
  // The first column of the first row, or "" when there is none.
  std::string value(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    std::string v;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) v = PQgetvalue(r, 0, 0);
    const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    const std::string err = PQresultErrorMessage(r);
    PQclear(r);
    if (!ok) throw std::runtime_error(sql + ": " + err);
    return v;
  }

 private:
  PGconn* c_;
};

std::string msg(std::uint64_t seq, std::string_view text = "hello") {
  return "8=FIX.4.4\x01"
         "35=8\x01"
         "34=" +
         std::to_string(seq) + "\x01" + "58=" + std::string(text) + "\x01";
}

template <class F>
bool eventually(F&& f, std::chrono::milliseconds limit = 5s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!f()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

class PgStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const PgServer& s = PgServer::get();
    if (!s.skip.empty()) {
      std::printf("KITE-SKIP: %s\n", s.skip.c_str());
      std::fflush(stdout);
      GTEST_SKIP() << s.skip;
    }
    settings_.kind = StoreKind::postgresql;
    settings_.pg_conninfo = s.conninfo;
    settings_.capacity_bytes = 1 << 20;
    admin_ = std::make_unique<Admin>(s.conninfo);
    // One session per test (its name as the session_qualifier), its rows cleared.
    key_ = {"FIX.4.4", "KITE", "PEER", ::testing::UnitTest::GetInstance()->current_test_info()->name()};
    id_ = key_.beginstring + ":" + key_.sendercompid + "->" + key_.targetcompid;
    open()->wait_committed(5000);  // creates the tables
    admin_->exec("DELETE FROM messages" + where());
    admin_->exec("DELETE FROM sessions" + where());
  }
  std::unique_ptr<PgStore> open() { return std::make_unique<PgStore>(settings_, key_, 1'700'000'000'000'000'000); }
  std::string where() const { return " WHERE session_qualifier='" + key_.qualifier + "'"; }
  std::string row(const char* column) {
    return admin_->value(std::string("SELECT ") + column + " FROM sessions" + where());
  }

  StoreSettings settings_;
  PgSessionKey key_;
  std::string id_;
  std::unique_ptr<Admin> admin_;
};

TEST_F(PgStoreTest, numbersAndMessagesSurviveReopen) {
  {
    auto s = open();
    EXPECT_EQ(s->next_sender_seq(), 1u);
    EXPECT_EQ(s->next_target_seq(), 1u);
    for (std::uint64_t i = 1; i <= 50; ++i) ASSERT_TRUE(s->store(i, msg(i)));
    s->set_next_target_seq(42);
    ASSERT_TRUE(s->wait_committed(5000));
    EXPECT_EQ(s->lost_writes(), 0u);
  }
  EXPECT_EQ(row("outgoing_seqnum"), "51");
  EXPECT_EQ(row("incoming_seqnum"), "42");
  EXPECT_EQ(admin_->value("SELECT count(*) FROM messages" + where()), "50");
  auto s = open();
  EXPECT_EQ(s->next_sender_seq(), 51u);
  EXPECT_EQ(s->next_target_seq(), 42u);
  EXPECT_EQ(s->loaded_messages(), 50u);
  EXPECT_EQ(s->creation_time(), 1'700'000'000'000'000'000);
}

TEST_F(PgStoreTest, resendReadsReturnStoredMessagesAfterReopen) {
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 5; ++i) s->store(i, msg(i, "it's \\ quoted"));
  }
  auto s = open();
  for (std::uint64_t i = 1; i <= 5; ++i) EXPECT_EQ(s->get(i), msg(i, "it's \\ quoted"));
  EXPECT_TRUE(s->get(6).empty());
}

TEST_F(PgStoreTest, resetWipesMessagesAndNumbers) {
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 3; ++i) s->store(i, msg(i));
    s->set_next_target_seq(9);
    s->reset(1'800'000'000'000'000'000);
    s->store(1, msg(1, "after"));
  }
  auto s = open();
  EXPECT_EQ(s->next_sender_seq(), 2u);
  EXPECT_EQ(s->next_target_seq(), 1u);
  EXPECT_EQ(s->get(1), msg(1, "after"));
  EXPECT_TRUE(s->get(2).empty());
  EXPECT_EQ(s->creation_time(), 1'800'000'000'000'000'000);
}

TEST_F(PgStoreTest, inboundBatchCommitsWholeEvenAcrossTheGroupLimit) {
  settings_.pg_group_max = 2;
  auto s = open();
  const std::uint64_t tx = s->transactions();
  s->begin_inbound();
  s->set_next_target_seq(2);
  for (std::uint64_t i = 1; i <= 5; ++i) s->store(i, msg(i));
  // Nothing of an unfinished batch reaches the database.
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(s->committed(), 0u);
  s->end_inbound();
  ASSERT_TRUE(s->wait_committed(5000));
  EXPECT_EQ(s->transactions(), tx + 1);
  EXPECT_EQ(row("incoming_seqnum"), "2");
  EXPECT_EQ(row("outgoing_seqnum"), "6");
}

TEST_F(PgStoreTest, groupCommitTakesWhatQueuedWhileATransactionWaited) {
  auto s = open();
  // Hold the session's row so the store thread's first transaction waits.
  Admin blocker(PgServer::get().conninfo);
  blocker.exec("BEGIN");
  blocker.exec("SELECT 1 FROM sessions" + where() + " FOR UPDATE");
  for (std::uint64_t i = 1; i <= 200; ++i) s->store(i, msg(i));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(s->committed(), 0u);
  blocker.exec("COMMIT");
  ASSERT_TRUE(s->wait_committed(5000));
  // 400 changes (a message and the numbers each): the first transaction
  // waited, the rest went in a few groups of up to 512.
  EXPECT_EQ(s->committed(), 400u);
  EXPECT_LE(s->transactions(), 4u);
}

TEST_F(PgStoreTest, syncPolicyMarksDurableOnlyAfterCommit) {
  settings_.pg_commit = CommitPolicy::sync;
  auto s = open();
  EXPECT_TRUE(s->holds_sends());
  Admin blocker(PgServer::get().conninfo);
  blocker.exec("BEGIN");
  blocker.exec("SELECT 1 FROM sessions" + where() + " FOR UPDATE");
  s->begin_inbound();
  s->set_next_target_seq(2);
  s->store(1, msg(1));
  s->end_inbound();
  const std::uint64_t t = s->ticket();
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(s->durable(t));
  blocker.exec("COMMIT");
  EXPECT_TRUE(eventually([&] { return s->durable(t); }));
  EXPECT_EQ(row("incoming_seqnum"), "2");
}

TEST_F(PgStoreTest, asyncPolicyHoldsSendsOnlyPastItsWindow) {
  settings_.pg_commit = CommitPolicy::async;
  settings_.pg_async_window = 4;
  auto s = open();
  EXPECT_TRUE(s->holds_sends());
  EXPECT_EQ(s->committed_out(), 1u);
  // A mark is the next number out: numbers 1..4 may go before anything commits, 5 may not.
  EXPECT_TRUE(s->may_send(5));
  EXPECT_FALSE(s->may_send(6));
  // Without RefreshOnLogon nothing is taken over: nothing to skip.
  EXPECT_EQ(s->unsure_sent(), 0u);
}

TEST_F(PgStoreTest, secondOpenIsRefusedWhileTheFirstHoldsTheSession) {
  auto first = open();
  try {
    open();
    FAIL() << "a second store opened a held session";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("advisory lock"), std::string::npos) << e.what();
  }
  first.reset();
  EXPECT_NO_THROW(open());
}

TEST_F(PgStoreTest, lockIsReleasedWhenTheHoldersConnectionDies) {
  auto first = open();
  first->store(1, msg(1));
  ASSERT_TRUE(first->wait_committed(5000));
  const std::string pid = admin_->value(
      "SELECT pid FROM pg_locks WHERE locktype='advisory' AND granted AND "
      "((classid::bigint << 32) | objid::bigint) = " +
      std::to_string(key_.lock_key()) + "::bigint");
  ASSERT_FALSE(pid.empty());
  EXPECT_EQ(admin_->value("SELECT pg_terminate_backend(" + pid + ")"), "t");
  // pg_terminate_backend returns before the backend has exited (and freed the lock).
  std::unique_ptr<PgStore> second;
  ASSERT_TRUE(eventually([&] {
    try {
      second = open();
      return true;
    } catch (const std::runtime_error&) {
      return false;
    }
  }));
  EXPECT_EQ(second->next_sender_seq(), 2u);
  // The first finds out at its next write: it reconnects, cannot take the
  // lock back, and stops writing (fenced) rather than overwrite the second.
  first->store(2, msg(2, "from the first"));
  EXPECT_TRUE(eventually([&] { return first->fenced(); }));
  EXPECT_STREQ(first->unavailable(), "its postgresql store lost the session's lock to another holder");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(admin_->value("SELECT count(*) FROM messages" + where()), "1");
  EXPECT_EQ(row("outgoing_seqnum"), "2");
}

TEST_F(PgStoreTest, holderBackAfterAnotherTookTheSessionAndLetItGoStopsWriting) {
  auto first = open();
  first->store(1, msg(1));
  ASSERT_TRUE(first->wait_committed(5000));
  const std::string pid = admin_->value(
      "SELECT pid FROM pg_locks WHERE locktype='advisory' AND granted AND "
      "((classid::bigint << 32) | objid::bigint) = " +
      std::to_string(key_.lock_key()) + "::bigint");
  ASSERT_FALSE(pid.empty());
  EXPECT_EQ(admin_->value("SELECT pg_terminate_backend(" + pid + ")"), "t");
  {
    // Another holder takes the session, writes and lets it go before the
    // first is back (a host whose link was down while a standby served).
    std::unique_ptr<PgStore> second;
    ASSERT_TRUE(eventually([&] {
      try {
        second = open();
        return true;
      } catch (const std::runtime_error&) {
        return false;
      }
    }));
    second->store(2, msg(2, "from the second"));
    ASSERT_TRUE(second->wait_committed(5000));
  }
  // The first finds the lock free, but the session moved on without it: its
  // queued change is stale and must not overwrite the second's.
  first->store(2, msg(2, "from the first"));
  EXPECT_TRUE(eventually([&] { return first->fenced(); }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(admin_->value("SELECT message FROM messages" + where() + " AND msgseqnum = 2"), msg(2, "from the second"));
  EXPECT_EQ(row("outgoing_seqnum"), "3");
}

TEST_F(PgStoreTest, bothEndsOfTheConnectionUseTheKeepaliveBound) {
  settings_.pg_keepalive_idle_s = 7;
  settings_.pg_keepalive_interval_s = 1;
  settings_.pg_keepalive_count = 4;
  const std::string c = pg_conninfo_for(settings_);
  EXPECT_NE(c.find("keepalives_idle=7 keepalives_interval=1 keepalives_count=4 tcp_user_timeout=11000"),
            std::string::npos)
      << c;
  // The server's side (it frees the lock when Kite's host is lost) is set by
  // the connection (a unix socket here: the server shows 0, the source tells).
  Admin a(c);
  EXPECT_EQ(a.value("SELECT count(*) FROM pg_settings WHERE source='client' AND name IN "
                    "('tcp_keepalives_idle','tcp_keepalives_interval','tcp_keepalives_count','tcp_user_timeout')"),
            "4");
}

TEST_F(PgStoreTest, openFailsClearlyWithoutADatabase) {
  settings_.pg_conninfo = PgServer::get().conninfo + " port=1";
  try {
    open();
    FAIL() << "opened without a database";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to the database"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(id_), std::string::npos) << e.what();
  }
}

// Stops the shared server: runs alone (RESOURCE_LOCK in CMake), keeps it short.
TEST_F(PgStoreTest, writesWaitForADatabaseThatWentAwayAndLoseNothing) {
  auto s = open();
  s->store(1, msg(1));
  ASSERT_TRUE(s->wait_committed(5000));
  PgServer::run("down");
  for (std::uint64_t i = 2; i <= 10; ++i) s->store(i, msg(i));
  EXPECT_TRUE(eventually([&] { return s->database_down(); }));
  EXPECT_STREQ(s->unavailable(), "its postgresql store cannot reach the database");
  EXPECT_LT(s->committed(), s->appended());
  PgServer::run("up");
  EXPECT_TRUE(s->wait_committed(10000));
  EXPECT_FALSE(s->database_down());
  EXPECT_EQ(s->unavailable(), nullptr);
  admin_ = std::make_unique<Admin>(PgServer::get().conninfo);
  EXPECT_EQ(admin_->value("SELECT count(*) FROM messages" + where()), "10");
  EXPECT_EQ(row("outgoing_seqnum"), "11");
}

// An application that answers every order with an ExecutionReport.
struct AckApp : test::RecordingApp {
  void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    RecordingApp::on_message(s, h, ix);
    const std::string id = received.back().cl_ord_id;
    s.send("8", [&](codec::MessageWriter& w) {
      w.add_string(test::tag::ClOrdID, id);
      w.add_char(test::tag::ExecType, '0');
    });
  }
};

// A Kite acceptor session (KITE talking to PEER) on the postgresql store.
class PgSessionTest : public PgStoreTest {
 protected:
  void start(CommitPolicy policy) {
    settings_.pg_commit = policy;
    auto s = open();
    store_ = s.get();
    SessionSettings ss = test::acceptor_settings(begin_);
    ss.store = settings_;
    rig_ = std::make_unique<test::BasicSessionRig<AckApp>>(ss, 10000, std::move(s));
  }
  // Timer turns until the wire holds `n` messages (or 5 s).
  std::vector<test::Sent> wait_for(std::size_t n) {
    std::vector<test::Sent> got;
    eventually([&] {
      rig_->tick();
      for (auto& m : rig_->wire.take()) got.push_back(std::move(m));
      return got.size() >= n;
    });
    return got;
  }
  std::vector<test::Sent> quiet_for(std::chrono::milliseconds d) {
    std::vector<test::Sent> got;
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
      rig_->tick();
      for (auto& m : rig_->wire.take()) got.push_back(std::move(m));
      std::this_thread::sleep_for(2ms);
    }
    return got;
  }
  void hold_row(Admin& a) {
    a.exec("BEGIN");
    a.exec("SELECT 1 FROM sessions" + where() + " FOR UPDATE");
  }

  PgStore* store_ = nullptr;
  std::unique_ptr<test::BasicSessionRig<AckApp>> rig_;
  std::string begin_ = "FIX.4.4";  // the sessions' BeginString
};

TEST_F(PgSessionTest, syncAnswerGoesOutOnlyAfterItAndTheInboundNumberCommit) {
  start(CommitPolicy::sync);
  rig_->feed(rig_->peer.logon());
  auto got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  Admin blocker(PgServer::get().conninfo);
  hold_row(blocker);
  rig_->feed(rig_->peer.order("O1"));
  EXPECT_EQ(rig_->app.received.size(), 1u);
  EXPECT_TRUE(quiet_for(30ms).empty()) << "answered before the commit";
  EXPECT_EQ(row("incoming_seqnum"), "2");
  blocker.exec("COMMIT");
  got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "8");
  EXPECT_EQ(got[0].seq(), 2u);
  // What went out is committed, with the order's number.
  EXPECT_EQ(row("incoming_seqnum"), "3");
  EXPECT_EQ(row("outgoing_seqnum"), "3");
  EXPECT_EQ(admin_->value("SELECT count(*) FROM messages" + where() + " AND msgseqnum=2"), "1");
}

TEST_F(PgSessionTest, syncLogoutAnswerGoesOutBeforeTheDisconnect) {
  start(CommitPolicy::sync);
  rig_->feed(rig_->peer.logon());
  ASSERT_EQ(wait_for(1).size(), 1u);
  // An order and the peer's Logout in one read: the answers wait for their
  // commit, and the connection stays open until they have gone out.
  const std::string order = rig_->peer.order("O1");
  rig_->feed(order + rig_->peer.make("5"));
  const auto got = wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type(), "8");
  EXPECT_EQ(got[1].type(), "5");
  EXPECT_EQ(got[1].seq(), 3u);
  EXPECT_TRUE(rig_->wire.closed);
  EXPECT_EQ(row("outgoing_seqnum"), "4");
}

TEST_F(PgSessionTest, asyncAnswerGoesOutAtOnceAndCommitsBehind) {
  start(CommitPolicy::async);
  rig_->logon();
  Admin blocker(PgServer::get().conninfo);
  hold_row(blocker);
  rig_->feed(rig_->peer.order("O1"));
  auto got = rig_->wire.take();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "8");
  EXPECT_LT(store_->committed(), store_->appended());
  blocker.exec("COMMIT");
  EXPECT_TRUE(store_->wait_committed(5000));
  EXPECT_EQ(row("outgoing_seqnum"), "3");
}

// Stops the shared server (RESOURCE_LOCK in CMake).
TEST_F(PgSessionTest, logonIsRefusedWhileTheDatabaseIsAway) {
  start(CommitPolicy::async);
  PgServer::run("down");
  EXPECT_TRUE(eventually([&] { return store_->database_down(); }));
  rig_->feed(rig_->peer.logon());
  EXPECT_FALSE(rig_->session->logged_on());
  EXPECT_TRUE(rig_->wire.take().empty());
  EXPECT_TRUE(rig_->log.contains("Logon refused: its postgresql store cannot reach the database")) << [&] {
    std::string all;
    for (const auto& l : rig_->log.lines()) all += l + "\n";
    return all;
  }();
  rig_->disconnect("refused");
  PgServer::run("up");
  EXPECT_TRUE(eventually([&] { return !store_->database_down(); }));
  rig_->peer.next_seq = 1;
  rig_->logon();
}

// Stops the shared server (RESOURCE_LOCK in CMake).
TEST_F(PgSessionTest, syncSessionHoldsAnswersWhileTheDatabaseIsAwayAndResumes) {
  start(CommitPolicy::sync);
  rig_->feed(rig_->peer.logon());
  ASSERT_EQ(wait_for(1).size(), 1u);
  PgServer::run("down");
  rig_->feed(rig_->peer.order("O1"));
  rig_->feed(rig_->peer.order("O2"));
  EXPECT_EQ(rig_->app.received.size(), 2u);
  EXPECT_TRUE(quiet_for(50ms).empty()) << "answered while the database was away";
  PgServer::run("up");
  auto got = wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].seq(), 2u);
  EXPECT_EQ(got[1].seq(), 3u);
  admin_ = std::make_unique<Admin>(PgServer::get().conninfo);
  EXPECT_EQ(row("incoming_seqnum"), "4");
  EXPECT_EQ(row("outgoing_seqnum"), "4");
}

// Waits for a refresh asked for with begin_refresh() to end.
MessageStore::Refresh refresh(PgStore& s) {
  EXPECT_TRUE(s.begin_refresh());
  MessageStore::Refresh r = MessageStore::Refresh::pending;
  eventually([&] { return (r = s.poll_refresh()) != MessageStore::Refresh::pending; });
  return r;
}

TEST_F(PgStoreTest, refreshOnLogonTakesTheSessionAtLogonAndLetsItGoAtDisconnect) {
  settings_.refresh_on_logon = true;
  // Both acceptors open at start-up: neither holds the session yet.
  auto active = open();
  auto standby = open();
  ASSERT_EQ(refresh(*active), MessageStore::Refresh::done);
  EXPECT_EQ(refresh(*standby), MessageStore::Refresh::failed);
  EXPECT_NE(std::string(standby->refresh_error()).find("advisory lock"), std::string::npos) << standby->refresh_error();
  active->store(1, msg(1));
  active->store(2, msg(2));
  active->set_next_target_seq(7);
  // Numbers changed on the standby while it does not hold the session are not written.
  standby->set_next_sender_seq(99);
  active->release();
  // Written out, then let go.
  ASSERT_TRUE(eventually([&] { return !active->holding(); }));
  ASSERT_EQ(refresh(*standby), MessageStore::Refresh::done);
  EXPECT_EQ(standby->next_sender_seq(), 3u);
  EXPECT_EQ(standby->next_target_seq(), 7u);
  EXPECT_EQ(standby->get(2), msg(2));
  EXPECT_EQ(refresh(*active), MessageStore::Refresh::failed);
}

// Two acceptors on one database: the active answers, disconnects, and the
// standby takes the session at the counterparty's next Logon with the
// active's numbers (a failover in one process; the two-host proof is the lab's).
TEST_F(PgSessionTest, standbyTakesTheSessionAtLogonWithTheActivesNumbers) {
  settings_.refresh_on_logon = true;
  start(CommitPolicy::sync);
  auto standby_store = open();
  PgStore* standby_raw = standby_store.get();
  SessionSettings ss = test::acceptor_settings();
  ss.store = settings_;
  test::BasicSessionRig<AckApp> standby(ss, 10000, std::move(standby_store));

  rig_->feed(rig_->peer.logon());
  auto got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  EXPECT_TRUE(rig_->log.contains("RefreshOnLogon"));
  rig_->feed(rig_->peer.order("O1"));
  got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].seq(), 2u);
  rig_->disconnect("active gone");
  // Written out, then let go (a dead active's lock goes with its connection).
  ASSERT_TRUE(eventually([&] { return !store_->holding(); }));

  // The counterparty reconnects to the standby and goes on where it was.
  standby.peer.next_seq = rig_->peer.next_seq;
  standby.feed(standby.peer.logon());
  std::vector<test::Sent> answer;
  ASSERT_TRUE(eventually([&] {
    standby.tick();
    for (auto& m : standby.wire.take()) answer.push_back(std::move(m));
    return !answer.empty();
  }));
  EXPECT_EQ(answer[0].type(), "A");
  EXPECT_EQ(answer[0].seq(), 3u);
  EXPECT_TRUE(standby.session->logged_on());
  EXPECT_EQ(standby_raw->next_target_seq(), 4u);
  EXPECT_NE(standby_raw->get(2).find("\x01"
                                     "11=O1\x01"),
            std::string_view::npos);
}

TEST_F(PgSessionTest, asyncSessionSendsAtMostItsWindowPastTheCommittedNumber) {
  settings_.pg_async_window = 4;
  start(CommitPolicy::async);
  rig_->logon();
  ASSERT_TRUE(store_->wait_committed(5000));
  ASSERT_EQ(store_->committed_out(), 2u);
  Admin blocker(PgServer::get().conninfo);
  hold_row(blocker);
  for (int i = 1; i <= 6; ++i) rig_->feed(rig_->peer.order("O" + std::to_string(i)));
  EXPECT_EQ(rig_->app.received.size(), 6u);
  // Numbers 2..5 (below the committed 2 + the window 4) went out at once; 6 and 7 wait.
  auto got = rig_->wire.take();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3].seq(), 5u);
  EXPECT_TRUE(quiet_for(30ms).empty()) << "sent past the window";
  blocker.exec("COMMIT");
  got = wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].seq(), 6u);
  EXPECT_EQ(got[1].seq(), 7u);
}

// 789 on a Logon moves nothing but a refreshed async takeover.
std::string logon_with_789(test::Peer& peer, std::uint64_t next_expected) {
  return peer.make("A", [&](codec::MessageWriter& w) {
    w.add_uint(test::tag::EncryptMethod, 0);
    w.add_uint(test::tag::HeartBtInt, 30);
    w.add_uint(codec::tag::NextExpectedMsgSeqNum, next_expected);
  });
}

TEST_F(PgSessionTest, syncTakeoverIgnoresNextExpectedMsgSeqNum) {
  settings_.refresh_on_logon = true;
  start(CommitPolicy::sync);
  rig_->feed(logon_with_789(rig_->peer, 7));
  const auto got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  EXPECT_EQ(got[0].seq(), 1u);
  EXPECT_EQ(store_->unsure_sent(), 0u);
}

TEST_F(PgSessionTest, asyncWithoutRefreshOnLogonIgnoresNextExpected) {
  start(CommitPolicy::async);
  rig_->feed(logon_with_789(rig_->peer, 7));
  const auto got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].seq(), 1u);
}

// An async active crashes (SIGKILL) with answers sent but not committed; a
// standby takes the session at the counterparty's next Logon.
class PgTakeoverTest : public PgSessionTest {
 protected:
  static constexpr std::uint32_t kWindow = 64;
  static constexpr int kCommitted = 3;    // orders whose answers the database has
  static constexpr int kUncommitted = 5;  // orders answered, then the active dies before the commit

  // What the counterparty had from the active when it died.
  struct Seen {
    std::uint64_t peer_next = 0;       // the counterparty's next MsgSeqNum out
    std::uint64_t last_from_kite = 0;  // the last MsgSeqNum it received from KITE
    std::uint64_t answers = 0;         // ExecutionReports it received
    std::string error;
  };

  static bool put(int fd, const void* p, std::size_t n) { return ::write(fd, p, n) == static_cast<ssize_t>(n); }
  static bool get(int fd, void* p, std::size_t n) { return ::read(fd, p, n) == static_cast<ssize_t>(n); }

  // The active runs in a child process: logs on, answers kCommitted orders
  // and waits for their commit; then, with the session's row held by
  // another transaction (nothing more can commit), answers kUncommitted
  // more (async: at once) and is killed. Its backend is ended before the
  // row is let go, so its blocked transaction never commits.
  Seen crash_an_async_active() {
    Seen seen;
    settings_.refresh_on_logon = true;
    settings_.pg_commit = CommitPolicy::async;
    settings_.pg_async_window = kWindow;
    int up[2], down[2];
    if (::pipe(up) != 0 || ::pipe(down) != 0) {
      seen.error = "pipe failed";
      return seen;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (int fd : {up[0], up[1], down[0], down[1]}) ::close(fd);
      seen.error = "fork failed";
      return seen;
    }
    if (pid == 0) {
      ::close(up[0]);
      ::close(down[1]);
      std::uint64_t report[4] = {0, 0, 0, 0};  // ok, peer_next, last_from_kite, answers
      char go = 0;
      start(CommitPolicy::async);
      std::vector<test::Sent> got;
      const auto take = [&] {
        for (auto& m : rig_->wire.take()) {
          report[2] = m.seq();
          if (m.type() == "8") ++report[3];
        }
      };
      rig_->feed(rig_->peer.logon());
      eventually([&] {
        rig_->tick();
        take();
        return rig_->session->logged_on();
      });
      for (int i = 0; i < kCommitted; ++i) rig_->feed(rig_->peer.order("O" + std::to_string(rig_->peer.next_seq)));
      take();
      const bool committed = store_->wait_committed(5000);
      put(up[1], &go, 1);
      get(down[0], &go, 1);  // the parent holds the row now
      for (int i = 0; i < kUncommitted; ++i) rig_->feed(rig_->peer.order("O" + std::to_string(rig_->peer.next_seq)));
      take();
      report[0] = rig_->session->logged_on() && committed && report[3] == kCommitted + kUncommitted ? 1 : 0;
      report[1] = rig_->peer.next_seq;
      put(up[1], report, sizeof report);
      get(down[0], &go, 1);  // killed here
      ::_exit(0);
    }
    // Only the child writes up and reads down: a child that dies early ends the parent's reads.
    ::close(up[1]);
    ::close(down[0]);
    char go = 0;
    std::uint64_t report[4] = {0, 0, 0, 0};
    Admin blocker(PgServer::get().conninfo);
    if (!get(up[0], &go, 1)) seen.error = "the active did not start";
    if (seen.error.empty()) {
      hold_row(blocker);
      put(down[1], &go, 1);
      if (!get(up[0], report, sizeof report) || report[0] != 1) seen.error = "the active did not answer every order";
    }
    const std::string lock_holder =
        "SELECT pid FROM pg_locks WHERE locktype='advisory' AND granted AND "
        "((classid::bigint << 32) | objid::bigint) = " +
        std::to_string(key_.lock_key()) + "::bigint";
    const std::string backend = admin_->value(lock_holder);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    // Its process is gone; its transaction, blocked on the row, must not commit when the row is let go.
    if (!backend.empty()) admin_->value("SELECT pg_terminate_backend(" + backend + ")");
    if (!eventually([&] { return admin_->value(lock_holder).empty(); })) seen.error = "the active's lock stayed";
    blocker.exec("ROLLBACK");
    ::close(up[0]);
    ::close(down[1]);
    seen.peer_next = report[1];
    seen.last_from_kite = report[2];
    seen.answers = report[3];
    return seen;
  }

  // The counterparty against the standby: it expects `expect` next from
  // KITE, asks for what it misses, resends what KITE asks for (PossDupFlag),
  // and counts what it sees.
  struct Counterparty {
    std::uint64_t expect = 0;
    std::uint64_t asked_from = 0;                                    // its ResendRequest's BeginSeqNo (0: none)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gap_fills;  // MsgSeqNum, NewSeqNo
    std::map<std::string, int> answers;                              // per ClOrdID
    std::vector<std::string> logouts;
    int too_low = 0;
    std::map<std::uint64_t, test::Sent> queued;
    std::uint64_t logon_seq = 0;     // the Logon answer's MsgSeqNum
    std::uint64_t logon_in_seq = 0;  // the counterparty's Logon's MsgSeqNum
  };

  // A message in sequence.
  static void serve(Counterparty& c, const test::Sent& m) {
    if (m.type() == "4") {
      if (m.get(test::tag::GapFillFlag) == "Y")
        c.gap_fills.emplace_back(m.seq(), std::stoull(m.get(test::tag::NewSeqNo)));
      c.expect = std::max<std::uint64_t>(c.expect, std::stoull(m.get(test::tag::NewSeqNo)));
      return;
    }
    ++c.expect;
    if (m.type() == "8") ++c.answers[m.get(test::tag::ClOrdID)];
    if (m.type() == "5") c.logouts.push_back(m.get(test::tag::Text));
  }

  // KITE's ResendRequest is served on arrival, whatever its number (as engines do).
  // Orders up to the Logon; the Logon (admin) becomes a GapFill.
  static void resend(test::BasicSessionRig<AckApp>& standby, const Counterparty& c, const test::Sent& m) {
    const std::uint64_t begin = std::stoull(m.get(test::tag::BeginSeqNo));
    std::uint64_t end = std::stoull(m.get(test::tag::EndSeqNo));
    if (end == 0 || end >= standby.peer.next_seq) end = standby.peer.next_seq - 1;
    for (std::uint64_t q = begin; q <= end; ++q) {
      test::PeerOpts o;
      o.seq = q;
      o.poss_dup = true;
      if (q >= c.logon_in_seq) {
        standby.feed(standby.peer.make(
            "4",
            [&](codec::MessageWriter& w) {
              w.add_bool(test::tag::GapFillFlag, true);
              w.add_uint(test::tag::NewSeqNo, end + 1);
            },
            o));
        break;
      }
      std::string id = "O";
      id += std::to_string(q);
      standby.feed(standby.peer.order(id, o));
    }
  }

  static void take(test::BasicSessionRig<AckApp>& standby, Counterparty& c) {
    standby.tick();
    for (auto& m : standby.wire.take()) {
      if (m.type() == "A") c.logon_seq = m.seq();
      if (m.type() == "2") resend(standby, c, m);
      if (m.seq() < c.expect) {
        if (m.get(test::tag::PossDupFlag) != "Y") ++c.too_low;
        continue;
      }
      const bool sequence_reset = m.type() == "4" && m.get(test::tag::GapFillFlag) != "Y";
      if (m.seq() > c.expect && !sequence_reset) {
        if (c.asked_from == 0) {
          c.asked_from = c.expect;
          standby.feed(standby.peer.resend_request(c.expect, 0));
        }
        c.queued.emplace(m.seq(), std::move(m));
        continue;
      }
      serve(c, m);
      while (!c.queued.empty() && c.queued.begin()->first <= c.expect) {
        const test::Sent q = c.queued.begin()->second;
        c.queued.erase(c.queued.begin());
        if (q.seq() == c.expect) serve(c, q);
      }
    }
  }

  // The takeover: the counterparty logs on to a standby (with its
  // NextExpectedMsgSeqNum or without) and both sides settle.
  // `begin`: 789 is used where the version has it (FIX.4.4, FIXT.1.1), sent or not.
  void take_over(bool with_789, const char* begin = "FIX.4.4") {
    begin_ = begin;
    const bool uses_789 = with_789 && begin_ != "FIX.4.2";
    const Seen seen = crash_an_async_active();
    ASSERT_TRUE(seen.error.empty()) << seen.error;
    // The database has the Logon and the committed orders only.
    const std::uint64_t db_out = std::stoull(row("outgoing_seqnum"));
    ASSERT_EQ(db_out, 2u + kCommitted);
    ASSERT_EQ(seen.last_from_kite, 1u + kCommitted + kUncommitted);
    ASSERT_EQ(std::stoull(row("incoming_seqnum")), 2u + kCommitted);

    auto standby_store = open();
    PgStore* st = standby_store.get();
    SessionSettings ss = test::acceptor_settings(begin_);
    ss.store = settings_;
    test::BasicSessionRig<AckApp> standby(ss, 10000, std::move(standby_store));
    standby.peer.next_seq = seen.peer_next;
    Counterparty c;
    c.expect = seen.last_from_kite + 1;
    c.logon_in_seq = seen.peer_next;
    standby.feed(standby.peer.make("A", [&](codec::MessageWriter& w) {
      w.add_uint(test::tag::EncryptMethod, 0);
      w.add_uint(test::tag::HeartBtInt, 30);
      if (with_789) w.add_uint(codec::tag::NextExpectedMsgSeqNum, c.expect);
      if (begin_ == "FIXT.1.1") w.add_string(test::tag::DefaultApplVerID, standby.peer.appl_ver_id);
    }));
    const bool settled = eventually([&] {
      take(standby, c);
      return standby.session->logged_on() && c.queued.empty() && c.expect == st->next_sender_seq() &&
             st->next_target_seq() == standby.peer.next_seq && st->committed() == st->appended();
    });
    std::string log;
    for (const auto& l : standby.log.lines()) log += l + "\n";
    ASSERT_TRUE(settled) << "counterparty expects " << c.expect << ", standby's next out " << st->next_sender_seq()
                         << "\n"
                         << log;
    EXPECT_EQ(c.too_low, 0) << log;
    EXPECT_TRUE(c.logouts.empty()) << c.logouts.front();
    if (uses_789) {
      // The Logon answer carries exactly the number the counterparty expects: nothing to fill.
      EXPECT_EQ(c.logon_seq, seen.last_from_kite + 1);
      EXPECT_EQ(c.asked_from, 0u) << log;
      EXPECT_TRUE(c.gap_fills.empty());
    } else {
      // The standby skipped the window; the counterparty asks from the first
      // number it lacks and gets one GapFill over the unknown numbers and the
      // admin messages after them (the Logon answer, KITE's ResendRequest).
      EXPECT_EQ(c.logon_seq, db_out + kWindow);
      EXPECT_EQ(c.asked_from, seen.last_from_kite + 1);
      ASSERT_EQ(c.gap_fills.size(), 1u) << log;
      EXPECT_EQ(c.gap_fills[0].first, seen.last_from_kite + 1);
      EXPECT_EQ(c.gap_fills[0].second, c.logon_seq + 2);
    }
    // Inbound: the orders handled but not committed were asked for again and
    // answered again; the committed ones were not. (The active answered each once.)
    int once = 0, twice = 0;
    for (std::uint64_t q = 2; q < 2 + kCommitted + kUncommitted; ++q) {
      const int n = 1 + c.answers["O" + std::to_string(q)];
      once += n == 1;
      twice += n == 2;
    }
    EXPECT_EQ(once, kCommitted);
    EXPECT_EQ(twice, kUncommitted);
    EXPECT_EQ(seen.answers, static_cast<std::uint64_t>(kCommitted + kUncommitted));
    EXPECT_EQ(standby.app.received.size(), static_cast<std::size_t>(kUncommitted));
    // Both sides and the database end on the same numbers.
    EXPECT_EQ(row("outgoing_seqnum"), std::to_string(c.expect));
    EXPECT_EQ(row("incoming_seqnum"), std::to_string(standby.peer.next_seq));
    std::printf(
        "takeover %s %s 789: Logon answered with %llu (database %llu, counterparty expected %llu); "
        "answers at the counterparty: %llu from the active, %zu from the standby (%d orders answered twice)\n",
        begin, with_789 ? "with" : "without", static_cast<unsigned long long>(c.logon_seq),
        static_cast<unsigned long long>(db_out), static_cast<unsigned long long>(seen.last_from_kite + 1),
        static_cast<unsigned long long>(seen.answers),
        [&] {
          std::size_t n = 0;
          for (const auto& [id, k] : c.answers) n += static_cast<std::size_t>(k);
          return n;
        }(),
        twice);
  }
};

TEST_F(PgTakeoverTest, asyncStandbyAnswersAtTheCounterpartysNextExpected789) { take_over(true); }

TEST_F(PgTakeoverTest, asyncStandbyOnFixtAnswersAt789) { take_over(true, "FIXT.1.1"); }

// FIX.4.2 has no 789: one sent anyway is not trusted; the window is skipped.
TEST_F(PgTakeoverTest, asyncStandbyOnFix42Skips789AndItsWindow) { take_over(true, "FIX.4.2"); }

// (Test names are the session_qualifier: at most 64 characters.)
TEST_F(PgTakeoverTest, asyncStandbyWithout789SkipsItsWindowAndGapFillsIt) { take_over(false); }

// A whole FIX message as QuickFIX stores it (BodyLength and CheckSum
// included), from "35=...|34=...|...|" with '|' for SOH.
std::string fix_message(std::string body) {
  for (char& c : body)
    if (c == '|') c = '\x01';
  std::string m =
      "8=FIX.4.4\x01"
      "9=" +
      std::to_string(body.size()) + "\x01" + body;
  unsigned sum = 0;
  for (const unsigned char c : m) sum += c;
  char tail[16];
  std::snprintf(tail, sizeof tail, "10=%03u\x01", sum % 256);
  return m + tail;
}

// QuickFIX's PostgreSQL schema (src/sql/postgresql) and rows as its
// PostgreSQLStore writes them (populateCache's INSERT INTO sessions, set()'s
// INSERT INTO messages: the raw FIX string, SOH and all, in a quoted literal),
// for a QuickFIX acceptor KITE that took a Logon and an order from PEER and
// answered with two ExecutionReports.
class PgQuickFixTest : public PgSessionTest {
 protected:
  void SetUp() override {
    PgSessionTest::SetUp();
    if (IsSkipped()) return;
    admin_->exec("DROP DATABASE IF EXISTS kite_qf_fixture");
    admin_->exec("CREATE DATABASE kite_qf_fixture");
    Admin qf(PgServer::get().conninfo + " dbname=kite_qf_fixture");
    qf.exec(
        "CREATE TABLE sessions (\n"
        "  beginstring CHAR(8) NOT NULL,\n"
        "  sendercompid VARCHAR(64) NOT NULL,\n"
        "  targetcompid VARCHAR(64) NOT NULL,\n"
        "  session_qualifier VARCHAR(64) NOT NULL,\n"
        "  creation_time TIMESTAMP NOT NULL,\n"
        "  incoming_seqnum INTEGER NOT NULL,\n"
        "  outgoing_seqnum INTEGER NOT NULL,\n"
        "  PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier)\n"
        ");\n"
        "CREATE TABLE messages (\n"
        "  beginstring CHAR(8) NOT NULL,\n"
        "  sendercompid VARCHAR(64) NOT NULL,\n"
        "  targetcompid VARCHAR(64) NOT NULL,\n"
        "  session_qualifier VARCHAR(64) NOT NULL,\n"
        "  msgseqnum INTEGER NOT NULL,\n"
        "  message TEXT NOT NULL,\n"
        "  PRIMARY KEY (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum)\n"
        ");\n");
    // Written at the first Logon (numbers 1, 1), then moved by UPDATEs: the row as it ends.
    qf.exec(
        "INSERT INTO sessions (beginstring, sendercompid, targetcompid, session_qualifier,creation_time, "
        "incoming_seqnum, outgoing_seqnum) VALUES('FIX.4.4','KITE','PEER','','2023-11-14 22:00:00',3,4)");
    for (int i = 0; i < 3; ++i)
      qf.exec(
          "INSERT INTO messages (beginstring, sendercompid, targetcompid, session_qualifier, msgseqnum, message) "
          "VALUES ('FIX.4.4','KITE','PEER',''," +
          std::to_string(i + 1) + ",'" + stored_[i] + "')");
    settings_.pg_database = "kite_qf_fixture";
    key_.qualifier = "";
  }
  void TearDown() override {
    rig_.reset();
    if (admin_) admin_->exec("DROP DATABASE IF EXISTS kite_qf_fixture");
  }

  const std::string stored_[3] = {
      fix_message("35=A|34=1|49=KITE|52=20231114-22:00:00.000|56=PEER|98=0|108=30|"),
      fix_message("35=8|34=2|49=KITE|52=20231114-22:00:01.000|56=PEER|6=0|11=Q1|14=0|17=E1|37=O1|39=0|54=1|55=KITE|"
                  "150=0|151=100|"),
      fix_message("35=8|34=3|49=KITE|52=20231114-22:00:02.000|56=PEER|6=0|11=Q2|14=0|17=E2|37=O2|39=0|54=1|55=KITE|"
                  "150=0|151=100|"),
  };
};

TEST_F(PgQuickFixTest, kiteTakesOverQuickFixRowsAndServesAResendFromThem) {
  start(CommitPolicy::async);
  EXPECT_EQ(store_->next_sender_seq(), 4u);
  EXPECT_EQ(store_->next_target_seq(), 3u);
  EXPECT_EQ(store_->loaded_messages(), 3u);
  EXPECT_EQ(store_->get(2), stored_[1]);
  EXPECT_EQ(store_->creation_time(), 1'699'999'200'000'000'000);
  // The counterparty logs on where it left off: no reset.
  rig_->peer.next_seq = 3;
  rig_->feed(rig_->peer.logon());
  auto got = wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type(), "A");
  EXPECT_EQ(got[0].seq(), 4u);
  EXPECT_FALSE(got[0].has(test::tag::ResetSeqNumFlag));
  // It asks for everything again: the Logon is gap-filled, the two reports
  // come back from QuickFIX's rows as possible duplicates.
  rig_->feed(rig_->peer.resend_request(1, 0));
  got = wait_for(4);
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got[0].type(), "4");
  EXPECT_EQ(got[0].seq(), 1u);
  EXPECT_EQ(got[0].get(test::tag::NewSeqNo), "2");
  for (int i = 1; i <= 2; ++i) {
    EXPECT_EQ(got[i].type(), "8");
    EXPECT_EQ(got[i].seq(), static_cast<std::uint64_t>(i + 1));
    EXPECT_EQ(got[i].get(test::tag::PossDupFlag), "Y");
    EXPECT_EQ(got[i].get(test::tag::OrigSendingTime), "20231114-22:00:0" + std::to_string(i) + ".000");
    EXPECT_EQ(got[i].get(test::tag::ClOrdID), "Q" + std::to_string(i));
  }
  // What Kite wrote back is what QuickFIX reads: its row and its messages.
  ASSERT_TRUE(store_->wait_committed(5000));
  Admin qf(PgServer::get().conninfo + " dbname=kite_qf_fixture");
  EXPECT_EQ(qf.value("SELECT incoming_seqnum FROM sessions WHERE beginstring='FIX.4.4' and sendercompid='KITE' and "
                     "targetcompid='PEER' and session_qualifier=''"),
            "5");
  EXPECT_EQ(qf.value("SELECT message FROM messages WHERE msgseqnum=2"), stored_[1]);
  EXPECT_EQ(qf.value("SELECT substr(message, 1, 11) FROM messages WHERE msgseqnum=4"),
            "8=FIX.4.4\x01"
            "9");
}

}  // namespace
}  // namespace kite::session
