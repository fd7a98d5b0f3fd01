#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/framer.hpp"

namespace kite::codec {
namespace {

using testing::fix_message;
using testing::new_order_single_44;
using testing::pipes;
using testing::soh;

FrameResult frame_of(const std::string& s, std::uint32_t max_size = kDefaultMaxMessageSize) {
  return frame<SwarScan>(s.data(), s.size(), max_size);
}

// What a receive loop sees: complete frames and invalid verdicts, in order.
struct Event {
  FrameStatus status;
  FrameError error;
  std::string bytes;  // the frame, or the discarded bytes
  friend bool operator==(const Event&, const Event&) = default;
};

// Frames everything in `stream`, feeding it in pieces cut at `cuts` (offsets,
// ascending), as a receive buffer would: bytes are appended, complete frames
// and discards are consumed from the front.
std::vector<Event> feed(const std::string& stream, const std::vector<std::size_t>& cuts) {
  std::vector<Event> out;
  std::string buf;
  std::size_t fed = 0;
  auto drain = [&] {
    for (int guard = 0; guard < 100000; ++guard) {
      const FrameResult r = frame<SwarScan>(buf.data(), buf.size());
      if (r.status == FrameStatus::incomplete) return;
      EXPECT_GE(r.size, 1u);
      EXPECT_LE(r.size, buf.size());
      out.push_back({r.status, r.error, buf.substr(0, r.size)});
      buf.erase(0, r.size);
    }
    ADD_FAILURE() << "framer made no progress";
  };
  for (const std::size_t cut : cuts) {
    buf.append(stream, fed, cut - fed);
    fed = cut;
    drain();
  }
  buf.append(stream, fed, std::string::npos);
  drain();
  return out;
}

std::vector<std::string> complete_frames(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events)
    if (e.status == FrameStatus::complete) out.push_back(e.bytes);
  return out;
}

TEST(FramerTest, framesOneCompleteMessageAndReportsBodyOffsets) {
  const std::string m = new_order_single_44();
  const FrameResult r = frame_of(m);
  ASSERT_EQ(r.status, FrameStatus::complete) << to_string(r.error);
  EXPECT_EQ(r.error, FrameError::none);
  EXPECT_EQ(r.size, m.size());
  EXPECT_EQ(m.substr(r.body_begin, 5), soh("35=D|"));
  EXPECT_EQ(m.substr(r.body_end, 3), "10=");
  EXPECT_EQ(r.size - r.body_end, 7u);
}

TEST(FramerTest, framesOnlyTheFirstOfSeveralMessages) {
  const std::string a = new_order_single_44(1), b = new_order_single_44(2);
  const FrameResult r = frame_of(a + b);
  ASSERT_EQ(r.status, FrameStatus::complete);
  EXPECT_EQ(r.size, a.size());
}

TEST(FramerTest, acceptsEveryBeginStringKiteSpeaks) {
  for (const char* bs : {"FIX.4.2", "FIX.4.4", "FIXT.1.1", "FIX.5.0"}) {
    const std::string m = fix_message(bs, "35=0|34=1|49=A|52=20240101-00:00:00|56=B|");
    EXPECT_EQ(frame_of(m).status, FrameStatus::complete) << bs;
  }
}

TEST(FramerTest, everyStrictPrefixOfAMessageIsIncomplete) {
  const std::string m = new_order_single_44();
  for (std::size_t n = 0; n < m.size(); ++n) {
    const FrameResult r = frame<SwarScan>(m.data(), n);
    EXPECT_EQ(r.status, FrameStatus::incomplete) << "prefix " << n << ": " << to_string(r.error);
    EXPECT_EQ(r.size, 0u);
  }
}

TEST(FramerTest, garbageBeforeBeginStringIsDiscardedUpToTheNextStart) {
  const std::string m = new_order_single_44();
  const FrameResult r = frame_of("garbage" + m);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::garbage_before_begin_string);
  EXPECT_EQ(r.size, 7u);
}

