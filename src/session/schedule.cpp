#include "kite/session/schedule.hpp"

#include <cctype>
#include <climits>
#include <stdexcept>
#include <string>

#include "kite/codec/values.hpp"
#include "kite/session/timezone.hpp"

namespace kite::session {
namespace {

constexpr std::int64_t kDay = 86400;
constexpr std::int64_t kNs = 1'000'000'000;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Weekday of a day number since 1970-01-01 (a Thursday), Sunday = 0.
int weekday(std::int64_t day) { return static_cast<int>(((day % 7) + 7 + 4) % 7); }

int two_digits(std::string_view s, std::size_t at) {
  if (at + 2 > s.size() || !std::isdigit(static_cast<unsigned char>(s[at])) ||
      !std::isdigit(static_cast<unsigned char>(s[at + 1])))
    throw std::invalid_argument("expected two digits in \"" + std::string(s) + "\"");
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

}  // namespace

namespace {

std::int32_t offset_at(const Schedule& s, std::int64_t utc_sec) {
  return s.zone ? s.zone->offset_at(utc_sec) : s.utc_offset_sec;
}
std::int64_t to_utc(const Schedule& s, std::int64_t local_sec) {
  return s.zone ? s.zone->to_utc(local_sec) : local_sec - s.utc_offset_sec;
}
// A period starts on local day d at start_sec (when d's weekday is enabled)
// and ends at end_sec of the same day, or of the next when end <= start.
std::int64_t start_of(const Schedule& s, std::int64_t d) { return to_utc(s, d * kDay + s.start_sec); }
std::int64_t end_of(const Schedule& s, std::int64_t d) {
  return to_utc(s, (s.end_sec > s.start_sec ? d : d + 1) * kDay + s.end_sec);
}
bool enabled(const Schedule& s, std::int64_t d) { return ((s.days >> weekday(d)) & 1u) != 0; }
std::int64_t local_day(const Schedule& s, std::int64_t utc_sec) {
  return floor_div(utc_sec + offset_at(s, utc_sec), kDay);
}

}  // namespace

std::int64_t Schedule::period_start(std::int64_t utc_ns) const noexcept {
  if (always) return INT64_MIN;
  const std::int64_t t = floor_div(utc_ns, kNs);
  const std::int64_t day = local_day(*this, t);
  for (std::int64_t d = day + 1; d > day - 9; --d) {
    if (!enabled(*this, d)) continue;
    const std::int64_t start = start_of(*this, d);
    if (start <= t) return start * kNs;
  }
  return INT64_MIN;
}

bool Schedule::in_session(std::int64_t utc_ns) const noexcept {
  if (always) return true;
  const std::int64_t t = floor_div(utc_ns, kNs);
  const std::int64_t day = local_day(*this, t);
  for (std::int64_t d = day + 1; d > day - 9; --d) {
    if (!enabled(*this, d)) continue;
    if (start_of(*this, d) <= t) return t < end_of(*this, d);
  }
  return false;
}

std::int64_t Schedule::next_start(std::int64_t utc_ns) const noexcept {
  if (always) return INT64_MAX;
  const std::int64_t t = floor_div(utc_ns, kNs);
  const std::int64_t day = local_day(*this, t);
  for (std::int64_t d = day - 1; d < day + 9; ++d) {
    if (!enabled(*this, d)) continue;
    const std::int64_t start = start_of(*this, d);
    if (start > t) return start * kNs;
  }
  return INT64_MAX;
}

std::int32_t parse_time_of_day(std::string_view s) {
  if (s.size() != 5 && s.size() != 8) throw std::invalid_argument("expected HH:MM:SS, got \"" + std::string(s) + "\"");
  const int h = two_digits(s, 0);
  if (s[2] != ':') throw std::invalid_argument("expected HH:MM:SS, got \"" + std::string(s) + "\"");
  const int m = two_digits(s, 3);
  int sec = 0;
  if (s.size() == 8) {
    if (s[5] != ':') throw std::invalid_argument("expected HH:MM:SS, got \"" + std::string(s) + "\"");
    sec = two_digits(s, 6);
  }
  if (h > 23 || m > 59 || sec > 59) throw std::invalid_argument("time of day out of range: \"" + std::string(s) + "\"");
  return h * 3600 + m * 60 + sec;
}

std::int32_t parse_utc_offset(std::string_view s) {
  const std::string orig(s);
  if (s == "UTC" || s == "Z" || s == "GMT" || s == "Etc/UTC") return 0;
  if (s.substr(0, 3) == "UTC" || s.substr(0, 3) == "GMT") s.remove_prefix(3);
  if (s.empty() || (s[0] != '+' && s[0] != '-'))
    throw std::invalid_argument("time zone \"" + orig + "\" is not UTC or a fixed offset like UTC+02:00");
  const int sign = s[0] == '-' ? -1 : 1;
  s.remove_prefix(1);
  int h = 0, m = 0;
  if (s.size() == 1 && std::isdigit(static_cast<unsigned char>(s[0]))) {
    h = s[0] - '0';
  } else if (s.size() == 2) {
    h = two_digits(s, 0);
  } else if (s.size() == 4) {
    h = two_digits(s, 0);
    m = two_digits(s, 2);
  } else if (s.size() == 5 && s[2] == ':') {
    h = two_digits(s, 0);
    m = two_digits(s, 3);
  } else {
    throw std::invalid_argument("time zone \"" + orig + "\" is not UTC or a fixed offset like UTC+02:00");
  }
  if (h > 14 || m > 59) throw std::invalid_argument("time zone offset out of range: \"" + orig + "\"");
  return sign * (h * 3600 + m * 60);
}

int parse_weekday(std::string_view s) {
  static const char* const kNames[] = {"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"};
  std::string low;
  for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 0; i < 7; ++i) {
    const std::string_view n(kNames[i]);
    if (low == n || (low.size() == 3 && n.substr(0, 3) == low)) return i;
  }
  throw std::invalid_argument("\"" + std::string(s) + "\" is not a day of the week");
}

}  // namespace kite::session
