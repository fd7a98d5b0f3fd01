// STYLE.md 8: every SWAR routine and every level's walk (level.hpp) against its
// scalar twin, on the same input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"
#include "walks.hpp"

namespace kite::codec {
namespace {

// Fewer random rounds under the sanitizers, which run ten times slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kRounds = 1;
#else
constexpr int kRounds = 4;
#endif

// Copies `s` to a fresh heap block at a chosen misalignment, with no slack
// after it, so the sanitizer build catches any read past the end.
class Placed {
 public:
  Placed(const std::string& s, std::size_t align) : storage_(align + s.size()) {
    std::copy(s.begin(), s.end(), storage_.begin() + static_cast<std::ptrdiff_t>(align));
    p_ = storage_.data() + align;
    n_ = s.size();
  }
  const char* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  std::vector<char> storage_;
  const char* p_;
  std::size_t n_;
};

// frame_and_build answers what frame() and then build() answer (the scalar
// twins), and leaves the same index; an empty one when the frame is not complete.
void expect_frame_and_build_agrees(const detail::LevelOps& fast, const char* p, std::size_t n, std::uint32_t max,
                                   const std::string& s) {
  FieldIndex x(64), y(64);
  const FramedIndex a = fast.frame_and_build(x, p, n, max);
  const FrameResult c = frame<ScalarScan>(p, n, max);
  ASSERT_EQ(a.frame.status, c.status) << testing::pipes(s);
  ASSERT_EQ(a.frame.error, c.error) << testing::pipes(s);
  ASSERT_EQ(a.frame.size, c.size);
  if (c.status != FrameStatus::complete) {
    ASSERT_EQ(x.size(), 0u);
    ASSERT_TRUE(a.index);
    return;
  }
  ASSERT_EQ(a.frame.body_begin, c.body_begin);
  ASSERT_EQ(a.frame.body_end, c.body_end);
  const IndexResult ry = y.build<ScalarScan>(p, c.size);
  ASSERT_EQ(a.index.error, ry.error) << testing::pipes(s);
  ASSERT_EQ(a.index.offset, ry.offset);
  ASSERT_EQ(a.index.tag, ry.tag);
  ASSERT_EQ(x.size(), y.size());
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].tag, y[i].tag);
    ASSERT_EQ(x[i].offset, y[i].offset);
    ASSERT_EQ(x[i].length, y[i].length);
    ASSERT_EQ(x.find_pos(y[i].tag), y.find_pos(y[i].tag));
  }
}

void expect_scan_agrees(const detail::LevelOps& fast, const Placed& b, const std::string& s) {
  const char* p = b.data();
  const char* end = p + b.size();
  // find, checksum and classify from every start offset.
  for (std::size_t i = 0; i <= b.size(); ++i) {
    for (const char c : {'=', kSoh, '8', '\0', '\xff'}) {
      ASSERT_EQ(fast.find(p + i, end, c), ScalarScan::find(p + i, end, c))
          << "find " << int(c) << " from " << i << " in " << testing::pipes(s);
    }
    ASSERT_EQ(fast.checksum(p + i, end), ScalarScan::checksum(p + i, end)) << i;
    std::uint64_t e1, s1, e2, s2;
    const std::size_t n = static_cast<std::size_t>(end - (p + i));
    fast.classify(p + i, n, e1, s1);
    ScalarScan::classify(p + i, n, e2, s2);
    ASSERT_EQ(e1, e2) << "classify '=' from " << i << " in " << testing::pipes(s);
    ASSERT_EQ(s1, s2) << "classify SOH from " << i << " in " << testing::pipes(s);
  }
  // frame, at several maximum sizes (the buffer's own size and one less:
  // a message that fills it is at the limit, or one byte over).
  const auto whole = static_cast<std::uint32_t>(b.size());
  for (const std::uint32_t max : {kDefaultMaxMessageSize, 64u, 16u, whole, whole == 0 ? 0u : whole - 1}) {
    const FrameResult a = fast.frame(p, b.size(), max), c = frame<ScalarScan>(p, b.size(), max);
    ASSERT_EQ(a.status, c.status) << testing::pipes(s);
    ASSERT_EQ(a.error, c.error) << testing::pipes(s);
    ASSERT_EQ(a.size, c.size);
    ASSERT_EQ(a.body_begin, c.body_begin);
    ASSERT_EQ(a.body_end, c.body_end);
    expect_frame_and_build_agrees(fast, p, b.size(), max, s);
  }
  // index.
  FieldIndex x, y;
  const IndexResult rx = fast.build(x, p, b.size()), ry = y.build<ScalarScan>(p, b.size());
  ASSERT_EQ(rx.error, ry.error) << testing::pipes(s);
  ASSERT_EQ(rx.offset, ry.offset);
  ASSERT_EQ(rx.tag, ry.tag);
  ASSERT_EQ(x.size(), y.size());
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].tag, y[i].tag);
    ASSERT_EQ(x[i].offset, y[i].offset);
    ASSERT_EQ(x[i].length, y[i].length);
    // The tag, checked against the text before the value independently.
    const std::size_t from = i == 0 ? 0 : y[i - 1].offset + y[i - 1].length + 1;
    ASSERT_EQ(std::string(p + from, y[i].offset - 1 - from), std::to_string(y[i].tag));
  }
}

