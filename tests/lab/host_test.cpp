// Host provenance from fake sources: a /boot listing with a newer kernel than
// the running one, a kernel command line, a fake ethtool and interface
// folders; and compare's list of what differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kite/lab/host.hpp"
#include "kite/lab/util.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// scan's map: measured cores 10-13, 15-19 (14 reserved), one NIC pair.
const char* const kScan = R"(
name = "scan"
cpu_model = "Test CPU"
[cores]
housekeeping = "0-9"
coordinator = 19
server = "10-13"
reserved = "14"
client = "15-18"
[network]
path = "nic"
[[network.nic]]
name = "mellanox"
server_if = "mlxA"
client_if = "mlxB"
server_addr = "10.9.1.1"
client_addr = "10.9.1.2"
)";

class HostProvenance : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kite-host-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    for (const char* d : {"boot", "cpu", "net/mlxA"}) fs::create_directories(root_ / d);
    for (const char* k : {"vmlinuz-5.14.0-687.9.1.el9", "vmlinuz-5.14.0-687.44.1.el9", "vmlinuz-5.14.0-687.54.1.el9",
                          "vmlinuz-0-rescue-abc", "config-5.14.0-687.54.1.el9"})
      std::ofstream(root_ / "boot" / k) << "";
    std::ofstream(root_ / "cmdline") << "BOOT_IMAGE=/vmlinuz ro isolcpus=domain,managed_irq,10-18 nohz_full=10-19\n";
    write_text_atomic((root_ / "ethtool").string(),
                      "#!/bin/sh\necho 'driver: mlx5_core'\necho 'version: 5.14.0'\n"
                      "echo \"firmware-version: ${FAKE_FW:-14.32.1912} (MT_0000000080)\"\necho 'bus-info: 0000:2d:00.0'\n");
    fs::permissions(root_ / "ethtool", fs::perms::owner_all);
    src_.running_kernel = "5.14.0-687.44.1.el9";
    src_.boot_dir = (root_ / "boot").string();
    src_.cmdline = (root_ / "cmdline").string();
    src_.cpu_sysfs = (root_ / "cpu").string();
    src_.net_sysfs = (root_ / "net").string();
    src_.ethtool = (root_ / "ethtool").string();
    scan_ = parse_machine(kScan, "scan.toml");
  }
  void TearDown() override {
    unsetenv("FAKE_FW");
    fs::remove_all(root_);
  }
  fs::path root_;
  HostSources src_;
  Machine scan_;
};

}  // namespace

TEST(KernelVersions, areOrderedByTheirNumbersNotAsText) {
  EXPECT_LT(compare_kernel_versions("5.14.0-687.44.1.el9", "5.14.0-687.54.1.el9"), 0);
  EXPECT_LT(compare_kernel_versions("5.14.0-687.9.1", "5.14.0-687.44.1"), 0) << "9 < 44, though '9' > '4'";
  EXPECT_EQ(compare_kernel_versions("6.1.0-13-amd64", "6.1.0-13-amd64"), 0);
}

TEST_F(HostProvenance, aNewerKernelInstalledButNotBootedIsRecordedAndWarned) {
  EXPECT_EQ(installed_kernels(src_.boot_dir),
            (std::vector<std::string>{"5.14.0-687.9.1.el9", "5.14.0-687.44.1.el9", "5.14.0-687.54.1.el9"}));
  const json p = host_provenance(scan_, src_);
  EXPECT_EQ(p["kernel"]["running"], "5.14.0-687.44.1.el9");
  EXPECT_EQ(p["kernel"]["newest_installed"], "5.14.0-687.54.1.el9");
  EXPECT_EQ(p["kernel"]["newer_not_booted"], true);
  EXPECT_THAT(p["warnings"].dump(), HasSubstr("kernel 5.14.0-687.54.1.el9 is installed but not booted"));

  src_.running_kernel = "5.14.0-687.54.1.el9";
  const json booted = host_provenance(scan_, src_);
  EXPECT_EQ(booted["kernel"]["newer_not_booted"], false);
  EXPECT_THAT(booted["warnings"].dump(), ::testing::Not(HasSubstr("not booted")));
}

TEST_F(HostProvenance, aMeasuredCoreOutsideIsolcpusOrNohzFullIsWarned) {
  json p = host_provenance(scan_, src_);
  EXPECT_EQ(p["isolation"]["isolcpus"], "10-18") << "the flags before the list are not cores";
  EXPECT_EQ(p["isolation"]["nohz_full"], "10-19");
  EXPECT_EQ(p["isolation"]["not_isolated"], "19") << "the coordinator";
  EXPECT_EQ(p["isolation"]["not_nohz_full"], "");
  EXPECT_THAT(p["warnings"].dump(), HasSubstr("measured core(s) 19 not isolated (isolcpus: 10-18)"));
  // sysfs, where it exists, says what the kernel applied.
  std::ofstream(root_ / "cpu" / "isolated") << "10-19\n";
  std::ofstream(root_ / "cpu" / "nohz_full") << "(null)\n";
  p = host_provenance(scan_, src_);
  EXPECT_EQ(p["isolation"]["not_isolated"], "");
  EXPECT_EQ(p["isolation"]["nohz_full"], "none");
  EXPECT_THAT(p["warnings"].dump(), HasSubstr("measured core(s) 10-13,15-19 not in nohz_full (none)"));
}

TEST_F(HostProvenance, eachNicOfThePairsHasItsDriverAndFirmwareWherePresent) {
  const json p = host_provenance(scan_, src_);
  ASSERT_EQ(p["nics"].size(), 2u);
  const json& a = p["nics"][0];
  EXPECT_EQ(a["interface"], "mlxA");
  EXPECT_EQ(a["role"], "server");
  EXPECT_EQ(a["driver"], "mlx5_core");
  EXPECT_EQ(a["firmware"], "14.32.1912 (MT_0000000080)");
  EXPECT_EQ(a["bus"], "0000:2d:00.0");
  EXPECT_EQ(a["source"], "ethtool -i");
  EXPECT_EQ(p["nics"][1]["present"], false) << "mlxB has no folder under the fake /sys/class/net";
  src_.ethtool = "";
  EXPECT_EQ(host_provenance(scan_, src_)["nics"][0]["source"], "sysfs (no ethtool)");
}

TEST_F(HostProvenance, everyDifferenceBetweenTwoSittingsIsNamed) {
  const json before = host_provenance(scan_, src_);
  EXPECT_TRUE(provenance_differences(before, before).empty());
  src_.running_kernel = "5.14.0-687.54.1.el9";
  setenv("FAKE_FW", "14.32.2004", 1);
  std::ofstream(root_ / "cmdline") << "ro isolcpus=10-19 nohz_full=10-19\n";
  const json now = host_provenance(scan_, src_);
  EXPECT_THAT(provenance_differences(before, now),
              ::testing::UnorderedElementsAre(
                  "kernel 5.14.0-687.44.1.el9 -> 5.14.0-687.54.1.el9",
                  "newer kernel installed but not booted: yes (5.14.0-687.54.1.el9) -> no", "isolcpus 10-18 -> 10-19",
                  "NIC mlxA firmware 14.32.1912 (MT_0000000080) -> 14.32.2004 (MT_0000000080)"));
  EXPECT_EQ(provenance_differences(json(), now), std::vector<std::string>{"host provenance unrecorded -> recorded"});
}
