// The choice of the codec's level (level.hpp): names, the choice from
// KITE_CODEC_LEVEL and the CPU, and the default scan going through the level
// in use.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"
#include "kite/codec/level.hpp"

namespace kite::codec {
namespace {

bool up_to_avx2(Level l) { return l == Level::scalar || l == Level::avx2; }
bool everything(Level) { return true; }

TEST(LevelTest, namesRoundTripAndOtherTextIsNoLevel) {
  for (const Level l : kLevels) {
    Level back = Level::avx512vbmi;
    ASSERT_TRUE(parse_level(to_string(l), back)) << to_string(l);
    EXPECT_EQ(back, l);
  }
  Level out;
  EXPECT_FALSE(parse_level("AVX2", out));
  EXPECT_FALSE(parse_level("avx512", out));
  EXPECT_FALSE(parse_level("", out));
}

TEST(LevelTest, choosesTheBestSupportedLevelWhenNothingIsRequested) {
  EXPECT_EQ(choose_level(nullptr, up_to_avx2).level, Level::avx2);
  EXPECT_TRUE(choose_level(nullptr, up_to_avx2).ok);
  EXPECT_EQ(choose_level("", everything).level, Level::avx512vbmi);
}

TEST(LevelTest, aRequestedLowerLevelIsTaken) {
  const LevelChoice c = choose_level("scalar", everything);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.level, Level::scalar);
  EXPECT_EQ(choose_level("avx512bw", everything).level, Level::avx512bw);
}

TEST(LevelTest, aLevelTheCpuLacksIsRefusedNamingWhatItHas) {
  const LevelChoice c = choose_level("avx512bw", up_to_avx2);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("KITE_CODEC_LEVEL=avx512bw"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("lacks"), std::string::npos) << c.error;
  EXPECT_NE(c.error.find("it has scalar, avx2"), std::string::npos) << c.error;
}

TEST(LevelTest, aNameThatIsNoLevelIsRefused) {
  const LevelChoice c = choose_level("fast", everything);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.error.find("is not a level"), std::string::npos) << c.error;
}

TEST(LevelTest, theLevelInUseIsTheRequestedOneOrTheBest) {
  const char* requested = std::getenv("KITE_CODEC_LEVEL");
  Level wanted = best_level();
  if (requested != nullptr && *requested != '\0') {
    ASSERT_TRUE(parse_level(requested, wanted));
  }
  EXPECT_EQ(active_level(), wanted);
  EXPECT_TRUE(level_supported(Level::scalar));
  EXPECT_TRUE(level_supported(active_level()));
}

TEST(LevelTest, theDefaultScanGivesTheScalarTwinsAnswers) {
  const std::string m = testing::new_order_single_44(7);
  const FrameResult a = frame(m), b = frame<ScalarScan>(m.data(), m.size());
  ASSERT_EQ(a.status, FrameStatus::complete);
  EXPECT_EQ(a.size, b.size);
  FieldIndex x(64), y(64);
  const FramedIndex r = x.frame_and_build(m.data(), m.size());
  ASSERT_TRUE(r.index);
  ASSERT_TRUE(y.build<ScalarScan>(m.data(), b.size));
  ASSERT_EQ(x.size(), y.size());
  for (std::uint32_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].offset, y[i].offset);
  EXPECT_EQ(FastScan::checksum(m.data(), m.data() + m.size()), ScalarScan::checksum(m.data(), m.data() + m.size()));
}

}  // namespace
}  // namespace kite::codec
