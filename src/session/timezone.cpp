#include "kite/session/timezone.hpp"

#include <date/tz.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "kite/codec/values.hpp"
#include "kite/session/schedule.hpp"

namespace kite::session {
namespace {

constexpr std::int64_t kDay = 86400;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool leap(std::int32_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// --- POSIX TZ ------------------------------------------------------------------

struct Cursor {
  std::string_view s;
  std::size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument("POSIX TZ rule \"" + std::string(s) + "\": " + what);
  }
  int number() {
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a number");
    int v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) v = v * 10 + (s[i++] - '0');
    return v;
  }
  void name() {
    if (peek() == '<') {
      while (!done() && s[i] != '>') ++i;
      if (done()) fail("unterminated <name>");
      ++i;
      return;
    }
    const std::size_t b = i;
    while (std::isalpha(static_cast<unsigned char>(peek()))) ++i;
    if (i - b < 3) fail("zone abbreviation shorter than 3 letters");
  }
  // [+-]hh[:mm[:ss]] as seconds.
  std::int32_t hms() {
    int sign = 1;
    if (peek() == '+' || peek() == '-') sign = s[i++] == '-' ? -1 : 1;
    std::int32_t v = number() * 3600;
    if (peek() == ':') {
      ++i;
      v += number() * 60;
      if (peek() == ':') {
        ++i;
        v += number();
      }
    }
    return sign * v;
  }
  PosixTz::Rule rule() {
    PosixTz::Rule r;
    if (peek() == 'M') {
      ++i;
      r.kind = 'M';
      r.month = number();
      if (peek() != '.') fail("expected '.'");
      ++i;
      r.week = number();
      if (peek() != '.') fail("expected '.'");
      ++i;
      r.day = number();
      if (r.month < 1 || r.month > 12 || r.week < 1 || r.week > 5 || r.day > 6) fail("bad Mm.w.d");
    } else if (peek() == 'J') {
      ++i;
      r.kind = 'J';
      r.day = number();
      if (r.day < 1 || r.day > 365) fail("bad Jn");
    } else {
      r.kind = 'D';
      r.day = number();
      if (r.day > 365) fail("bad n");
    }
    if (peek() == '/') {
      ++i;
      r.time = hms();
    }
    return r;
  }
};

// Local seconds (since the epoch, in the zone's local time) of a rule's moment in year y.
std::int64_t rule_local(const PosixTz::Rule& r, std::int32_t y) {
  std::int64_t day;
  if (r.kind == 'M') {
    const std::int64_t first = codec::days_from_civil(y, r.month, 1);
    const int wd_first = static_cast<int>(((first % 7) + 7 + 4) % 7);  // 1970-01-01 was a Thursday
    std::int64_t d = first + ((r.day - wd_first + 7) % 7) + 7 * (r.week - 1);
    const std::int32_t next_m = r.month == 12 ? 1 : r.month + 1;
    const std::int64_t month_end = codec::days_from_civil(r.month == 12 ? y + 1 : y, next_m, 1);
    while (d >= month_end) d -= 7;
    day = d;
  } else if (r.kind == 'J') {
    day = codec::days_from_civil(y, 1, 1) + r.day - 1;
    if (leap(y) && r.day >= 60) ++day;
  } else {
    day = codec::days_from_civil(y, 1, 1) + r.day;
  }
  return day * kDay + r.time;
}

}  // namespace

PosixTz PosixTz::parse(std::string_view s) {
  Cursor c{s};
  PosixTz tz;
  c.name();
  tz.std_offset = -c.hms();  // POSIX counts west as positive
  if (c.done()) return tz;
  c.name();
  tz.has_dst = true;
  tz.dst_offset = tz.std_offset + 3600;
  if (!c.done() && c.peek() != ',') tz.dst_offset = -c.hms();
  if (c.peek() != ',') c.fail("DST without rules");
  ++c.i;
  tz.start = c.rule();
  if (c.peek() != ',') c.fail("expected the end rule");
  ++c.i;
  tz.end = c.rule();
  if (!c.done()) c.fail("trailing characters");
  return tz;
}

