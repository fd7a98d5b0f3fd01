// The message tree both sides of the interop test speak: plain C++14, so the
// QuickFIX translation unit (gnu++14) and the gtest binary (C++20) share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kite::interop {

enum class Kind { string, integer, decimal, character, timestamp };

struct Field {
  int tag = 0;
  Kind kind = Kind::string;
  std::string text;         // the value as Kite renders it
  std::int64_t number = 0;  // integer, decimal mantissa, timestamp in ns
  int exponent = 0;         // decimal exponent
  int precision = 3;        // timestamp sub-second digits
};

struct Entry;

struct Group {
  int count_tag = 0;
  std::string declared;  // the NumInGroup value as received (observed trees only)
  std::vector<Entry> entries;
};

// Fields in any order; the groups after them (wire order is the encoder's business).
struct Entry {
  std::vector<Field> fields;
  std::vector<Group> groups;
};

struct Message {
  std::string msg_type;
  Entry header;  // without BeginString, BodyLength, MsgType
  Entry body;
};

}  // namespace kite::interop
