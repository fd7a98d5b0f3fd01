// The codec's instruction-set level: which walk frames and indexes messages,
// sums checksums and classifies blocks in this process.
//
// One binary carries every level its target can run; the best one the CPU
// has is chosen once, when the program loads (from CPUID), and every frame()
// and FieldIndex::build/frame_and_build with the default scan (FastScan)
// goes through it. All levels give the same answers; only speed differs.
//
//   scalar      the word-at-a-time walk (SWAR, and SSE2 where the target is
//               x86-64): any CPU, and the only level elsewhere
//   avx2        AVX2, BMI1/2, POPCNT, LZCNT (Haswell, Zen 1 and later)
//   avx512bw    AVX-512 F/BW/VL/DQ and the above (Skylake-SP, Cascade Lake)
//   avx512vbmi  avx512bw plus VBMI, VBMI2 (Ice Lake, Sapphire Rapids, Zen 4)
//
// The environment variable KITE_CODEC_LEVEL=scalar|avx2|avx512bw|avx512vbmi,
// read once at load, forces a level at or below the CPU's best. A value that
// is not a level, or a level this CPU (or build) lacks, is refused: the
// program prints why on stderr and exits with status 2 before main().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kite::codec {

enum class Level : std::uint8_t { scalar, avx2, avx512bw, avx512vbmi };
inline constexpr Level kLevels[] = {Level::scalar, Level::avx2, Level::avx512bw, Level::avx512vbmi};

// "scalar", "avx2", "avx512bw", "avx512vbmi".
const char* to_string(Level l) noexcept;
// The level a name (as to_string gives it) names; false for any other text.
bool parse_level(std::string_view name, Level& out) noexcept;

// Whether this build has the level's walk and this CPU its instructions.
bool level_supported(Level l) noexcept;
// The best level this CPU (and build) supports.
Level best_level() noexcept;
// The level in use in this process (chosen at load; see above).
Level active_level() noexcept;

// The choice made at load, as a pure function of KITE_CODEC_LEVEL's value
// (null: unset) and what the CPU supports: ok and the level, or not ok and
// an error text naming the value and the levels this CPU has.
struct LevelChoice {
  bool ok = false;
  Level level = Level::scalar;
  std::string error;
};
LevelChoice choose_level(const char* requested, bool (*supported)(Level) = level_supported);

}  // namespace kite::codec
