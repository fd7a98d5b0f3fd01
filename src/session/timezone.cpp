#include "kite/session/timezone.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

std::shared_ptr<const TimeZone> TimeZone::fixed(std::int32_t offset_sec, std::string name) {
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = std::move(name);
  tz->initial_offset_ = offset_sec;
  return tz;
}

std::shared_ptr<const TimeZone> TimeZone::from_tzif(std::string_view b, std::string name) {
  const auto bad = [&](const char* why) -> std::invalid_argument {
    return std::invalid_argument("time zone " + name + ": " + why);
  };
  const auto u32 = [&](std::size_t at) -> std::uint32_t {
    if (at + 4 > b.size()) throw bad("truncated TZif file");
    return (std::uint32_t{static_cast<unsigned char>(b[at])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(b[at + 1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(b[at + 2])} << 8) | static_cast<unsigned char>(b[at + 3]);
  };
  const auto i64 = [&](std::size_t at) -> std::int64_t {
    return static_cast<std::int64_t>((std::uint64_t{u32(at)} << 32) | u32(at + 4));
  };
  if (b.size() < 44 || b.substr(0, 4) != "TZif") throw bad("not a TZif file");
  const char version = b[4];
  struct Counts {
    std::uint32_t isut, isstd, leap, time, type, chars;
  };
  const auto counts = [&](std::size_t at) {
    return Counts{u32(at + 20), u32(at + 24), u32(at + 28), u32(at + 32), u32(at + 36), u32(at + 40)};
  };
  Counts c = counts(0);
  std::size_t at = 44;
  std::size_t time_size = 4;
  if (version >= '2') {  // skip the 32-bit block; use the 64-bit one
    at += c.time * 4 + c.time + c.type * 6 + c.chars + c.leap * 8 + c.isstd + c.isut;
    c = counts(at);
    at += 44;
    time_size = 8;
  }
  if (c.type == 0) throw bad("no local time types");
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = std::move(name);
  const std::size_t times_at = at;
  const std::size_t idx_at = times_at + c.time * time_size;
  const std::size_t types_at = idx_at + c.time;
  const std::size_t end = types_at + c.type * 6 + c.chars + c.leap * (time_size + 4) + c.isstd + c.isut;
  if (end > b.size()) throw bad("truncated TZif file");
  std::vector<std::int32_t> type_off(c.type);
  std::vector<bool> type_dst(c.type);
  for (std::uint32_t t = 0; t < c.type; ++t) {
    type_off[t] = static_cast<std::int32_t>(u32(types_at + t * 6));
    type_dst[t] = b[types_at + t * 6 + 4] != 0;
  }
  tz->initial_offset_ = type_off[0];
  for (std::uint32_t t = 0; t < c.type; ++t)
    if (!type_dst[t]) {
      tz->initial_offset_ = type_off[t];
      break;
    }
  for (std::uint32_t k = 0; k < c.time; ++k) {
    const std::int64_t when = time_size == 8 ? i64(times_at + k * 8)
                                             : static_cast<std::int32_t>(u32(times_at + k * 4));
    const auto idx = static_cast<unsigned char>(b[idx_at + k]);
    if (idx >= c.type) throw bad("transition to an unknown type");
    tz->transitions_.push_back(when);
    tz->offsets_.push_back(type_off[idx]);
  }
  if (version >= '2' && end < b.size() && b[end] == '\n') {
    const std::size_t close = b.find('\n', end + 1);
    if (close != std::string_view::npos && close > end + 1) {
      tz->footer_ = PosixTz::parse(b.substr(end + 1, close - end - 1));
      tz->has_footer_ = true;
    }
  }
  return tz;
}

std::shared_ptr<const TimeZone> TimeZone::load(std::string_view name) {
  try {
    return fixed(parse_utc_offset(name), std::string(name));
  } catch (const std::invalid_argument&) {
  }
  const std::string n(name);
  if (n.empty() || n.find("..") != std::string::npos || n[0] == '/')
    throw std::invalid_argument("time zone \"" + n + "\" is not UTC, a fixed offset or an IANA zone name");
  const char* dir = std::getenv("TZDIR");
  const std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo") + "/" + n;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("time zone \"" + n + "\" is not UTC, a fixed offset or a zone in " + path);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return from_tzif(bytes, n);
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