std::int32_t PosixTz::offset_at(std::int64_t utc_sec) const noexcept {
  if (!has_dst) return std_offset;
  const std::int32_t y = codec::civil_from_days(floor_div(utc_sec + std_offset, kDay)).year;
  const std::int64_t start = rule_local(this->start, y) - std_offset;  // switch happens in standard time
  const std::int64_t end = rule_local(this->end, y) - dst_offset;      // and back in summer time
  const bool dst = start < end ? (utc_sec >= start && utc_sec < end) : !(utc_sec >= end && utc_sec < start);
  return dst ? dst_offset : std_offset;
}

// --- TimeZone --------------------------------------------------------------------

namespace {

// libdate-tz (3.0.1, Debian 12) ignores a TZif file's POSIX footer: after the
// last transition (2037 in Debian's files) it keeps that transition's offset,
// summer time dropped. Its own POSIX parser (date/ptz.h) does not compile as
// C++20 and refuses TZif v3 rules (America/Nuuk's "M3.5.0/-1"), hence PosixTz.
// The footer is the file's last line, in versions 2-4.
bool read_footer(const std::string& name, PosixTz& out) {
  std::ifstream f("/usr/share/zoneinfo/" + name, std::ios::binary);  // where libdate-tz reads on Linux
  const std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 44 || b.compare(0, 4, "TZif") != 0 || b[4] < '2' || b.back() != '\n') return false;
  const std::size_t open = b.rfind('\n', b.size() - 2);
  if (open == std::string::npos || open + 2 == b.size()) return false;  // no rule
  out = PosixTz::parse(std::string_view(b).substr(open + 1, b.size() - open - 2));
  return true;
}

}  // namespace

std::shared_ptr<const TimeZone> TimeZone::fixed(std::int32_t offset_sec, std::string name) {
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = std::move(name);
  tz->initial_offset_ = offset_sec;
  return tz;
}

std::shared_ptr<const TimeZone> TimeZone::load(std::string_view name) {
  try {
    return fixed(parse_utc_offset(name), std::string(name));
  } catch (const std::invalid_argument&) {}
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = std::string(name);
  // The transitions are copied once: schedules are read at every timer turn,
  // and a search of this table is about four times cheaper than get_info.
  try {
    const date::time_zone* zone = date::locate_zone(tz->name_);
    const date::sys_seconds never{date::sys_days{date::year{9999} / 1 / 1}};
    auto info = zone->get_info(date::sys_seconds{date::sys_days{date::year::min() / 1 / 1}});
    tz->initial_offset_ = static_cast<std::int32_t>(info.offset.count());
    while (info.end < never) {
      info = zone->get_info(info.end);
      tz->transitions_.push_back(info.begin.time_since_epoch().count());
      tz->offsets_.push_back(static_cast<std::int32_t>(info.offset.count()));
    }
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(
        "time zone \"" + tz->name_ +
        "\" is not UTC, a fixed offset or a zone of the system's tz database (tzdata): " + e.what());
  }
  tz->has_footer_ = read_footer(tz->name_, tz->footer_);
  return tz;
}

std::int32_t TimeZone::offset_at(std::int64_t utc_sec) const noexcept {
  if (transitions_.empty() || utc_sec < transitions_.front())
    return transitions_.empty() && has_footer_ ? footer_.offset_at(utc_sec) : initial_offset_;
  if (has_footer_ && utc_sec >= transitions_.back()) return footer_.offset_at(utc_sec);
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_sec);
  return offsets_[static_cast<std::size_t>(it - transitions_.begin()) - 1];
}

std::int64_t TimeZone::to_utc(std::int64_t local_sec) const noexcept {
  // Try the offsets in force around that moment; take the earliest instant
  // that reads as this local time, else (a gap) the instant after the gap.
  const std::int32_t before = offset_at(local_sec - 2 * kDay);
  const std::int32_t after = offset_at(local_sec + 2 * kDay);
  std::int64_t best = INT64_MAX;
  for (const std::int32_t off : {before, after, offset_at(local_sec)}) {
    const std::int64_t u = local_sec - off;
    if (offset_at(u) == off && u < best) best = u;
  }
  if (best != INT64_MAX) return best;
  return local_sec - std::min(before, after);  // in a gap: the later reading
}

}  // namespace kite::session
