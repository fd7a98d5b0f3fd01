// When a session may be logged on, and when a new session period (and with
// it a sequence reset) begins.
//
// Time zones: a fixed offset (`utc_offset_sec`), or a TimeZone (timezone.hpp:
// IANA zones from the tz database, daylight saving included) when `zone` is
// set. Start and end are local wall-clock times; a period starting in a
// daylight-saving gap starts at the shifted time. Parsing is set-up work and
// throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kite::session {

class TimeZone;

struct Schedule {
  // No StartTime/EndTime: the session is always in its period (one period
  // that never ends; sequence numbers reset only by the reset options).
  bool always = true;
  std::int32_t start_sec = 0;  // seconds after local midnight
  std::int32_t end_sec = 0;    // may be <= start_sec: the period crosses midnight
  // Days on which a period may START, bit 0 = Sunday ... bit 6 = Saturday.
  std::uint8_t days = 0x7f;
  std::int32_t utc_offset_sec = 0;       // local time = UTC + offset (when no zone)
  std::shared_ptr<const TimeZone> zone;  // overrides utc_offset_sec when set

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
