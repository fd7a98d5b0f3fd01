// The session's per-message path after logon allocates nothing: a replaced
// global operator new counts allocations while a few thousand application
// messages go in (checked, delivered) and their replies go out (encoded,
// stored, committed). The link's path is counted by the app's ack test.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "support/session_testing.hpp"

namespace kite::session::test {
namespace {

class EchoApp final : public Application {
 public:
  void on_message(Session& s, const codec::Header&, const codec::FieldIndex& ix) noexcept override {
    std::string_view id;
    ix.get(tag::ClOrdID, id);
    s.send("8", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, id);
      w.add_char(tag::ExecType, '0');
      w.add_char(tag::OrdStatus, '0');
    });
    ++count;
  }
  int count = 0;
};

TEST(SessionAllocations, noAllocationPerApplicationMessageAfterLogon) {
  BasicSessionRig<EchoApp> r(acceptor_settings(), 10000, std::make_unique<MemoryStore>(16u << 20, 1u << 16));
  r.wire.bytes.reserve(8u << 20);
  r.logon();
  constexpr int kMessages = 5000;
  std::vector<std::string> orders;
  orders.reserve(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    std::string id = "ORDER-";
    id += std::to_string(i);
    orders.push_back(r.peer.order(id));
  }
  const long before = static_cast<long>(kite::test::allocations());
  for (const std::string& o : orders) {
    r.feed(o);
    r.tick();
  }
  const long after = static_cast<long>(kite::test::allocations());
  EXPECT_EQ(r.app.count, kMessages);
  EXPECT_EQ(after - before, 0) << "allocations across " << kMessages << " messages";
  EXPECT_EQ(r.session->next_sender_seq(), static_cast<std::uint64_t>(kMessages + 2));
}

class FileStoreAllocations : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kite-alloc-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    settings_.kind = StoreKind::file;
    settings_.path = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  StoreSettings settings_;
};

// Past the 65,536 records an index sized for a typical journal holds: a
// growing index would allocate and copy there, in the middle of a stream.
TEST_F(FileStoreAllocations, storingNeverAllocatesUpToAFullJournal) {
  settings_.capacity_bytes = 32u << 20;
  FileStore store(dir_.string(), "S", settings_, 1000);
  std::string message(120, 'x');
  constexpr std::uint64_t kMessages = 150'000;
  const long before = static_cast<long>(kite::test::allocations());
  std::uint64_t stored = 0;
  for (std::uint64_t seq = 1; seq <= kMessages; ++seq) {
    std::memcpy(message.data(), &seq, sizeof seq);
    stored += store.store(seq, message) ? 1 : 0;
  }
  const long after = static_cast<long>(kite::test::allocations());
  EXPECT_EQ(stored, kMessages);
  EXPECT_EQ(after - before, 0) << "allocations across " << kMessages << " stores";
  for (std::uint64_t seq : {std::uint64_t{1}, std::uint64_t{65'536}, std::uint64_t{65'537}, kMessages}) {
    const std::string_view m = store.get(seq);
    ASSERT_EQ(m.size(), message.size()) << seq;
    std::uint64_t head = 0;
    std::memcpy(&head, m.data(), sizeof head);
    EXPECT_EQ(head, seq);
  }
}

// The smallest records fill the journal before the index does: every one is
// stored and found, and the first refused is refused for lack of bytes.
TEST_F(FileStoreAllocations, theIndexHoldsAJournalOfTheSmallestRecords) {
  settings_.capacity_bytes = 1u << 20;
  FileStore store(dir_.string(), "S", settings_, 1000);
  std::uint64_t seq = 1;
  while (store.store(seq, "x")) ++seq;
  const std::uint64_t stored = seq - 1;
  EXPECT_EQ(stored, ((1u << 20) - 4096) / 40) << "a 32-byte header and 8 bytes per record after the header page";
  EXPECT_EQ(store.get(1), "x");
  EXPECT_EQ(store.get(stored), "x");
  EXPECT_TRUE(store.get(stored + 1).empty());
}

}  // namespace
}  // namespace kite::session::test