void expect_twins_agree(const detail::LevelOps& fast, const std::string& s, std::size_t align = 0) {
  const Placed b(s, align);
  expect_scan_agrees(fast, b, s);
}

// Each test runs once per walk (walks.hpp): SWAR and every level.
class TwinTest : public ::testing::TestWithParam<testing::Walk> {};
INSTANTIATE_TEST_SUITE_P(Walks, TwinTest, ::testing::ValuesIn(testing::kWalks), testing::walk_name);

std::string random_bytes(std::mt19937_64& rng, std::size_t n, const std::string& alphabet) {
  std::string s(n, '\0');
  for (char& c : s) c = alphabet.empty() ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
  return s;
}

TEST_P(TwinTest, walkAndScalarTwinAgreeOnEveryShortLengthAtEveryAlignment) {
  KITE_WALK_OR_SKIP(fast);
  std::mt19937_64 rng(1);
  const std::string fixish = std::string("=8901") + kSoh + kSoh + "=";
  for (std::size_t len = 0; len <= 64; ++len) {
    for (std::size_t align = 0; align < 8; ++align) {
      expect_twins_agree(*fast, random_bytes(rng, len, ""), align);
      expect_twins_agree(*fast, random_bytes(rng, len, fixish), align);
      expect_twins_agree(*fast, std::string(len, '='), align);
      expect_twins_agree(*fast, std::string(len, kSoh), align);
    }
  }
}

TEST_P(TwinTest, walkAndScalarTwinAgreeOnRandomBytesAndFixishMixes) {
  KITE_WALK_OR_SKIP(fast);
  std::mt19937_64 rng(2);
  const std::string fixish = std::string("==0123456789") + kSoh + kSoh + kSoh;
  for (int i = 0; i < 750 * kRounds; ++i) {
    const std::size_t len = rng() % 400;
    expect_twins_agree(*fast, random_bytes(rng, len, ""), rng() % 8);
    expect_twins_agree(*fast, random_bytes(rng, len, fixish), rng() % 8);
    // A mix that is a field list: tag=value SOH ...
    std::string fields;
    while (fields.size() < len) {
      fields += std::to_string(rng() % 3000) + "=" + random_bytes(rng, rng() % 12, fixish) + kSoh;
    }
    expect_twins_agree(*fast, fields, rng() % 8);
  }
}

