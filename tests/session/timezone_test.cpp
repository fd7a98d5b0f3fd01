#include <gtest/gtest.h>

#include <filesystem>

#include "kite/codec/values.hpp"
#include "kite/session/schedule.hpp"
#include "kite/session/timezone.hpp"

namespace kite::session {
namespace {

std::int64_t utc(std::int32_t y, std::int32_t m, std::int32_t d, std::int32_t hh = 0, std::int32_t mm = 0) {
  return codec::days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60;
}

TEST(PosixTz, europeanRuleSwitchesOnTheLastSundays) {
  const PosixTz tz = PosixTz::parse("CET-1CEST,M3.5.0,M10.5.0/3");
  EXPECT_EQ(tz.std_offset, 3600);
  EXPECT_EQ(tz.dst_offset, 7200);
  // 2023: summer time from 26 March 01:00 UTC to 29 October 01:00 UTC.
  EXPECT_EQ(tz.offset_at(utc(2023, 3, 26, 0, 59)), 3600);
  EXPECT_EQ(tz.offset_at(utc(2023, 3, 26, 1, 0)), 7200);
  EXPECT_EQ(tz.offset_at(utc(2023, 10, 29, 0, 59)), 7200);
  EXPECT_EQ(tz.offset_at(utc(2023, 10, 29, 1, 0)), 3600);
}

TEST(PosixTz, southernHemisphereRuleWrapsTheYear) {
  const PosixTz tz = PosixTz::parse("AEST-10AEDT,M10.1.0,M4.1.0/3");
  EXPECT_EQ(tz.offset_at(utc(2023, 1, 15)), 11 * 3600);
  EXPECT_EQ(tz.offset_at(utc(2023, 7, 15)), 10 * 3600);
}

TEST(PosixTz, malformedRuleIsRefused) {
  EXPECT_THROW(PosixTz::parse("X-1"), std::invalid_argument);
  EXPECT_THROW(PosixTz::parse("CET-1CEST,M13.5.0,M10.5.0"), std::invalid_argument);
}

TEST(TimeZone, fixedOffsetsNeedNoDatabase) {
  EXPECT_EQ(TimeZone::load("UTC")->offset_at(0), 0);
  EXPECT_EQ(TimeZone::load("UTC+05:30")->offset_at(0), 5 * 3600 + 1800);
  EXPECT_THROW(TimeZone::load("Nowhere/Atlantis"), std::invalid_argument);
  EXPECT_THROW(TimeZone::load("../etc/passwd"), std::invalid_argument);
}

TEST(TimeZone, ianaZoneFollowsDaylightSavingFromTheDatabase) {
  if (!std::filesystem::exists("/usr/share/zoneinfo/America/New_York")) GTEST_SKIP() << "no tz database";
  const auto ny = TimeZone::load("America/New_York");
  EXPECT_EQ(ny->offset_at(utc(2023, 1, 15)), -5 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2023, 7, 15)), -4 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2023, 3, 12, 6, 59)), -5 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2023, 3, 12, 7, 0)), -4 * 3600);
  // Beyond the file's transitions, the footer rule.
  EXPECT_EQ(ny->offset_at(utc(2061, 7, 15)), -4 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2061, 12, 15)), -5 * 3600);
  // Local 17:00 on a summer and a winter day.
  EXPECT_EQ(ny->to_utc(utc(2023, 7, 14, 17)), utc(2023, 7, 14, 21));
  EXPECT_EQ(ny->to_utc(utc(2023, 1, 13, 17)), utc(2023, 1, 13, 22));
  // 01:30 on the fall-back day happens twice: the earlier one.
  EXPECT_EQ(ny->to_utc(utc(2023, 11, 5, 1, 30)), utc(2023, 11, 5, 5, 30));
}

TEST(TimeZone, unknownZoneIsRefusedWithItsName) {
  try {
    TimeZone::load("Nowhere/Atlantis");
    FAIL() << "loaded an unknown zone";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("\"Nowhere/Atlantis\""), std::string::npos) << e.what();
  }
}

TEST(TimeZone, datesPastTheTransitionTableFollowTheZoneRule) {
  if (!std::filesystem::exists("/usr/share/zoneinfo/Europe/London")) GTEST_SKIP() << "no tz database";
  // Debian's zone files list transitions up to 2037; 2100 needs the rule.
  const auto ny = TimeZone::load("America/New_York");
  EXPECT_EQ(ny->offset_at(utc(2100, 1, 15)), -5 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2100, 7, 15)), -4 * 3600);
  EXPECT_EQ(ny->offset_at(utc(2100, 3, 14, 6, 59)), -5 * 3600);  // second Sunday of March 2100
  EXPECT_EQ(ny->offset_at(utc(2100, 3, 14, 7, 0)), -4 * 3600);
  EXPECT_EQ(ny->to_utc(utc(2100, 7, 15, 17)), utc(2100, 7, 15, 21));
  EXPECT_EQ(ny->to_utc(utc(2100, 3, 14, 2, 30)), utc(2100, 3, 14, 7, 30));  // in the gap: 03:30 EDT
  const auto london = TimeZone::load("Europe/London");
  EXPECT_EQ(london->offset_at(utc(2100, 1, 15)), 0);
  EXPECT_EQ(london->offset_at(utc(2100, 7, 15)), 3600);
  EXPECT_EQ(london->offset_at(utc(2100, 10, 31, 0, 59)), 3600);  // last Sunday of October 2100
  EXPECT_EQ(london->offset_at(utc(2100, 10, 31, 1, 0)), 0);
  EXPECT_EQ(london->to_utc(utc(2100, 10, 31, 1, 30)), utc(2100, 10, 31, 0, 30));  // repeated: the earlier
  Schedule s;
  s.always = false;
  s.start_sec = parse_time_of_day("08:00:00");
  s.end_sec = parse_time_of_day("17:00:00");
  s.zone = london;
  constexpr std::int64_t kNs = 1'000'000'000;
  EXPECT_EQ(s.period_start(utc(2100, 7, 15, 12) * kNs), utc(2100, 7, 15, 7) * kNs);
  EXPECT_EQ(s.period_start(utc(2100, 1, 15, 12) * kNs), utc(2100, 1, 15, 8) * kNs);
}

TEST(TimeZone, scheduleInAnIanaZoneMovesWithDaylightSaving) {
  if (!std::filesystem::exists("/usr/share/zoneinfo/America/New_York")) GTEST_SKIP() << "no tz database";
  Schedule s;
  s.always = false;
  s.start_sec = parse_time_of_day("17:00:00");
  s.end_sec = parse_time_of_day("16:00:00");
  s.zone = TimeZone::load("America/New_York");
  constexpr std::int64_t kNs = 1'000'000'000;
  EXPECT_EQ(s.period_start(utc(2023, 7, 15, 12) * kNs), utc(2023, 7, 14, 21) * kNs);
  EXPECT_EQ(s.period_start(utc(2023, 1, 15, 12) * kNs), utc(2023, 1, 14, 22) * kNs);
  EXPECT_FALSE(s.in_session(utc(2023, 7, 15, 20, 30) * kNs));  // 16:30 New York
  EXPECT_TRUE(s.in_session(utc(2023, 7, 15, 21, 0) * kNs));
}

}  // namespace
}  // namespace kite::session
