#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "kite/transport/buffers.hpp"

namespace kite::transport {
namespace {

void put(RecvBuffer& b, const std::string& s) {
  ASSERT_GE(b.write_room(), s.size());
  std::memcpy(b.write_ptr(), s.data(), s.size());
  b.produced(s.size());
}

TEST(RecvBuffer, consumingEverythingRewindsWithoutCopying) {
  RecvBuffer b(64);
  put(b, "frame-one|frame-two|");
  const char* first = b.data();
  b.consume(20);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.data(), first);  // back at the start
  EXPECT_EQ(b.write_room(), 64u);
  EXPECT_EQ(b.compactions(), 0u);
}

TEST(RecvBuffer, completeFramesAreReadInPlaceAndOnlyThePartialTailMoves) {
  RecvBuffer b(32);
  put(b, "0123456789abcdefghijklmnopqrst");  // 30 bytes: a 24-byte frame + 6 of the next
  const char* where = b.data();
  b.consume(24);
  EXPECT_EQ(b.data(), where + 24);  // not moved by consuming
  EXPECT_FALSE(b.make_room(2));     // 2 bytes of room exist: nothing moves
  EXPECT_EQ(b.compactions(), 0u);
  EXPECT_TRUE(b.make_room(16));  // short of room: the 6-byte tail moves to the front
  EXPECT_EQ(b.compactions(), 1u);
  EXPECT_EQ(std::string(b.data(), b.size()), "opqrst");
  EXPECT_EQ(b.write_room(), 26u);
}

TEST(RecvBuffer, appendRefusesWhatCannotFitEvenAfterCompacting) {
  RecvBuffer b(8);
  EXPECT_TRUE(b.append("abcdef", 6));
  b.consume(4);
  EXPECT_TRUE(b.append("123456", 6));  // compacts "ef" to the front
  EXPECT_EQ(std::string(b.data(), b.size()), "ef123456");
  EXPECT_FALSE(b.append("x", 1));
}

TEST(SendBuffer, claimGivesContiguousRoomAndCommitPublishesIt) {
  SendBuffer s(16);
  char* p = s.claim(5);
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "hello", 5);
  s.commit(5);
  EXPECT_EQ(std::string(s.data(), s.size()), "hello");
  EXPECT_EQ(s.high_water(), 5u);
}

TEST(SendBuffer, fullBufferBackPressuresInsteadOfGrowing) {
  SendBuffer s(16);
  ASSERT_NE(s.claim(12), nullptr);
  s.commit(12);
  EXPECT_EQ(s.claim(8), nullptr);  // 4 free: not enough
  EXPECT_EQ(s.capacity(), 16u);
  s.consume(6);  // the socket took 6: compacting makes 10 free
  char* p = s.claim(8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(s.compactions(), 1u);
  EXPECT_LE(s.high_water(), 16u);
}

TEST(SendBuffer, lockedBufferDoesNotMovePendingBytes) {
  SendBuffer s(16);
  ASSERT_NE(s.claim(12), nullptr);
  s.commit(12);
  const char* pending = s.data();
  s.lock();  // an async send reads `pending`
  s.consume(6);
  EXPECT_EQ(s.claim(8), nullptr);  // would need to move the pending bytes
  EXPECT_EQ(s.data(), pending + 6);
  s.unlock();
  EXPECT_NE(s.claim(8), nullptr);
}

TEST(SendBuffer, commitNeverPublishesMoreThanWasClaimed) {
  SendBuffer s(8);
  ASSERT_NE(s.claim(4), nullptr);  // room is 8
  s.commit(100);
  EXPECT_EQ(s.size(), 8u);
}

TEST(SendBuffer, lentRoomTakesTheRepliesAndReclaimMovesWhatIsPendingBack) {
  SendBuffer b(64);
  const char* own = b.claim(1);
  b.commit(0);
  char stage[64];
  b.lend(stage);
  EXPECT_TRUE(b.lent());
  char* p = b.claim(10);
  ASSERT_EQ(p, stage);
  std::memcpy(p, "0123456789", 10);
  b.commit(10);
  b.consume(4);  // the socket took part of it
  b.reclaim();
  EXPECT_FALSE(b.lent());
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b.data(), own);
  EXPECT_EQ(std::string(b.data(), b.size()), "456789");
  b.consume(6);
  b.lend(stage);  // nothing pending: nothing to move back
  b.reclaim();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.claim(1), own);
}

}  // namespace
}  // namespace kite::transport