TEST(FramerTest, garbageEndingInAPossibleStartKeepsThatStart) {
  for (const std::string tail : std::initializer_list<const char*>{"8", "8=", "8=F", "8=FI"}) {
    const std::string s = "xyz" + tail;
    const FrameResult r = frame_of(s);
    ASSERT_EQ(r.status, FrameStatus::invalid) << tail;
    EXPECT_EQ(r.error, FrameError::garbage_before_begin_string);
    EXPECT_EQ(r.size, 3u) << tail;
  }
}

TEST(FramerTest, garbageWithoutAnyPossibleStartIsDiscardedWhole) {
  const std::string s = "hello world 58=x|";
  const FrameResult r = frame_of(s);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::garbage_before_begin_string);
  EXPECT_EQ(r.size, s.size());
}

TEST(FramerTest, badBeginStringIsInvalidAndResyncsToTheNextMessage) {
  const std::string good = new_order_single_44();
  for (const char* bs : {"FIX.9.9", "FIX4.4", "XYZ", "FIXT.1.2", "FIX.4.44"}) {
    const std::string bad = fix_message(bs, "35=0|");
    const FrameResult r = frame_of(bad + good);
    ASSERT_EQ(r.status, FrameStatus::invalid) << bs;
    EXPECT_EQ(r.error, FrameError::bad_begin_string) << bs;
    EXPECT_EQ(r.size, bad.size()) << bs;
  }
}

TEST(FramerTest, overlongBeginStringIsInvalidWithoutWaitingForMore) {
  const FrameResult r = frame_of("8=FIX.4.4.4.4.4.4");
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::bad_begin_string);
}

TEST(FramerTest, missingBodyLengthIsInvalid) {
  const std::string good = new_order_single_44();
  const std::string bad = soh("8=FIX.4.4|35=0|10=000|");
  const FrameResult r = frame_of(bad + good);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::body_length_missing);
  EXPECT_EQ(r.size, bad.size());
}

TEST(FramerTest, bodyLengthThatIsNotANumberIsInvalid) {
  const std::string good = new_order_single_44();
  for (const char* len : {"", "1x", "-5", "12 "}) {
    const std::string bad = soh("8=FIX.4.4|9=") + len + soh("|35=0|10=000|");
    const FrameResult r = frame_of(bad + good);
    ASSERT_EQ(r.status, FrameStatus::invalid) << '"' << len << '"';
    EXPECT_EQ(r.error, FrameError::body_length_not_number) << '"' << len << '"';
    EXPECT_EQ(r.size, bad.size()) << '"' << len << '"';
  }
}

TEST(FramerTest, bodyLengthNotEndingOnAFieldBoundaryIsAMismatch) {
  const std::string good = new_order_single_44();
  std::string bad = soh("8=FIX.4.4|9=6|35=0|49=A|10=000|");  // body is 10 bytes
  const FrameResult r = frame_of(bad + good);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::body_length_mismatch);
  EXPECT_EQ(r.size, bad.size());
  EXPECT_EQ(frame_of(soh("8=FIX.4.4|9=0|10=000|") + good).error, FrameError::body_length_mismatch);
}

TEST(FramerTest, bodyLengthEndingOnABoundaryWithoutCheckSumIsCheckSumMissing) {
  const std::string good = new_order_single_44();
  const std::string bad = soh("8=FIX.4.4|9=5|35=0|49=ABCDE|10=000|");  // ends after 35=0|
  const FrameResult r = frame_of(bad + good);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::checksum_missing);
  EXPECT_EQ(r.size, bad.size());
}

TEST(FramerTest, checkSumNotThreeDigitsDiscardsTheWholeFrame) {
  const std::string m = new_order_single_44();
  for (const char* sum : {"1x3", "12|", "abc"}) {
    std::string bad = m;
    bad.replace(bad.size() - 4, 3, soh(sum));
    const FrameResult r = frame_of(bad + m);
    ASSERT_EQ(r.status, FrameStatus::invalid) << sum;
    EXPECT_EQ(r.error, FrameError::checksum_not_three_digits) << sum;
    EXPECT_EQ(r.size, m.size()) << sum;
  }
  std::string two = m;  // "10=12|" then the next message: the framer reads 7 bytes
  two.replace(two.size() - 4, 4, soh("12|"));
  EXPECT_EQ(frame_of(two + m).error, FrameError::checksum_not_three_digits);
}

