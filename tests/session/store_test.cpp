#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "kite/session/store.hpp"

namespace kite::session {
namespace {

namespace fs = std::filesystem;

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kite-store-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    settings_.kind = StoreKind::file;
    settings_.path = dir_.string();
    settings_.capacity_bytes = 1 << 20;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<FileStore> open() { return std::make_unique<FileStore>(dir_.string(), "S", settings_, 1000); }
  std::string msg(std::uint64_t seq) {
    return "8=FIX.4.4\x01"
           "35=D\x01"
           "34=" +
           std::to_string(seq) +
           "\x01"
           "58=hello\x01";
  }

  fs::path dir_;
  StoreSettings settings_;
};

TEST_F(FileStoreTest, numbersAndMessagesSurviveReopen) {
  {
    auto s = open();
    EXPECT_EQ(s->next_sender_seq(), 1u);
    for (std::uint64_t i = 1; i <= 100; ++i) ASSERT_TRUE(s->store(i, msg(i)));
    s->set_next_target_seq(42);
  }
  auto s = open();
  EXPECT_EQ(s->next_sender_seq(), 101u);
  EXPECT_EQ(s->next_target_seq(), 42u);
  EXPECT_EQ(s->recovered_messages(), 100u);
  EXPECT_EQ(s->get(1), msg(1));
  EXPECT_EQ(s->get(77), msg(77));
  EXPECT_TRUE(s->get(101).empty());
  EXPECT_EQ(s->creation_time(), 1000);
}

TEST_F(FileStoreTest, tornTailIsDiscardedAndTheJournalContinues) {
  std::string path;
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 10; ++i) ASSERT_TRUE(s->store(i, msg(i)));
    path = s->path();
  }
  // Corrupt the last record's bytes.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(f)), {});
    const auto pos = all.rfind("34=10");
    ASSERT_NE(pos, std::string::npos);
    f.seekp(static_cast<std::streamoff>(pos));
    f.write("XX", 2);
  }
  {
    auto s = open();
    EXPECT_EQ(s->recovered_messages(), 9u);
    EXPECT_GT(s->discarded_tail_bytes(), 0u);
    EXPECT_TRUE(s->get(10).empty());
    EXPECT_EQ(s->get(9), msg(9));
    EXPECT_EQ(s->next_sender_seq(), 11u);  // the number had advanced: a resend becomes a gap fill
    ASSERT_TRUE(s->store(11, msg(11)));
  }
  auto s = open();
  EXPECT_EQ(s->recovered_messages(), 10u);
  EXPECT_EQ(s->get(11), msg(11));
}

TEST_F(FileStoreTest, resetForgetsMessagesAcrossReopen) {
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 5; ++i) s->store(i, msg(i));
    s->reset(2000);
    EXPECT_EQ(s->next_sender_seq(), 1u);
    EXPECT_TRUE(s->get(3).empty());
    s->store(1, msg(1));
  }
  auto s = open();
  EXPECT_EQ(s->recovered_messages(), 1u);
  EXPECT_EQ(s->creation_time(), 2000);
  EXPECT_EQ(s->next_sender_seq(), 2u);
  EXPECT_EQ(s->get(1), msg(1));
}

TEST_F(FileStoreTest, fullJournalRefusesButKeepsCounting) {
  settings_.capacity_bytes = 8192;
  auto s = open();
  std::uint64_t i = 1;
  while (s->store(i, msg(i))) ++i;
  EXPECT_GT(i, 10u);
  EXPECT_EQ(s->next_sender_seq(), i + 1);
}

TEST_F(FileStoreTest, surviveKillMinusNine) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FileStore s(dir_.string(), "S", settings_, 1000);
    for (std::uint64_t i = 1; i <= 500; ++i) s.store(i, msg(i));
    s.set_next_target_seq(321);
    ::raise(SIGKILL);  // no destructor, no msync
    std::_Exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  auto s = open();
  EXPECT_EQ(s->next_sender_seq(), 501u);
  EXPECT_EQ(s->next_target_seq(), 321u);
  EXPECT_EQ(s->recovered_messages(), 500u);
  EXPECT_EQ(s->get(500), msg(500));
}

