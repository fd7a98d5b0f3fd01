// What the lab's sitting tests share: a two-core test machine, the fake
// bench_roundtrip (tests/lab/fake_bench_roundtrip.py) in a build folder, and
// short sittings over them with the audit off.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kite/lab/config.hpp"
#include "kite/lab/sitting.hpp"

namespace kite::lab::test {

inline std::string env_or(const char* k, const char* d) {
  const char* v = std::getenv(k);
  return v ? v : d;
}

/// The machine "testbox": server core 0, client core 1, kernel TCP only.
inline const char* const kTestMachine = R"(
name = "testbox"
cpu_model = "Test CPU 9000"
[cores]
server = "0"
client = "1"
[transports]
available = ["kernel"]
)";

/// Copies the fake bench_roundtrip into `build_dir` as an executable bench_roundtrip.
inline void place_fake_bench_roundtrip(const std::string& source_dir, const std::filesystem::path& build_dir) {
  namespace fs = std::filesystem;
  fs::create_directories(build_dir);
  fs::copy_file(source_dir + "/tests/lab/fake_bench_roundtrip.py", build_dir / "bench_roundtrip");
  fs::permissions(build_dir / "bench_roundtrip", fs::perms::owner_all, fs::perm_options::add);
}

/// A sitting named `name` of `matrix_body` (2 runs of 0.2 s after 0.2 s) on
/// testbox, with binaries in <root>/build and results in <root>/results; no
/// audit (other work on a shared machine could refuse cells), no progress.
inline SittingOptions test_sitting_options(const std::string& source_dir, const std::filesystem::path& root,
                                           const std::string& matrix_body, const std::string& name) {
  SittingOptions o;
  o.source_dir = source_dir;
  o.build_dir = (root / "build").string();
  o.results_dir = (root / "results").string();
  o.sitting_name = name;
  o.machine = parse_machine(kTestMachine, "testbox.toml");
  o.matrix = parse_matrix("runs = 2\nwarmup_s = 0.2\nduration_s = 0.2\n" + matrix_body, "test-matrix.toml");
  o.audit = false;
  o.check = false;  // the fake bench_roundtrip speaks no FIX; the check has its own tests
  o.progress = false;
  return o;
}

}  // namespace kite::lab::test