TEST(FramerTest, shortCheckSumIsDiscardedAloneWithoutWaitingForMoreBytes) {
  const std::string m = new_order_single_44();
  std::string bad = m;
  bad.replace(bad.size() - 4, 4, soh("0|"));  // "10=0|": 2 bytes short of what BodyLength says
  const FrameResult alone = frame_of(bad);
  ASSERT_EQ(alone.status, FrameStatus::invalid);
  EXPECT_EQ(alone.error, FrameError::checksum_not_three_digits);
  EXPECT_EQ(alone.size, bad.size());
  const FrameResult followed = frame_of(bad + m);  // not one byte of the next message with it
  ASSERT_EQ(followed.status, FrameStatus::invalid);
  EXPECT_EQ(followed.size, bad.size());
  const std::size_t at = m.find(soh("|9=")) + 3;
  std::string longer = m.substr(0, at);  // BodyLength past the trailer: a 9 before its digits
  longer += '9';
  longer += m.substr(at);
  const FrameResult overrun = frame_of(longer);
  ASSERT_EQ(overrun.status, FrameStatus::invalid);
  EXPECT_EQ(overrun.size, longer.size());
}

TEST(FramerTest, wrongCheckSumDiscardsTheWholeFrame) {
  const std::string m = new_order_single_44();
  std::string bad = m;
  char& d = bad[bad.size() - 2];
  d = d == '9' ? '0' : static_cast<char>(d + 1);
  const FrameResult r = frame_of(bad + m);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::checksum_mismatch);
  EXPECT_EQ(r.size, m.size());
  // A flipped body byte is caught the same way.
  std::string flipped = m;
  flipped[30] ^= 0x20;
  EXPECT_EQ(frame_of(flipped).error, FrameError::checksum_mismatch);
}

TEST(FramerTest, messageLongerThanTheMaximumIsTooLargeBeforeItArrives) {
  const std::string m = new_order_single_44();
  // Only the header has arrived, but BodyLength already says it is too long.
  const std::string head = m.substr(0, 20);
  const FrameResult r = frame<SwarScan>(head.data(), head.size(), 100);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_EQ(r.error, FrameError::too_large);
  EXPECT_GE(r.size, 1u);
  EXPECT_EQ(frame_of(m, static_cast<std::uint32_t>(m.size())).status, FrameStatus::complete);
  EXPECT_EQ(frame_of(m, static_cast<std::uint32_t>(m.size() - 1)).error, FrameError::too_large);
}

// 2^31 has ten digits, one more than the framer reads: a length too large,
// not garbage, and known as soon as the tenth digit is in.
TEST(FramerTest, bodyLengthWithMoreDigitsThanTheMaximumIsTooLargeAtOnce) {
  for (const std::string& s : {soh("8=FIX.4.4|9=2147483648|"), soh("8=FIX.4.4|9=2147483648"),
                               soh("8=FIX.4.2|9=1234567890|35=0|10=000|"), soh("8=FIXT.1.1|9=00000000000")}) {
    for (const std::uint32_t max : {kDefaultMaxMessageSize, std::uint32_t{0xFFFFFFFF}}) {
      const FrameResult a = frame<SwarScan>(s.data(), s.size(), max), b = frame<ScalarScan>(s.data(), s.size(), max);
      EXPECT_EQ(a.status, FrameStatus::invalid) << pipes(s);
      EXPECT_EQ(a.error, FrameError::too_large) << pipes(s);
      EXPECT_EQ(b.error, FrameError::too_large) << pipes(s);
    }
  }
}

