// When a session may be logged on, and when a new session period (and with
// it a sequence reset) begins.
//
// Time zones: UTC and fixed offsets only ("UTC", "Z", "UTC+02:00",
// "UTC-5", "+0530"). g++ 12's libstdc++ has no std::chrono::tzdb, and
// localtime_r under a changed TZ is process-global and not thread safe; a
// venue whose session times follow daylight saving configures the offset per
// season. Parsing is set-up work and throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kite::session {

struct Schedule {
  // No StartTime/EndTime: the session is always in its period (one period
  // that never ends; sequence numbers reset only by the reset options).
  bool always = true;
  std::int32_t start_sec = 0;  // seconds after local midnight
  std::int32_t end_sec = 0;    // may be <= start_sec: the period crosses midnight
  // Days on which a period may START, bit 0 = Sunday ... bit 6 = Saturday.
  std::uint8_t days = 0x7f;
  std::int32_t utc_offset_sec = 0;  // local time = UTC + offset

  // Whether `utc_ns` falls inside a session period.
  bool in_session(std::int64_t utc_ns) const noexcept;
  // Start (UTC ns) of the period containing utc_ns, or of the latest period
  // that started before it. INT64_MIN when `always`.
  std::int64_t period_start(std::int64_t utc_ns) const noexcept;
  // Start (UTC ns) of the next period strictly after utc_ns; INT64_MAX when `always`.
  std::int64_t next_start(std::int64_t utc_ns) const noexcept;
};

// "HH:MM:SS" or "HH:MM" -> seconds after midnight.
std::int32_t parse_time_of_day(std::string_view s);
// "UTC", "Z", "UTC+hh:mm", "UTC-hh", "+hhmm" -> offset seconds.
std::int32_t parse_utc_offset(std::string_view s);
// "Mon" / "Monday" (any case) -> 0..6 with Sunday 0.
int parse_weekday(std::string_view s);

}  // namespace kite::session
