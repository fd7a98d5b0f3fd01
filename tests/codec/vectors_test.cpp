// The shared frame vectors (tests/vectors/frames.txt), which the pure
// flavours' codecs read too: Kite's framer and index must agree with them.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "fix_text.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/framer.hpp"

namespace kite::codec {
namespace {

struct Vector {
  std::string name, frame, expect, fields;
  std::uint32_t size = 0;
};

std::vector<Vector> read_vectors() {
  std::ifstream in(KITE_FRAME_VECTORS);
  std::vector<Vector> out;
  Vector v;
  std::string line;
  auto flush = [&] {
    if (!v.name.empty()) out.push_back(v);
    v = Vector{};
  };
  while (std::getline(in, line)) {
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    const auto colon = line.find(": ");
    if (colon == std::string::npos) {
      ADD_FAILURE() << "not `key: value`: " << line;
      continue;
    }
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    if (key == "name") v.name = value;
    else if (key == "frame") v.frame = testing::soh(value);
    else if (key == "expect") v.expect = value;
    else if (key == "size") v.size = static_cast<std::uint32_t>(std::stoul(value));
    else if (key == "fields") v.fields = value;
    else ADD_FAILURE() << "unknown key " << key;
  }
  flush();
  return out;
}

// The body's fields as "tag=value|...", as the vectors write them.
std::string body_fields(const FieldIndex& ix, const FrameResult& r) {
  std::string out;
  for (const FieldRef& f : ix) {
    if (f.offset < r.body_begin || f.offset >= r.body_end) continue;  // 8, 9 and 10
    if (!out.empty()) out += '|';
    out += std::to_string(f.tag) + "=" + std::string(ix.value(f));
  }
  return out;
}

TEST(FrameVectorsTest, theFileHoldsEveryKindOfCase) {
  const auto vectors = read_vectors();
  int complete = 0, bad_checksum = 0, bad_field = 0;
  for (const Vector& v : vectors) {
    complete += v.expect == "complete";
    bad_checksum += v.expect == "bad-checksum";
    bad_field += v.expect == "bad-field";
  }
  EXPECT_GE(complete, 5);
  EXPECT_GE(bad_checksum, 1);
  EXPECT_GE(bad_field, 2);
  EXPECT_EQ(complete + bad_checksum + bad_field, static_cast<int>(vectors.size()));
}

TEST(FrameVectorsTest, framerAndIndexAgreeWithEveryVector) {
  FieldIndex ix;
  for (const Vector& v : read_vectors()) {
    SCOPED_TRACE(v.name);
    const FrameResult r = frame<SwarScan>(v.frame.data(), v.frame.size());
    EXPECT_EQ(r.size, v.size);
    if (v.expect == "bad-checksum") {
      EXPECT_EQ(r.status, FrameStatus::invalid);
      EXPECT_EQ(r.error, FrameError::checksum_mismatch);
      continue;
    }
    ASSERT_EQ(r.status, FrameStatus::complete) << to_string(r.error);
    const IndexResult built = ix.build(v.frame.data(), r);
    if (v.expect == "bad-field") {
      EXPECT_FALSE(built);
      continue;
    }
    ASSERT_TRUE(built) << to_string(built.error) << " at " << built.offset;
    EXPECT_EQ(body_fields(ix, r), v.fields);
  }
}

TEST(FrameVectorsTest, everyStrictPrefixOfAVectorIsIncomplete) {
  for (const Vector& v : read_vectors()) {
    SCOPED_TRACE(v.name);
    for (std::size_t n = 0; n < v.size; ++n)
      ASSERT_EQ(frame<SwarScan>(v.frame.data(), n).status, FrameStatus::incomplete) << n;
  }
}

}  // namespace
}  // namespace kite::codec
