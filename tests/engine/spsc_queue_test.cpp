#include <gtest/gtest.h>

#include <thread>

#include "kite/engine/spsc_queue.hpp"

namespace kite::engine {
namespace {

TEST(SpscQueue, refusesWhenFullAndKeepsOrder) {
  SpscQueue<int> q(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.try_push(i));
  EXPECT_FALSE(q.try_push(99));
  int v = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(q.try_pop(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(q.try_pop(v));
}

TEST(SpscQueue, deliversEveryItemInOrderAcrossThreads) {
  SpscQueue<int> q(256);
  constexpr int kItems = 20000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) {
      while (!q.try_push(i)) std::this_thread::yield();
    }
  });
  int expected = 0;
  int v;
  while (expected < kItems) {
    if (q.try_pop(v)) {
      ASSERT_EQ(v, expected);
      ++expected;
    } else {
      std::this_thread::yield();
    }
  }
  producer.join();
  EXPECT_FALSE(q.try_pop(v));
}

}  // namespace
}  // namespace kite::engine
