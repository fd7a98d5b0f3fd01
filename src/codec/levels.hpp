// The levels' tables, each defined in its own translation unit built for its
// instructions (level_*.cpp); level.cpp picks one.
#pragma once

#include "kite/codec/detail/level_ops.hpp"

namespace kite::codec::detail {

extern const LevelOps kScalarOps;
#if defined(__x86_64__)
#define KITE_CODEC_X86_LEVELS 1
extern const LevelOps kAvx2Ops;
extern const LevelOps kAvx512BwOps;
extern const LevelOps kAvx512VbmiOps;
#endif

}  // namespace kite::codec::detail
