// A level's table (detail::LevelOps) from the headers' templates and its
// scan. Each level's translation unit, built for its instructions, makes its
// table here; tests make tables of the portable scans the same way.
#pragma once

#include "kite/codec/detail/level_ops.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/framer.hpp"

namespace kite::codec::detail {

template <class Scan>
constexpr LevelOps make_level_ops(Level level) noexcept {
  return {
      level,
      [](const char* p, std::size_t n, std::uint32_t max_size) noexcept { return frame<Scan>(p, n, max_size); },
      [](FieldIndex& ix, const char* frame, std::size_t size) noexcept { return ix.build<Scan>(frame, size); },
      [](FieldIndex& ix, const char* frame, const FrameResult& framed) noexcept {
        return ix.build<Scan>(frame, framed);
      },
      [](FieldIndex& ix, const char* bytes, std::size_t n, std::uint32_t max_size) noexcept {
        return ix.frame_and_build<Scan>(bytes, n, max_size);
      },
      [](const char* p, const char* end) noexcept { return Scan::checksum(p, end); },
      [](const char* p, std::size_t n, std::uint64_t& eq, std::uint64_t& soh) noexcept {
        Scan::classify(p, n, eq, soh);
      },
      [](const char* p, const char* end, char c) noexcept { return Scan::find(p, end, c); },
  };
}

}  // namespace kite::codec::detail
