// The table one level's walk fills in (src/codec/level_*.cpp), and FastScan,
// which reaches the level in use through it. Not a contract: see level.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kite/codec/level.hpp"
#include "kite/codec/values.hpp"

namespace kite::codec {

struct FrameResult;
struct IndexResult;
struct FramedIndex;
class FieldIndex;

namespace detail {

// One level's entry points, each a template of the headers instantiated
// with that level's scan in a translation unit built for its instructions.
struct LevelOps {
  Level level;
  FrameResult (*frame)(const char* p, std::size_t n, std::uint32_t max_size) noexcept;
  IndexResult (*build)(FieldIndex& ix, const char* frame, std::size_t size) noexcept;
  IndexResult (*build_framed)(FieldIndex& ix, const char* frame, const FrameResult& framed) noexcept;
  FramedIndex (*frame_and_build)(FieldIndex& ix, const char* bytes, std::size_t n, std::uint32_t max_size) noexcept;
  std::uint32_t (*checksum)(const char* p, const char* end) noexcept;
  void (*classify)(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept;
  const char* (*find)(const char* p, const char* end, char c) noexcept;
};

// The level's table, or null when this build or CPU lacks the level.
const LevelOps* level_ops(Level l) noexcept;
// The level's vector read of a UTCTimestamp (values.hpp), or null when it
// has none or this build or CPU lacks it.
TimestampWordRead timestamp_word_read(Level l) noexcept;
// The table in use: the scalar level's until the choice at load replaces it.
extern const LevelOps* g_active_ops;

}  // namespace detail

// The scan of the level in use (level.hpp). frame<FastScan>,
// FieldIndex::build<FastScan> and frame_and_build<FastScan> (the defaults)
// are one call into that level's walk; these three go through its table too.
struct FastScan {
  static std::uint32_t checksum(const char* p, const char* end) noexcept {
    return detail::g_active_ops->checksum(p, end);
  }
  static void classify(const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
    detail::g_active_ops->classify(p, n, eq, soh);
  }
  static const char* find(const char* p, const char* end, char c) noexcept;
};

}  // namespace kite::codec
