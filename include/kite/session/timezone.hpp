// Time zones for session schedules, without the C library's global TZ state.
//
// A TimeZone is either a fixed offset ("UTC", "UTC+02:00", "+0530") or an
// IANA zone ("Europe/London") read once, at set-up, from the compiled tz
// database: a TZif file under $TZDIR or /usr/share/zoneinfo (versions 1-4;
// times after the last transition follow the file's POSIX TZ footer rule).
// Lookups are pure functions of the loaded data: thread safe, no allocation.
// (libstdc++ 12 has no std::chrono::tzdb; localtime_r under a changed TZ is
// process-global.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kite::session {

// A POSIX TZ rule such as "CET-1CEST,M3.5.0,M10.5.0/3" (TZif footers).
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
  // std::invalid_argument naming the zone when it is neither.
  static std::shared_ptr<const TimeZone> load(std::string_view name);
  // A TZif image (tests).
  static std::shared_ptr<const TimeZone> from_tzif(std::string_view bytes, std::string name);
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
  PosixTz footer_;
};

}  // namespace kite::session
