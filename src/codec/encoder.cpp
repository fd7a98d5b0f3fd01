#include "kite/codec/encoder.hpp"

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

char* MessageWriter::render_timestamp(char* q, std::int64_t nanos, TimePrecision precision) noexcept {
  const int n = static_cast<int>(precision);
  constexpr std::int64_t kNs = 1'000'000'000;
  std::int64_t sec = nanos / kNs;
  std::int64_t frac = nanos % kNs;
  if (frac < 0) {
    frac += kNs;
    --sec;
  }
  if (sec != cached_second_) {  // date and time of day re-rendered once per second
    write_utc_timestamp(cached_, sec * kNs, TimePrecision::seconds);
    cached_second_ = sec;
  }
  std::memcpy(q, cached_, sizeof cached_);
  q += sizeof cached_;
  if (n != 0) {
    *q++ = '.';
    // Constant divisors per precision: multiplications, not divisions.
    const auto f = static_cast<std::uint32_t>(frac);
    switch (precision) {
      case TimePrecision::millis: q = put3(q, f / 1'000'000); break;
      case TimePrecision::micros: q = put3(put3(q, f / 1'000'000), f / 1'000 % 1'000); break;
      case TimePrecision::nanos: q = put3(put3(put3(q, f / 1'000'000), f / 1'000 % 1'000), f % 1'000); break;
      case TimePrecision::seconds: break;
    }
  }
  return q;
}

void MessageWriter::add_timestamp(std::uint32_t t, std::int64_t nanos, TimePrecision precision) noexcept {
  const int n = static_cast<int>(precision);
  const std::size_t len = sizeof cached_ + (n != 0 ? static_cast<std::size_t>(n) + 1 : 0);
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
