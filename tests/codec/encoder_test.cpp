#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"

namespace kite::codec {
namespace {

using testing::pipes;

constexpr std::int64_t kTime = 1'710'495'005'123'456'789;  // 20240315-09:30:05.123456789

HeaderTemplate make_header() { return HeaderTemplate({"FIX.4.4", "KITE", "PEER", "DESK1", "", "", ""}); }

// Writes a message whose body grows with `text`.
std::size_t write(MessageWriter& w, char* buf, std::size_t cap, const std::string& text, std::uint64_t seq = 5) {
  w.begin(buf, cap, "8", seq, kTime);
  w.add_string(tag::OrderID, "O-1");
  w.add_string(tag::Text, text);
  w.add_decimal(tag::Price, {-10125, -2});
  w.add_int(tag::LastQty, -3);
  w.add_uint(tag::CumQty, 1500);
  w.add_char(tag::Side, '1');
  w.add_bool(tag::PossResend, true);
  w.add_timestamp(tag::TransactTime, kTime, TimePrecision::nanos);
  return w.finish();
}

void expect_valid(std::string_view m) {
  const FrameResult fr = frame(m);
  ASSERT_EQ(fr.status, FrameStatus::complete) << to_string(fr.error) << " " << pipes(m);
  ASSERT_EQ(fr.size, m.size());
  FieldIndex ix;
  ASSERT_TRUE(ix.build(m));
  Header h;
  ASSERT_TRUE(read_header(ix, h));
  EXPECT_EQ(h.body_length, fr.body_end - fr.body_begin);
  const std::uint32_t sum = ScalarScan::checksum(m.data(), m.data() + fr.body_end);
  std::uint64_t stated = 0;
  ASSERT_EQ(ix.get(tag::CheckSum, stated), Get::ok);
  EXPECT_EQ(stated, sum);
}

TEST(EncoderTest, writesHeaderTemplateSeqNumAndSendingTimeInOrder) {
  const HeaderTemplate h = make_header();
  MessageWriter w(h);
  char buf[512];
  const std::size_t n = write(w, buf, sizeof buf, "hi");
  ASSERT_GT(n, 0u);
  const std::string m(buf, n);
  expect_valid(m);
  EXPECT_EQ(pipes(m).substr(0, 63), "8=FIX.4.4|9=139|35=8|49=KITE|56=PEER|50=DESK1|34=5|52=20240315-");
  EXPECT_NE(pipes(m).find("|52=20240315-09:30:05.123|37=O-1|58=hi|44=-101.25|32=-3|14=1500|54=1|97=Y|"
                          "60=20240315-09:30:05.123456789|10="),
            std::string::npos)
      << pipes(m);
}

TEST(EncoderTest, bodyLengthDigitCountChangesTwoThreeFourAndBack) {
  const HeaderTemplate h({"FIX.4.4", "A", "B", "", "", "", ""});
  MessageWriter w(h);
  std::vector<char> buf(4096);
  for (const std::size_t text_len : {1u, 5u, 60u, 400u, 1200u, 3u, 2000u, 10u, 100u}) {
    const std::string text(text_len, 'x');
    w.begin(buf.data(), buf.size(), "0", 1, kTime);
    w.add_string(tag::Text, text);
    const std::size_t n = w.finish();
    ASSERT_GT(n, 0u) << text_len;
    const std::string m(buf.data(), n);
    expect_valid(m);
    FieldIndex ix;
    ASSERT_TRUE(ix.build(m));
    std::string_view got;
    ASSERT_EQ(ix.get(tag::Text, got), Get::ok);
    EXPECT_EQ(got, text) << "the body moved with BodyLength's width";
  }
}

TEST(EncoderTest, checkSumIsThreeDigitsForEverySum) {
  const HeaderTemplate h({"FIX.4.4", "A", "B", "", "", "", ""});
  MessageWriter w(h);
  char buf[256];
  bool seen[256] = {};
  // Three printable characters whose sum steps by one: 280 consecutive sums.
  for (int t = 0; t < 3 * 93; ++t) {
    const char text[] = {static_cast<char>('!' + std::min(t, 93)), static_cast<char>('!' + std::clamp(t - 93, 0, 93)),
                         static_cast<char>('!' + std::max(t - 186, 0)), 0};
    w.begin(buf, sizeof buf, "0", 1, kTime);
    w.add_string(tag::Text, text);
    const std::size_t n = w.finish();
    ASSERT_GT(n, 7u);
    const std::string m(buf, n);
    expect_valid(m);
    const std::uint32_t sum = ScalarScan::checksum(buf, buf + n - 7);
    char want[8];
    std::snprintf(want, sizeof want, "10=%03u%c", sum, kSoh);
    EXPECT_EQ(m.substr(n - 7), want) << pipes(m);
    seen[sum] = true;
  }
  for (std::uint32_t sum = 0; sum < 256; ++sum) EXPECT_TRUE(seen[sum]) << sum;
}

TEST(EncoderTest, smallBufferFailsWithZeroAndNeverWritesPastCapacity) {
  const HeaderTemplate h = make_header();
  for (const std::string& text : {std::string(2, 't'), std::string(60, 't'), std::string(1000, 't')}) {
    std::vector<char> ref(4096);
    MessageWriter rw(h);
    const std::size_t n = write(rw, ref.data(), ref.size(), text);
    ASSERT_GT(n, 0u);
    for (std::size_t cap = 0; cap <= n + 40; ++cap) {
      std::vector<char> buf(cap + 64, '\xAA');
      MessageWriter w(h);  // fresh: the same reserved BodyLength width as the reference
      const std::size_t got = write(w, buf.data(), cap, text);
      if (cap >= n) {
        ASSERT_EQ(got, n) << "capacity " << cap;
        ASSERT_EQ(std::memcmp(buf.data(), ref.data(), n), 0);
        EXPECT_TRUE(w.ok());
      } else {
        ASSERT_EQ(got, 0u) << "capacity " << cap << " of " << n;
        EXPECT_FALSE(w.ok());
      }
      for (std::size_t i = cap; i < buf.size(); ++i) ASSERT_EQ(buf[i], '\xAA') << "wrote at " << i << " cap " << cap;
    }
  }
}

TEST(EncoderTest, aFailedMessageDoesNotSpoilTheNext) {
  const HeaderTemplate h = make_header();
  MessageWriter w(h);
  char small[40];
  EXPECT_EQ(write(w, small, sizeof small, "x"), 0u);
  char buf[512];
  const std::size_t n = write(w, buf, sizeof buf, "x");
  ASSERT_GT(n, 0u);
  expect_valid({buf, n});
}

TEST(EncoderTest, sendingTimeFollowsTheClockAcrossSecondsAndPrecisions) {
  const HeaderTemplate h = make_header();
  for (const TimePrecision p :
       {TimePrecision::seconds, TimePrecision::millis, TimePrecision::micros, TimePrecision::nanos}) {
    MessageWriter w(h, p);
    char buf[256];
    for (const std::int64_t t : {kTime, kTime + 1'000'000'000, kTime + 86'400'000'000'000, kTime - 7}) {
      w.begin(buf, sizeof buf, "0", 1, t);
      const std::size_t n = w.finish();
      ASSERT_GT(n, 0u);
      FieldIndex ix;
      ASSERT_TRUE(ix.build({buf, n}));
      std::int64_t back = 0;
      TimePrecision seen;
      std::string_view text;
      ASSERT_EQ(ix.get(tag::SendingTime, text), Get::ok);
      ASSERT_TRUE(parse_utc_timestamp(text, back, &seen)) << text;
      std::int64_t unit = 1;
      for (int k = static_cast<int>(p); k < 9; ++k) unit *= 10;
      EXPECT_EQ(back, t - t % unit) << text;
      EXPECT_EQ(seen, p);
    }
  }
}

TEST(EncoderTest, rawFieldsAndDataFieldsWithSohRoundTrip) {
  const HeaderTemplate h = make_header();
  MessageWriter w(h);
  char buf[512];
  const std::string data = std::string("a") + kSoh + "b=c" + kSoh + "10=123";
  w.begin(buf, sizeof buf, "B", 3, kTime);
  w.add_raw(testing::soh("148=headline|"));
  w.add_uint(tag::RawDataLength, data.size());
  w.add_string(tag::RawData, data);
  w.add_string(tag::Text, "after");
  const std::size_t n = w.finish();
  ASSERT_GT(n, 0u);
  expect_valid({buf, n});
  FieldIndex ix;
  ASSERT_TRUE(ix.build({buf, n}));
  std::string_view got;
  ASSERT_EQ(ix.get(tag::RawData, got), Get::ok);
  EXPECT_EQ(got, data);
  ASSERT_EQ(ix.get(tag::Text, got), Get::ok);
  EXPECT_EQ(got, "after");
  EXPECT_FALSE(ix.has(123)) << "the 10=123 inside RawData is not a field";
}

// reserve() and codec::put: a run of fields written unchecked, as the
// typed calls would write them.
TEST(EncoderTest, reservedRunWritesWhatTheTypedCallsWrite) {
  const HeaderTemplate h = make_header();
  MessageWriter typed(h), run(h);
  char a[512], b[512];
  typed.begin(a, sizeof a, "8", 7, kTime);
  typed.add_string(tag::ClOrdID, "C-1");
  typed.add_char(tag::Side, '2');
  typed.add_timestamp(tag::TransactTime, kTime);
  run.begin(b, sizeof b, "8", 7, kTime);
  char* q = run.reserve(64);
  ASSERT_NE(q, nullptr);
  q = put::text(q, "11=");
  q = put::view(q, "C-1");
  q = put::text(q, "\x01" "54=");
  q = put::chr(q, '2');
  q = put::text(q, "\x01" "60=");
  q = run.put_timestamp(q, kTime);
  q = put::chr(q, kSoh);
  run.advance(q);
  const std::size_t na = typed.finish(), nb = run.finish();
  ASSERT_GT(na, 0u);
  EXPECT_EQ(pipes(std::string_view(a, na)), pipes(std::string_view(b, nb)));
  expect_valid(std::string_view(b, nb));
}

// put_timestamp, add_timestamp and begin()'s SendingTime give one text for
// one reading, whatever came before; another precision its own; a field
// with exactly its room written in full and nothing past it.
TEST(EncoderTest, aTimestampRenderedOnceIsTheSameTextEveryWay) {
  const HeaderTemplate h = make_header();
  for (const TimePrecision p :
       {TimePrecision::seconds, TimePrecision::millis, TimePrecision::micros, TimePrecision::nanos}) {
    MessageWriter w(h, p);
    for (const std::int64_t t : {kTime, kTime, kTime + 1, kTime + 1'000'000, kTime - 7}) {
      const std::int64_t other = t + 1'001'001'001;  // every digit differs
      char reference[32];
      const std::string_view want(reference,
                                  static_cast<std::size_t>(write_utc_timestamp(reference, t, p) - reference));
      char buf[512];
      w.begin(buf, sizeof buf, "8", 1, t);
      char* q = w.reserve(128);
      ASSERT_NE(q, nullptr);
      char* const a = q;
      q = w.put_timestamp(a, t);
      EXPECT_EQ(std::string_view(a, static_cast<std::size_t>(q - a)), want);
      char* const b = q;
      q = w.put_timestamp(b, other);  // a new reading, then the first again
      char reference2[32];
      EXPECT_EQ(std::string_view(b, static_cast<std::size_t>(q - b)),
                std::string_view(reference2,
                                 static_cast<std::size_t>(write_utc_timestamp(reference2, other, p) - reference2)));
      char* const c = q;
      q = w.put_timestamp(c, t);
      EXPECT_EQ(std::string_view(c, static_cast<std::size_t>(q - c)), want);
      // (The run is not kept: no advance(q).)
      w.add_timestamp(tag::TransactTime, t, TimePrecision::nanos);  // another precision
      w.add_timestamp(tag::OrigSendingTime, t);
      const std::size_t n = w.finish();
      ASSERT_GT(n, 0u);
      FieldIndex ix;
      ASSERT_TRUE(ix.build({buf, n}));
      std::string_view v;
      ASSERT_EQ(ix.get(tag::SendingTime, v), Get::ok);
      EXPECT_EQ(v, want);
      ASSERT_EQ(ix.get(tag::OrigSendingTime, v), Get::ok);
      EXPECT_EQ(v, want);
      char reference3[32];
      ASSERT_EQ(ix.get(tag::TransactTime, v), Get::ok);
      EXPECT_EQ(
          v, std::string_view(reference3, static_cast<std::size_t>(
                                              write_utc_timestamp(reference3, t, TimePrecision::nanos) - reference3)));
    }
  }
  // Exactly the room the field needs: the copy stops at its end.
  MessageWriter w(h);
  char buf[256];
  w.begin(buf, sizeof buf, "0", 1, kTime);
  const std::size_t used = w.written();
  MessageWriter tight(h);
  const std::size_t room = used + 3 + 21 + 1;  // "52=" value SOH after the header
  std::string text(room + 8, '#');
  tight.begin(text.data(), room, "0", 1, kTime);
  tight.add_timestamp(tag::SendingTime, kTime);
  EXPECT_TRUE(tight.ok());
  EXPECT_EQ(text.substr(room), std::string(8, '#')) << "nothing past the capacity";
  EXPECT_EQ(text.substr(room - 22, 21), "20240315-09:30:05.123");
}

TEST(EncoderTest, reserveOfMoreThanTheRoomChangesNothing) {
  const HeaderTemplate h = make_header();
  MessageWriter w(h);
  char buf[160];
  w.begin(buf, sizeof buf, "0", 1, kTime);
  EXPECT_EQ(w.reserve(sizeof buf), nullptr);
  EXPECT_TRUE(w.ok());
  w.add_string(tag::TestReqID, "T-1");  // what is shorter still fits
  const std::size_t n = w.finish();
  ASSERT_GT(n, 0u);
  expect_valid(std::string_view(buf, n));
}

}  // namespace
}  // namespace kite::codec