// The digits so far already exceed the limit: the peer is not waited for.
TEST(FramerTest, bodyLengthAlreadyOverTheLimitIsTooLargeBeforeItsDigitsEnd) {
  const std::string s = soh("8=FIX.4.4|9=70000");
  EXPECT_EQ(frame_of(s, 64 * 1024).error, FrameError::too_large);
  EXPECT_EQ(frame<ScalarScan>(s.data(), s.size(), 64 * 1024).error, FrameError::too_large);
  EXPECT_EQ(frame_of(s, 128 * 1024).status, FrameStatus::incomplete);
  const std::string short_one = soh("8=FIX.4.4|9=6");
  EXPECT_EQ(frame_of(short_one, 64 * 1024).status, FrameStatus::incomplete);
}

TEST(FramerTest, neverLooksPastTheMaximumSizeForABodyLength) {
  std::string s = "8=FIX.4.4" + std::string(1, kSoh) + "9=" + std::string(200, '1');
  const FrameResult r = frame<SwarScan>(s.data(), s.size(), 64);
  ASSERT_EQ(r.status, FrameStatus::invalid);
  EXPECT_LE(r.size, 64u);
}

TEST(FramerTest, everySplitPointDecodesAsTheWholeStream) {
  std::string stream;
  for (std::uint64_t i = 1; i <= 3; ++i) stream += new_order_single_44(i * 7);
  stream += fix_message("FIXT.1.1", "35=A|34=9|49=A|52=20240101-00:00:00|56=B|98=0|108=30|1137=9|");
  const std::vector<Event> whole = feed(stream, {});
  ASSERT_EQ(whole.size(), 4u);
  for (const Event& e : whole) EXPECT_EQ(e.status, FrameStatus::complete);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    ASSERT_EQ(feed(stream, {cut}), whole) << "cut at " << cut;
  }
  for (std::size_t a = 0; a <= stream.size(); a += 13) {
    for (std::size_t b = a; b <= stream.size(); b += 29) ASSERT_EQ(feed(stream, {a, b}), whole) << a << "," << b;
  }
}

TEST(FramerTest, byteByByteDecodesAsTheWholeStream) {
  std::string stream;
  for (std::uint64_t i = 1; i <= 4; ++i) stream += new_order_single_44(i);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < stream.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(feed(stream, cuts), feed(stream, {}));
  EXPECT_EQ(feed(stream, cuts).size(), 4u);
}

TEST(FramerTest, aStreamWithBadFramesYieldsTheSameGoodFramesAtEverySplit) {
  const std::string good1 = new_order_single_44(1), good2 = new_order_single_44(2);
  std::string bad_sum = good1;
  bad_sum[bad_sum.size() - 2] = bad_sum[bad_sum.size() - 2] == '9' ? '0' : '9';
  const std::string stream = "noise" + good1 + soh("8=FIX.4.4|9=x|") + good2 + bad_sum + "8" + good1 + "zz" + good2;
  const std::vector<Event> whole = feed(stream, {});
  const std::vector<std::string> frames = complete_frames(whole);
  ASSERT_EQ(frames, (std::vector<std::string>{good1, good2, good1, good2}));
  std::vector<std::size_t> bytewise;
  for (std::size_t i = 1; i < stream.size(); ++i) bytewise.push_back(i);
  EXPECT_EQ(complete_frames(feed(stream, bytewise)), frames);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    ASSERT_EQ(complete_frames(feed(stream, {cut})), frames) << "cut at " << cut << " " << pipes(stream);
  }
}

TEST(FramerTest, scalarAndSwarFramersAgreeOnTheSameStream) {
  const std::string m = new_order_single_44();
  for (std::size_t n = 0; n <= m.size(); ++n) {
    const FrameResult a = frame<SwarScan>(m.data(), n), b = frame<ScalarScan>(m.data(), n);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.size, b.size);
  }
}

TEST(FramerTest, everyErrorHasText) {
  for (int e = 0; e <= static_cast<int>(FrameError::too_large); ++e) {
    EXPECT_STRNE(to_string(static_cast<FrameError>(e)), "unknown frame error");
  }
}

}  // namespace
}  // namespace kite::codec