TEST_F(FileStoreTest, everyFlushPolicyStoresTheSameMessages) {
  for (FlushPolicy p : {FlushPolicy::none, FlushPolicy::every_message, FlushPolicy::every_n, FlushPolicy::every_ms}) {
    fs::remove_all(dir_);
    settings_.flush = p;
    settings_.flush_every_n = 3;
    settings_.flush_every_ms = 1;
    {
      auto s = open();
      for (std::uint64_t i = 1; i <= 10; ++i) {
        ASSERT_TRUE(s->store(i, msg(i)));
        s->poll(static_cast<std::int64_t>(i) * 2'000'000);
      }
    }
    auto s = open();
    EXPECT_EQ(s->recovered_messages(), 10u) << static_cast<int>(p);
  }
}

TEST_F(FileStoreTest, notAJournalIsRefusedAtOpen) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "S.journal") << std::string(8192, 'z');
  EXPECT_THROW(open(), std::runtime_error);
}

TEST_F(FileStoreTest, readJournalListsMessagesWithoutChangingTheFile) {
  std::string path;
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 3; ++i) s->store(i, msg(i));
    s->set_next_target_seq(7);
    path = s->path();
  }
  const auto before = fs::last_write_time(path);
  std::vector<std::uint64_t> seqs;
  const JournalSummary sum = read_journal(path, [&](std::uint64_t seq, std::string_view m) {
    seqs.push_back(seq);
    EXPECT_EQ(m, msg(seq));
  });
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(sum.next_sender_seq, 4u);
  EXPECT_EQ(sum.next_target_seq, 7u);
  EXPECT_EQ(fs::last_write_time(path), before);
}

TEST_F(FileStoreTest, kiteStoreToolPrintsEachMessageWithBars) {
  const char* bin = std::getenv("KITE_BINARY_DIR");
  if (bin == nullptr) GTEST_SKIP() << "KITE_BINARY_DIR not set (run through ctest)";
  {
    FileStore s(dir_.string(), FileStore::file_name_for("FIX.4.4:KITE->PEER"), settings_, 1000);
    s.store(1, msg(1));
    s.store(2, msg(2));
  }
  const std::string cmd =
      std::string(bin) + "/src/session/kite-store list " + dir_.string() + " --session 'FIX.4.4:KITE->PEER'";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  EXPECT_EQ(::pclose(p), 0);
  EXPECT_NE(out.find("1 8=FIX.4.4|35=D|34=1|58=hello|\n"), std::string::npos) << out;
  EXPECT_NE(out.find("2 8=FIX.4.4|35=D|34=2|58=hello|\n"), std::string::npos) << out;
  EXPECT_NE(out.find("next sender seq 3"), std::string::npos) << out;
}

// Inbound batches: an inbound message's number and what it made us send are
// durable together. Dropping the store without end_inbound() is what a kill
// -9 leaves behind (the destructor only msyncs).
TEST_F(FileStoreTest, unfinishedInboundBatchIsDroppedAndTheInboundNumberStays) {
  {
    auto s = open();
    for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(s->store(i, msg(i)));
    s->set_next_target_seq(5);
    s->begin_inbound();
    s->set_next_target_seq(6);
    EXPECT_EQ(s->next_target_seq(), 6u);  // the session sees it at once
    ASSERT_TRUE(s->store(4, msg(4)));
    ASSERT_TRUE(s->store(5, msg(5)));
  }
  auto s = open();
  EXPECT_EQ(s->next_target_seq(), 5u);  // inbound 5 will be asked for again
  EXPECT_EQ(s->next_sender_seq(), 4u);  // its replies were never published: numbers reused
  EXPECT_EQ(s->recovered_messages(), 3u);
  EXPECT_EQ(s->discarded_batch_messages(), 2u);
  EXPECT_TRUE(s->get(4).empty());
  ASSERT_TRUE(s->store(4, msg(40)));
  s.reset();
  s = open();
  EXPECT_EQ(s->get(4), msg(40));
  EXPECT_EQ(s->next_sender_seq(), 5u);
}

