// The avx512bw level (Skylake-SP and later): built with -mavx512f/bw/vl/dq
// and BMI2 only (src/codec/CMakeLists.txt); the vector walk without VBMI.
#include "avx512_walk.hpp"
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"

namespace kite::codec::detail {

constinit const LevelOps kAvx512BwOps = make_level_ops<Avx512Scan<false>>(Level::avx512bw);

}  // namespace kite::codec::detail
