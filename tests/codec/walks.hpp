// The walks the twin tests hold against the scalar twin: the portable SWAR
// scan's, and every level's (level.hpp) through its table, so each level runs
// whatever level the process chose. A level this CPU lacks is skipped
// (GTEST_SKIP), never passed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kite/codec/codec.hpp"
#include "kite/codec/detail/make_level_ops.hpp"
#include "kite/codec/level.hpp"

namespace kite::codec::testing {

struct Walk {
  const char* name;
  const detail::LevelOps* (*ops)();  // null: this CPU lacks it
};

inline constexpr detail::LevelOps kSwarOps = detail::make_level_ops<SwarScan>(Level::scalar);
inline constexpr detail::LevelOps kScalarTwinOps = detail::make_level_ops<ScalarScan>(Level::scalar);

inline const Walk kWalks[] = {
    {"swar", [] { return &kSwarOps; }},
    {"scalar", [] { return detail::level_ops(Level::scalar); }},
    {"avx2", [] { return detail::level_ops(Level::avx2); }},
    {"avx512bw", [] { return detail::level_ops(Level::avx512bw); }},
    {"avx512vbmi", [] { return detail::level_ops(Level::avx512vbmi); }},
};

inline std::string walk_name(const ::testing::TestParamInfo<Walk>& info) { return info.param.name; }

// The walk's table, or a skip of the test when this CPU lacks it.
#define KITE_WALK_OR_SKIP(ops_var)                                                   \
  const ::kite::codec::detail::LevelOps* const ops_var = GetParam().ops();           \
  if (ops_var == nullptr) {                                                          \
    GTEST_SKIP() << "this CPU (or build) lacks the " << GetParam().name << " level"; \
  }                                                                                  \
  static_assert(true)

}  // namespace kite::codec::testing