TEST_F(FileStoreTest, finishedInboundBatchKeepsTheNumberAndEveryMessage) {
  {
    auto s = open();
    s->set_next_target_seq(5);
    for (int k = 0; k < 2; ++k) {
      s->begin_inbound();
      s->set_next_target_seq(6 + k);
      ASSERT_TRUE(s->store(1 + 2 * k, msg(1 + 2 * k)));  // several replies to one inbound message
      ASSERT_TRUE(s->store(2 + 2 * k, msg(2 + 2 * k)));
      s->end_inbound();
    }
    s->begin_inbound();  // an admin message with no reply: number only
    s->set_next_target_seq(8);
    s->end_inbound();
  }
  auto s = open();
  EXPECT_EQ(s->next_target_seq(), 8u);
  EXPECT_EQ(s->next_sender_seq(), 5u);
  EXPECT_EQ(s->recovered_messages(), 4u);
  EXPECT_EQ(s->discarded_batch_messages(), 0u);
  EXPECT_EQ(s->get(4), msg(4));
}

TEST_F(FileStoreTest, inboundNumberComesFromTheCommittedRecordWhenThePageLagsBehind) {
  std::string path;
  {
    auto s = open();
    s->set_next_target_seq(5);
    s->begin_inbound();
    s->set_next_target_seq(6);
    ASSERT_TRUE(s->store(1, msg(1)));
    s->end_inbound();
    path = s->path();
  }
  {
    // Killed after the record's commit word, before the page's number: put
    // the page's next_target (offset 24) and commit_tail (offset 40) back.
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const std::uint64_t five = 5, first_page_end = 4096;
    std::fseek(f, 24, SEEK_SET);
    std::fwrite(&five, sizeof five, 1, f);
    std::fseek(f, 40, SEEK_SET);
    std::fwrite(&first_page_end, sizeof first_page_end, 1, f);
    std::fclose(f);
  }
  auto s = open();
  EXPECT_EQ(s->next_target_seq(), 6u);
  EXPECT_EQ(s->get(1), msg(1));
}

TEST_F(FileStoreTest, loweredInboundNumberOutsideABatchSurvivesReopen) {
  {
    auto s = open();
    s->begin_inbound();
    s->set_next_target_seq(50);
    ASSERT_TRUE(s->store(1, msg(1)));
    s->end_inbound();
    s->set_next_target_seq(1);  // e.g. the peer's Logon reset its numbers
  }
  EXPECT_EQ(open()->next_target_seq(), 1u);
}

TEST_F(FileStoreTest, readJournalHidesAnUnfinishedBatchAndReportsTheRecoveredNumbers) {
  std::string path;
  auto s = open();
  s->set_next_target_seq(3);
  ASSERT_TRUE(s->store(1, msg(1)));
  s->begin_inbound();
  s->set_next_target_seq(4);
  ASSERT_TRUE(s->store(2, msg(2)));
  std::vector<std::uint64_t> seen;
  const JournalSummary sum = read_journal(s->path(), [&](std::uint64_t seq, std::string_view) { seen.push_back(seq); });
  EXPECT_EQ(seen, std::vector<std::uint64_t>{1});
  EXPECT_EQ(sum.unfinished, 1u);
  EXPECT_EQ(sum.next_target_seq, 3u);
  EXPECT_EQ(sum.next_sender_seq, 2u);
  s->end_inbound();
  seen.clear();
  const JournalSummary after =
      read_journal(s->path(), [&](std::uint64_t seq, std::string_view) { seen.push_back(seq); });
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(after.next_target_seq, 4u);
}

TEST(FileStoreName, sessionIdBecomesAFileName) {
  EXPECT_EQ(FileStore::file_name_for("FIX.4.4:KITE->PEER"), "FIX.4.4-KITE-PEER");
}

TEST(MemoryStore, keepsMessagesAndResets) {
  MemoryStore s;
  s.store(1, "a");
  s.store(2, "bb");
  EXPECT_EQ(s.get(2), "bb");
  EXPECT_EQ(s.next_sender_seq(), 3u);
  s.reset(5);
  EXPECT_TRUE(s.get(1).empty());
  EXPECT_EQ(s.next_sender_seq(), 1u);
  EXPECT_EQ(s.creation_time(), 5);
}

TEST(NullStore, keepsNumbersOnly) {
  NullStore s;
  s.store(1, "a");
  EXPECT_TRUE(s.get(1).empty());
  EXPECT_EQ(s.next_sender_seq(), 2u);
}

}  // namespace
}  // namespace kite::session
