// Host provenance: what a sitting's figures depend on beyond the CPU and the
// binaries, read once at its start and recorded in sitting.json's
// `provenance`: the running kernel and any newer one installed but not
// booted, each NIC's driver and firmware, and whether the measured cores
// are isolated (isolcpus, nohz_full). `compare` names every one that differs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"

namespace kite::lab {

/// Where the facts are read from: this host's by default; a test points
/// them at a temporary folder (a fake /boot listing, a fake cmdline).
struct HostSources {
  std::string running_kernel;                           ///< "" : uname -r
  std::string boot_dir = "/boot";                       ///< vmlinuz-<version> files: the installed kernels
  std::string cmdline = "/proc/cmdline";                ///< isolcpus=, nohz_full= when sysfs does not say
  std::string cpu_sysfs = "/sys/devices/system/cpu";    ///< isolated, nohz_full
  std::string net_sysfs = "/sys/class/net";             ///< interfaces, their driver when ethtool is absent
  std::string ethtool = "ethtool";                      ///< `ethtool -i IF`; "" or absent: sysfs only
};

/// The kernels installed under `boot_dir` (from vmlinuz-<version>), oldest first by version.
std::vector<std::string> installed_kernels(const std::string& boot_dir);
/// Version order of two kernel release strings (5.14.0-687.44.1 < 5.14.0-687.54.1): <0, 0, >0.
int compare_kernel_versions(const std::string& a, const std::string& b);

/// Reads the provenance of this host for machine `m` (its NIC pairs' interfaces,
/// its measured cores):
///   kernel: {running, installed[], newest_installed, newer_not_booted}
///   nics: [{interface, pair, role, present, driver, version, firmware, bus, source}]
///   isolation: {isolcpus, nohz_full, measured, not_isolated, not_nohz_full}
///   warnings: ["measured core(s) 0-1 not isolated (isolcpus: none)", ...]
nlohmann::json host_provenance(const Machine& m, const HostSources& src = {});

/// Every provenance fact that differs between two sittings' `provenance`
/// ("kernel 5.14.0-687.44.1 -> 5.14.0-687.54.1", "NIC mlxA firmware 14.32.1912 -> 14.32.2004");
/// a sitting without one (older) gives "unrecorded".
std::vector<std::string> provenance_differences(const nlohmann::json& before, const nlohmann::json& now);

}  // namespace kite::lab