TEST_P(TwinTest, walkAndScalarTwinAgreeOnValidMessagesWithMutatedBytes) {
  KITE_WALK_OR_SKIP(fast);
  std::mt19937_64 rng(3);
  const std::string m = testing::new_order_single_44(12345);
  const std::string special = std::string("=8901") + kSoh + "\x80\xff";
  expect_twins_agree(*fast, m);
  for (int i = 0; i < 1000 * kRounds; ++i) {
    std::string s = m;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[at] = special[rng() % special.size()]; break;
        case 1: s[at] = static_cast<char>(rng()); break;
        case 2: s = s.substr(0, at) + s.substr(std::min(s.size(), at + 1 + rng() % 5)); break;
        default: s = s.substr(0, at) + special[rng() % special.size()] + s.substr(at); break;
      }
      if (s.empty()) s.push_back('8');
    }
    if (rng() % 3 == 0) s += m;  // a second message behind it
    expect_twins_agree(*fast, s, rng() % 8);
    expect_twins_agree(*fast, s.substr(0, rng() % (s.size() + 1)), rng() % 8);  // truncated
  }
}

TEST_P(TwinTest, checksumAgreesOnLongBuffersPastItsFoldInterval) {
  KITE_WALK_OR_SKIP(fast);
  std::mt19937_64 rng(4);
  for (const std::size_t len : {511u, 512u, 513u, 4096u, 70001u}) {
    const std::string s = random_bytes(rng, len, "");
    std::string ff(len, '\xff');
    EXPECT_EQ(SwarScan::checksum(s.data(), s.data() + len), ScalarScan::checksum(s.data(), s.data() + len));
    EXPECT_EQ(SwarScan::checksum(ff.data(), ff.data() + len), ScalarScan::checksum(ff.data(), ff.data() + len));
    EXPECT_EQ(fast->checksum(s.data(), s.data() + len), ScalarScan::checksum(s.data(), s.data() + len));
    EXPECT_EQ(fast->checksum(ff.data(), ff.data() + len), ScalarScan::checksum(ff.data(), ff.data() + len));
  }
}

TEST_P(TwinTest, classifyMarksExactlyTheEqualsAndSohBytesOfABlock) {
  KITE_WALK_OR_SKIP(fast);
  std::string block(64, 'x');
  block[0] = '=';
  block[7] = kSoh;
  block[8] = '=';
  block[63] = kSoh;
  block[40] = '=' + 1;
  block[41] = kSoh + 1;
  std::uint64_t eq, soh;
  ScalarScan::classify(block.data(), 64, eq, soh);
  EXPECT_EQ(eq, (1ull << 0) | (1ull << 8));
  EXPECT_EQ(soh, (1ull << 7) | (1ull << 63));
  SwarScan::classify(block.data(), 64, eq, soh);
  EXPECT_EQ(eq, (1ull << 0) | (1ull << 8));
  EXPECT_EQ(soh, (1ull << 7) | (1ull << 63));
  fast->classify(block.data(), 63, eq, soh);
  EXPECT_EQ(soh, 1ull << 7) << "bits at and above n are clear";
}

TEST(TwinTest, wordDigitParsersAgreeWithTheDigitLoop) {
  // parse_digits8 (checks and sums) and digits_value (sums checked digits)
  // against a plain loop, on every length 1..8 with random digits and with
  // one byte of every value planted at every position.
  std::mt19937_64 rng(7);
  for (std::size_t n = 1; n <= 8; ++n) {
    for (int round = 0; round < 2000; ++round) {
      char bytes[8];
      for (char& c : bytes) c = static_cast<char>('0' + rng() % 10);
      if (round % 2 == 1) bytes[rng() % 8] = static_cast<char>(rng() % 256);
      std::uint64_t w;
      std::memcpy(&w, bytes, sizeof w);
      bool digits = true;
      std::uint32_t expected = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const unsigned d = static_cast<unsigned char>(bytes[i]) - static_cast<unsigned>('0');
        digits = digits && d <= 9;
        expected = expected * 10 + d;
      }
      std::uint32_t got = 0;
      ASSERT_EQ(detail::parse_digits8(w, n, got), digits) << "n=" << n << " round " << round;
      if (digits) {
        ASSERT_EQ(got, expected) << "n=" << n;
        if (n <= 7) {
          ASSERT_EQ(detail::digits_value(w ^ 0x3030303030303030ull, n), expected) << "n=" << n;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kite::codec
