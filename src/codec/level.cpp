// The choice of the codec's level at load: the CPU's best, or the one
// KITE_CODEC_LEVEL names (refused, with the reason, when the CPU lacks it).
#include "kite/codec/level.hpp"

#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "levels.hpp"

namespace kite::codec {
namespace detail {

constinit const LevelOps* g_active_ops = &kScalarOps;
constinit TimestampWordRead g_timestamp_word_read = nullptr;

namespace {

#if defined(KITE_CODEC_X86_LEVELS)
// LZCNT (AMD's ABM bit): clang's __builtin_cpu_supports does not know it.
bool cpu_has_lzcnt() noexcept {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & (1u << 5)) != 0;
}
#endif

// What each level's translation unit is built with (src/codec/CMakeLists.txt),
// asked of the CPU; the OS's saving of the AVX and AVX-512 registers included
// (__builtin_cpu_supports reports the AVX features only when it does).
bool cpu_has(Level l) noexcept {
#if defined(KITE_CODEC_X86_LEVELS)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("popcnt") && cpu_has_lzcnt();
  const bool bw = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  switch (l) {
    case Level::scalar: return true;
    case Level::avx2: return avx2;
    case Level::avx512bw: return bw;
    case Level::avx512vbmi: return bw && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
  }
  return false;
#else
  return l == Level::scalar;
#endif
}

}  // namespace

const LevelOps* level_ops(Level l) noexcept {
  if (!cpu_has(l)) return nullptr;
  switch (l) {
    case Level::scalar: return &kScalarOps;
#if defined(KITE_CODEC_X86_LEVELS)
    case Level::avx2: return &kAvx2Ops;
    case Level::avx512bw: return &kAvx512BwOps;
    case Level::avx512vbmi: return &kAvx512VbmiOps;
#else
    default: return nullptr;
#endif
  }
  return nullptr;
}

TimestampWordRead timestamp_word_read(Level l) noexcept {
#if defined(KITE_CODEC_X86_LEVELS)
  // The avx512vbmi level's, where the CPU has VNNI besides.
  if (l == Level::avx512vbmi && cpu_has(l) && __builtin_cpu_supports("avx512vnni")) return &timestamp_word_avx512;
#endif
  (void)l;
  return nullptr;
}

namespace {

// Before any C++ static constructor of the program (priority 101), so no
// code of the program runs the codec with another level than the one chosen.
__attribute__((constructor(101))) void choose_at_load() {
  const LevelChoice c = choose_level(std::getenv("KITE_CODEC_LEVEL"));
  if (!c.ok) {
    std::fprintf(stderr, "kite: %s\n", c.error.c_str());
    std::_Exit(2);
  }
  g_active_ops = level_ops(c.level);
  g_timestamp_word_read = timestamp_word_read(c.level);
}

}  // namespace
}  // namespace detail

const char* to_string(Level l) noexcept {
  switch (l) {
    case Level::scalar: return "scalar";
    case Level::avx2: return "avx2";
    case Level::avx512bw: return "avx512bw";
    case Level::avx512vbmi: return "avx512vbmi";
  }
  return "unknown";
}

bool parse_level(std::string_view name, Level& out) noexcept {
  for (const Level l : kLevels) {
    if (name == to_string(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

bool level_supported(Level l) noexcept { return detail::level_ops(l) != nullptr; }

Level best_level() noexcept {
  Level best = Level::scalar;
  for (const Level l : kLevels)
    if (level_supported(l)) best = l;
  return best;
}

Level active_level() noexcept { return detail::g_active_ops->level; }

LevelChoice choose_level(const char* requested, bool (*supported)(Level)) {
  LevelChoice c;
  std::string have;
  for (const Level l : kLevels) {
    if (!supported(l)) continue;
    c.level = l;  // the best, when nothing is requested
    have += have.empty() ? "" : ", ";
    have += to_string(l);
  }
  if (requested == nullptr || *requested == '\0') {
    c.ok = true;
    return c;
  }
  Level wanted;
  if (!parse_level(requested, wanted)) {
    c.error =
        std::string("KITE_CODEC_LEVEL=") + requested + " is not a level: use scalar, avx2, avx512bw or avx512vbmi";
  } else if (!supported(wanted)) {
    c.error = std::string("KITE_CODEC_LEVEL=") + requested + ": this CPU (or build) lacks " + requested +
              "'s instructions; it has " + have;
  } else {
    c.ok = true;
    c.level = wanted;
  }
  return c;
}

}  // namespace kite::codec
