// The avx512vbmi level (Ice Lake, Zen 4 and later): built with the
// avx512bw level's flags and VBMI, VBMI2 (src/codec/CMakeLists.txt).
#include "avx512_walk.hpp"
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"

namespace kite::codec::detail {

constinit const LevelOps kAvx512VbmiOps = make_level_ops<Avx512Scan<true>>(Level::avx512vbmi);

}  // namespace kite::codec::detail
