// codec_avx512_test runs only where the CPU has what its AVX-512 code needs:
// elsewhere this constructor, which runs before any other code of the test,
// exits with 77, which ctest reports as skipped.
#include <cstdio>
#include <cstdlib>

__attribute__((constructor(101))) static void kite_require_avx512() {
  __builtin_cpu_init();
  if (!(__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
        __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))) {
    std::puts("skipped: this CPU lacks AVX-512 BW/VL/VBMI/VBMI2/VNNI, BMI2 or POPCNT");
    std::_Exit(77);
  }
}
