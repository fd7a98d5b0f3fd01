// The index's fast walks against its plain scalar twin on field lists built to
// hit their edges: field counts around the 16-field vectors and 64-byte blocks,
// tags of 1 to 10 digits, leading zeros, 3-byte fields before 1-digit tags,
// values longer than a block,
// length and data fields anywhere, repeated tags, tags past the direct slot
// table, and index capacities smaller than the field count. Run for the SWAR
// walk and every level (walks.hpp); levels the CPU lacks are skipped.
#include <gtest/gtest.h>

#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kite/codec/codec.hpp"
#include "walks.hpp"

namespace kite::codec {
namespace {

// Index x (and its build's answer rx) is index y (ry), field by field and
// slot by slot: the first field with each tag, and nothing for `absent`.
void expect_same(const FieldIndex& x, const IndexResult& rx, const FieldIndex& y, const IndexResult& ry,
                 const std::string& s, std::initializer_list<std::uint32_t> absent) {
  ASSERT_EQ(rx.error, ry.error) << s;
  ASSERT_EQ(rx.offset, ry.offset) << s;
  ASSERT_EQ(rx.tag, ry.tag) << s;
  ASSERT_EQ(x.size(), y.size()) << s;
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].tag, y[i].tag) << i << " in " << s;
    ASSERT_EQ(x[i].offset, y[i].offset) << i;
    ASSERT_EQ(x[i].length, y[i].length) << i;
  }
  for (std::uint32_t i = 0; i < y.size(); ++i) ASSERT_EQ(x.find_pos(y[i].tag), y.find_pos(y[i].tag)) << y[i].tag;
  for (const std::uint32_t t : absent) ASSERT_EQ(x.find_pos(t), y.find_pos(t)) << t;
}

void expect_same_index(const detail::LevelOps& fast, const std::string& s, std::uint32_t capacity) {
  FieldIndex x(capacity), y(capacity);
  // Heap copy with no slack, so a sanitizer build catches reads past the end.
  const std::vector<char> bytes(s.begin(), s.end());
  const IndexResult rx = fast.build(x, bytes.data(), bytes.size());
  const IndexResult ry = y.build<ScalarScan>(bytes.data(), bytes.size());
  expect_same(x, rx, y, ry, s, {0u, 1u, 7u, 95u, 96u, 2047u, 2048u, 9999u});
}

void expect_same_index_all_capacities(const detail::LevelOps& fast, const std::string& s, std::uint32_t fields) {
  expect_same_index(fast, s, 1024);
  expect_same_index(fast, s, fields);
  if (fields > 1) expect_same_index(fast, s, fields - 1);
  if (fields > 17) expect_same_index(fast, s, 17);
}

std::string tag_text(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0: return std::to_string(1 + rng() % 9);                 // 1 digit
    case 1: return std::to_string(10000 + rng() % 90000);         // 5 digits
    case 2: return std::to_string(1000000 + rng() % 9000000);     // 7 digits
    case 3: return std::to_string(10000000 + rng() % 990000000);  // 8 or 9 digits
    case 4: return std::to_string(2048 + rng() % 8000);           // past the direct slots
    case 5: return "35";                                          // repeated tags
    case 6: return std::to_string(1000 + rng() % 2000);           // 4 digits, among FIX 5.0's length tags
    default: return std::to_string(1 + rng() % 700);              // 1 to 3 digits
  }
}

std::string value_text(std::mt19937_64& rng) {
  static const std::string kAlphabet = "0123456789=ABCxyz.-";
  std::string v;
  const std::size_t n = rng() % 4 == 0 ? 0 : rng() % 24;
  for (std::size_t i = 0; i < n; ++i) v += kAlphabet[rng() % kAlphabet.size()];
  return v;
}

// A field list of n fields; sometimes with a flaw planted in one field.
std::string field_list(std::mt19937_64& rng, std::uint32_t n, bool flaw) {
  std::string s;
  const std::uint32_t flawed = flaw ? static_cast<std::uint32_t>(rng() % n) : n;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string tag = tag_text(rng), value = value_text(rng);
    if (rng() % 10 == 0) {  // a 3-byte field right before a 1-digit tag
      s += std::to_string(1 + rng() % 9) + "=\x01";
      tag = std::to_string(1 + rng() % 9);
    }
    if (rng() % 15 == 0) {  // a length field and its data field (any of the dictionaries'), SOH and '=' inside
      std::string data = value_text(rng) + "\x01" + "9=1" + value_text(rng);
      const bool wrong = flaw && i == flawed;
      const detail::LengthDataPair& pair = detail::kLengthDataPairs[rng() % std::size(detail::kLengthDataPairs)];
      s += std::to_string(pair.length_tag) + "=" + std::to_string(data.size() + (wrong ? 1 : 0)) + "\x01" +
           std::to_string(pair.data_tag) + "=" + data + "\x01";
    }
    if (i == flawed) {
      switch (rng() % 5) {
        case 0: tag = "0" + tag; break;     // a leading zero
        case 1: tag = "1234567890"; break;  // 10 digits
        case 2: tag = ""; break;            // empty
        case 3: tag = tag + "x"; break;     // not a digit
        case 4: value += "\x01"; break;     // an empty field after it
      }
    }
    s += tag + "=" + value + "\x01";
  }
  return s;
}

