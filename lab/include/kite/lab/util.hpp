// Small helpers of the lab: hashing, files, host facts. Set-up code only.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kite::lab {

/// SHA-256 of a byte string, lower-case hex.
std::string sha256_hex(const std::string& data);
/// SHA-256 of a file's content; "" when it cannot be read.
std::string sha256_file(const std::string& path);

/// Whole file as a string; throws std::runtime_error naming the path.
std::string read_text(const std::string& path);
/// Reads a file if it exists; "" otherwise (for /proc and /sys facts).
std::string read_text_or_empty(const std::string& path);
/// Writes through a temporary file and rename, so a reader never sees half a file.
void write_text_atomic(const std::string& path, const std::string& text);

std::string trim(const std::string& s);
/// A number as printf's %g writes it: 0.25, 12, 1e-06.
std::string format_number(double v);

/// Facts about the host this process runs on.
std::string host_name();
std::string host_kernel();
std::string host_cpu_model();
std::vector<int> host_online_cores();
bool host_has_io_uring();     ///< io_uring_setup(2) works here
std::string host_isolcpus();  ///< from /proc/cmdline, "" if none
/// Sysctls that change latency results, when readable.
std::map<std::string, std::string> host_latency_sysctls();

/// UTC time as 2026-11-30T04:05:06Z.
std::string utc_now_iso();
/// UTC time as 20261130-040506 (a default sitting name).
std::string utc_now_compact();

/// How the lab itself was built, for its stamps: "unknown" when the build did not say.
std::string lab_compiler();
std::string lab_build_flags();

/// Finds an executable: absolute path, path relative to `base`, or a name on PATH. "" if none.
std::string find_executable(const std::string& name, const std::string& base);
/// Finds a file a flavour names under `artifacts` by the rules of its `binary`
/// (absolute, relative to `base`, or a name on PATH), executable or not. "" if none.
std::string find_artifact(const std::string& name, const std::string& base);

}  // namespace kite::lab
