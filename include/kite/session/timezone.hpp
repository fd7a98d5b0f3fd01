// Time zones for session schedules, without the C library's global TZ state.
//
// A TimeZone is either a fixed offset ("UTC", "UTC+02:00", "+0530") or an
// IANA zone ("Europe/London") from the system's tz database (Debian: tzdata),
// read once, at set-up, through libdate-tz (the library that became C++20's
// <chrono> time zones, which libstdc++ 12 lacks). Times after the zone's last
// transition follow its file's POSIX TZ rule (PosixTz).
// Lookups are pure functions of the loaded data: thread safe, no allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kite::session {

// A POSIX TZ rule such as "CET-1CEST,M3.5.0,M10.5.0/3" (TZif footers),
// including TZif v3's rule times outside 0-24h ("M3.5.0/-1").
struct PosixTz {
  std::int32_t std_offset = 0;  // seconds east of UTC
  std::int32_t dst_offset = 0;
  bool has_dst = false;
  struct Rule {
    char kind = 'M';  // 'M' month.week.day, 'J' 1-365 without Feb 29, 'D' 0-365
    int month = 0, week = 0, day = 0;
    std::int32_t time = 7200;  // local seconds after midnight
  } start, end;
  // Throws std::invalid_argument on a malformed rule.
  static PosixTz parse(std::string_view s);
  std::int32_t offset_at(std::int64_t utc_sec) const noexcept;
};

class TimeZone {
 public:
  // "UTC", "Z", "GMT", "UTC+hh:mm", "+hhmm", ... or an IANA name. Throws
  // std::invalid_argument naming the zone when it is neither (or when the
  // tz database is missing).
  static std::shared_ptr<const TimeZone> load(std::string_view name);
  static std::shared_ptr<const TimeZone> fixed(std::int32_t offset_sec, std::string name);

  // Seconds east of UTC in force at `utc_sec`.
  std::int32_t offset_at(std::int64_t utc_sec) const noexcept;
  // UTC seconds of a local wall-clock time (local seconds since the epoch).
  // In a gap (spring forward) the time is shifted forward by the gap, as
  // mktime() does; in an overlap (fall back) the earlier instant.
  std::int64_t to_utc(std::int64_t local_sec) const noexcept;
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  std::vector<std::int64_t> transitions_;  // UTC seconds, ascending
  std::vector<std::int32_t> offsets_;      // offset from each transition on
  std::int32_t initial_offset_ = 0;        // before the first transition
  bool has_footer_ = false;
  PosixTz footer_;  // from the last transition on
};

}  // namespace kite::session
