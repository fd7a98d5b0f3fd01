#include "kite/codec/encoder.hpp"

#include <climits>
#include <cstring>
#include <ctime>

namespace kite::codec {
namespace {

void append_field(std::string& out, std::uint32_t tag, const std::string& value) {
  if (value.empty()) return;
  out += std::to_string(tag);
  out += '=';
  out += value;
  out += kSoh;
}

// Three digits of v (< 1000).
char* put3(char* q, std::uint32_t v) noexcept {
  const std::uint32_t pair = v % 100;
  q[0] = static_cast<char>('0' + v / 100);
  q[1] = detail::kDigitPairs[pair * 2];
  q[2] = detail::kDigitPairs[pair * 2 + 1];
  return q + 3;
}

}  // namespace

HeaderTemplate::HeaderTemplate(const HeaderFields& f) : fields_(f) {
  begin_ = "8=" + f.begin_string + kSoh + "9=";
  append_field(fixed_, tag::SenderCompID, f.sender_comp_id);
  append_field(fixed_, tag::TargetCompID, f.target_comp_id);
  append_field(fixed_, tag::SenderSubID, f.sender_sub_id);
  append_field(fixed_, tag::TargetSubID, f.target_sub_id);
  append_field(fixed_, tag::SenderLocationID, f.sender_location_id);
  append_field(fixed_, tag::TargetLocationID, f.target_location_id);
}

namespace {
// The last millisecond rendered on this thread, "YYYYMMDD-HH:MM:SS.mmm", and
// its second: a thread's writers share it (the text depends on the time
// alone), and one inbound message's replies carry one time (SendingTime and
// TransactTime), so most stamps are a copy.
struct MilliText {
  std::int64_t ms = INT64_MIN;
  std::int64_t sec = INT64_MIN;
  char text[21] = {};
};
thread_local MilliText t_milli;

// Floor division (times before 1970 are negative).
std::int64_t floor_div(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return q * b > a ? q - 1 : q;
}

[[gnu::noinline]] void render_milli(MilliText& t, std::int64_t ms) noexcept {
  const std::int64_t sec = floor_div(ms, 1000);
  if (sec != t.sec) {  // date and time of day once per second
    write_utc_timestamp(t.text, sec * 1'000'000'000, TimePrecision::seconds);
    t.sec = sec;
    t.text[17] = '.';
  }
  put3(t.text + 18, static_cast<std::uint32_t>(ms - sec * 1000));
  t.ms = ms;
}
}  // namespace

[[gnu::hot]] char* MessageWriter::render_timestamp(char* q, std::int64_t nanos, TimePrecision precision) noexcept {
  const std::int64_t ms = nanos >= 0 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(nanos) / 1'000'000)
                                     : floor_div(nanos, 1'000'000);
  MilliText& t = t_milli;
  if (ms != t.ms) [[unlikely]]
    render_milli(t, ms);
  if (precision == TimePrecision::millis) [[likely]] {
    std::memcpy(q, t.text, 21);
    return q + 21;
  }
  const auto sub_ms = static_cast<std::uint32_t>(nanos - ms * 1'000'000);  // 0..999999
  switch (precision) {
    case TimePrecision::seconds: std::memcpy(q, t.text, 17); return q + 17;
    case TimePrecision::millis: std::memcpy(q, t.text, 21); return q + 21;
    case TimePrecision::micros: std::memcpy(q, t.text, 21); return put3(q + 21, sub_ms / 1'000);
    case TimePrecision::nanos: std::memcpy(q, t.text, 21); return put3(put3(q + 21, sub_ms / 1'000), sub_ms % 1'000);
  }
  return q;
}

void MessageWriter::add_timestamp(std::uint32_t t, std::int64_t nanos, TimePrecision precision) noexcept {
  const int n = static_cast<int>(precision);
  const std::size_t len = 17 + (n != 0 ? static_cast<std::size_t>(n) + 1 : 0);
  char* q = claim(t, len);
  if (q == nullptr) return;
  render_timestamp(q, nanos, precision);
  q[len] = kSoh;
}

std::int64_t utc_now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace kite::codec