void run_edges(const detail::LevelOps& fast) {
  std::mt19937_64 rng(11);
  for (std::uint32_t n = 1; n <= 80; ++n) {
    for (int round = 0; round < 12; ++round) {
      const std::string s = field_list(rng, n, round % 3 == 2);
      expect_same_index_all_capacities(fast, s, n);
      if (::testing::Test::HasFatalFailure()) return;
      // Cut short: the last field without its SOH.
      expect_same_index(fast, s.substr(0, s.size() - 1), 1024);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Long values: blocks with no SOH (or no tag end), a tag's end carried
  // over one or more blocks to its SOH, digits and '=' runs across blocks.
  for (std::uint32_t n = 1; n <= 12; ++n) {
    for (int round = 0; round < 40; ++round) {
      std::string s;
      for (std::uint32_t i = 0; i < n; ++i) {
        std::string value;
        const std::size_t length = rng() % 3 == 0 ? rng() % 8 : 40 + rng() % 160;
        for (std::size_t k = 0; k < length; ++k) value += "0123456789=AZ"[rng() % 13];
        s += tag_text(rng) + "=" + value + "\x01";
      }
      expect_same_index_all_capacities(fast, s, n);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Minimal fields: 21 per 64-byte block, more than 16 per vector.
  std::string tiny;
  for (int i = 0; i < 200; ++i) tiny += std::to_string(1 + i % 9) + "=\x01";
  expect_same_index_all_capacities(fast, tiny, 200);
}

// A complete message around a field list: "8=FIX.4.4", BodyLength, the list, CheckSum.
std::string framed_message(const std::string& body) {
  std::string m =
      "8=FIX.4.4\x01"
      "9=" +
      std::to_string(body.size()) + "\x01" + body;
  unsigned sum = 0;
  for (const char c : m) sum += static_cast<unsigned char>(c);
  const std::string digits = std::to_string(1000 + sum % 256);
  return m + "10=" + digits.substr(1) + "\x01";
}

// build(frame, frame()'s answer) gives the index build(frame, size) gives.
void expect_same_framed_index(const detail::LevelOps& fast, const std::string& m, std::uint32_t capacity) {
  const std::vector<char> bytes(m.begin(), m.end());
  const FrameResult fr = fast.frame(bytes.data(), bytes.size(), kDefaultMaxMessageSize);
  ASSERT_EQ(fr.status, FrameStatus::complete) << m;
  FieldIndex x(capacity), y(capacity);
  const IndexResult rx = fast.build_framed(x, bytes.data(), fr);
  const IndexResult ry = y.build<ScalarScan>(bytes.data(), bytes.size());
  ASSERT_EQ(x.frame().size(), bytes.size());
  expect_same(x, rx, y, ry, m, {0u, 1u, 8u, 9u, 10u, 35u, 95u, 96u, 2047u, 2048u, 9999u});
  // frame_and_build, which takes the checksum in the walk, answers the same.
  FieldIndex z(capacity);
  const FramedIndex rz = fast.frame_and_build(z, bytes.data(), bytes.size(), kDefaultMaxMessageSize);
  ASSERT_EQ(rz.frame.status, FrameStatus::complete) << m;
  ASSERT_EQ(rz.frame.size, fr.size);
  expect_same(z, rz.index, y, ry, m, {0u, 1u, 8u, 9u, 10u, 35u, 95u, 96u, 2047u, 2048u, 9999u});
  // With one byte of the body changed by one (not the SOH that frame()
  // looks for before CheckSum), the sum is off by one: the frame is refused
  // and the index left empty.
  std::vector<char> bad = bytes;
  std::size_t at = fr.body_begin + (fr.body_end - fr.body_begin) / 2;
  if (at == fr.body_end - 1) at = fr.body_begin;
  bad[at] = static_cast<char>(bad[at] + 1);
  const FramedIndex rb = fast.frame_and_build(z, bad.data(), bad.size(), kDefaultMaxMessageSize);
  ASSERT_EQ(rb.frame.status, FrameStatus::invalid) << m;
  ASSERT_EQ(rb.frame.error, FrameError::checksum_mismatch);
  ASSERT_EQ(rb.frame.size, fr.size);
  ASSERT_EQ(z.size(), 0u);
  ASSERT_EQ(z.find_pos(tag::BeginString), -1);
}

void run_framed(const detail::LevelOps& fast) {
  std::mt19937_64 rng(23);
  for (std::uint32_t n = 1; n <= 70; ++n) {
    for (int round = 0; round < 8; ++round) {
      std::string body = field_list(rng, n, round % 3 == 2);
      // Now and then the header's and trailer's tags again in the body.
      if (round % 4 == 1)
        body = "9=5\x01" + body +
               "8=FIX.4.2\x01"
               "10=000\x01";
      const std::string m = framed_message(body);
      for (const std::uint32_t capacity : {1024u, n + 3, n + 2, 3u, 2u, 1u}) {
        expect_same_framed_index(fast, m, capacity);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  std::string tiny;
  for (int i = 0; i < 100; ++i) tiny += std::to_string(1 + i % 9) + "=\x01";
  expect_same_framed_index(fast, framed_message(tiny), 1024);
}

class BulkWalkTest : public ::testing::TestWithParam<testing::Walk> {};
INSTANTIATE_TEST_SUITE_P(Walks, BulkWalkTest, ::testing::ValuesIn(testing::kWalks), testing::walk_name);

TEST_P(BulkWalkTest, walkMatchesTheScalarTwinOnEdgeCases) {
  KITE_WALK_OR_SKIP(fast);
  run_edges(*fast);
}
TEST_P(BulkWalkTest, framedBuildGivesTheWholeFramesIndex) {
  KITE_WALK_OR_SKIP(fast);
  run_framed(*fast);
}
TEST(BulkWalkScalarTest, framedBuildGivesTheWholeFramesIndexWithTheScalarWalk) { run_framed(testing::kScalarTwinOps); }

}  // namespace
}  // namespace kite::codec
