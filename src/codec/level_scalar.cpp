// The scalar level: the word-at-a-time walk with the target's portable scan
// (SSE2 on x86-64, which every x86-64 CPU has; SWAR elsewhere).
#include "kite/codec/detail/make_level_ops.hpp"
#include "levels.hpp"

namespace kite::codec::detail {

constinit const LevelOps kScalarOps = make_level_ops<PortableScan>(Level::scalar);

}  // namespace kite::codec::detail
