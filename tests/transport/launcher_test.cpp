#include <gtest/gtest.h>

#include "kite/transport/vendor.hpp"

namespace kite::transport::vendor {
namespace {

const std::vector<std::string> kProgram = {"./bench_roundtrip", "--server", "--port", "9000"};

TEST(VendorLaunch, onloadRunsTheProgramUnderTheOnloadLauncherWithItsProfile) {
  LaunchConfig c;
  c.transport = Kind::onload;
  c.onload_profile = "latency";
  c.env = {{"EF_POLL_USEC", "100000"}};
  LaunchCommand cmd;
  std::string error;
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error)) << error;
  EXPECT_EQ(cmd.argv, (std::vector<std::string>{"onload", "--profile=latency", "./bench_roundtrip", "--server",
                                                "--port", "9000"}));
  EXPECT_EQ(cmd.env, (std::vector<EnvVar>{{"EF_POLL_USEC", "100000"}}));
  EXPECT_EQ(cmd.shell(), "EF_POLL_USEC=100000 onload --profile=latency ./bench_roundtrip --server --port 9000");
}

TEST(VendorLaunch, onloadPreloadModeSetsLdPreloadAndKeepsTheInheritedOne) {
  LaunchConfig c;
  c.transport = Kind::onload;
  c.onload_preload = true;
  c.inherited_ld_preload = "libfoo.so";
  LaunchCommand cmd;
  std::string error;
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error)) << error;
  EXPECT_EQ(cmd.argv, kProgram);
  ASSERT_EQ(cmd.env.size(), 1u);
  EXPECT_EQ(cmd.env[0], (EnvVar{"LD_PRELOAD", "libonload.so:libfoo.so"}));
}

TEST(VendorLaunch, vmaPreloadsLibvmaWithTheMachineFilesEnvironment) {
  LaunchConfig c;
  c.transport = Kind::vma;
  c.env = {{"VMA_SPEC", "latency"}, {"VMA_RX_POLL", "-1"}};
  LaunchCommand cmd;
  std::string error;
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error)) << error;
  EXPECT_EQ(cmd.argv, kProgram);
  EXPECT_EQ(cmd.env,
            (std::vector<EnvVar>{{"LD_PRELOAD", "libvma.so"}, {"VMA_SPEC", "latency"}, {"VMA_RX_POLL", "-1"}}));
  EXPECT_EQ(cmd.shell(), "LD_PRELOAD=libvma.so VMA_SPEC=latency VMA_RX_POLL=-1 ./bench_roundtrip --server --port 9000");
}

TEST(VendorLaunch, socketxtremeRunsUnderLibvmaWithSocketxtremeOn) {
  LaunchConfig c;
  c.transport = Kind::socketxtreme;
  LaunchCommand cmd;
  std::string error;
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error)) << error;
  EXPECT_EQ(cmd.env, (std::vector<EnvVar>{{"LD_PRELOAD", "libvma.so"}, {"VMA_SOCKETXTREME", "1"}}));
}

TEST(VendorLaunch, kernelAndTcpdirectNeedNoLauncher) {
  LaunchConfig c;
  c.transport = Kind::tcpdirect;
  c.env = {{"ZF_ATTR", "interface=ens1f0;emu=0"}};
  LaunchCommand cmd;
  std::string error;
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error)) << error;
  EXPECT_EQ(cmd.argv, kProgram);
  EXPECT_EQ(cmd.shell(), "ZF_ATTR='interface=ens1f0;emu=0' ./bench_roundtrip --server --port 9000");
  c.transport = Kind::kernel;
  c.env.clear();
  ASSERT_TRUE(build_launch(c, kProgram, cmd, error));
  EXPECT_TRUE(cmd.env.empty());
}

TEST(VendorLaunch, rejectsBadEnvironmentNamesAndAHandWrittenLdPreload) {
  LaunchConfig c;
  c.transport = Kind::vma;
  c.env = {{"BAD NAME", "1"}};
  LaunchCommand cmd;
  std::string error;
  EXPECT_FALSE(build_launch(c, kProgram, cmd, error));
  EXPECT_NE(error.find("BAD NAME"), std::string::npos);
  c.env = {{"LD_PRELOAD", "x.so"}};
  EXPECT_FALSE(build_launch(c, kProgram, cmd, error));
  EXPECT_FALSE(build_launch(LaunchConfig{}, {}, cmd, error));
}

TEST(VendorLaunch, nativeDriversSayTheyAreNotBuilt) {
  std::string error;
  if (!compiled_in(Kind::tcpdirect)) {
    EXPECT_EQ(make_tcpdirect_driver({}, "10.0.0.1", 9000, error), nullptr);
    EXPECT_NE(error.find("KITE_WITH_TCPDIRECT"), std::string::npos);
  }
  if (!compiled_in(Kind::socketxtreme)) {
    EXPECT_EQ(make_socketxtreme_driver({}, error), nullptr);
    EXPECT_NE(error.find("KITE_WITH_SOCKETXTREME"), std::string::npos);
  }
}

}  // namespace
}  // namespace kite::transport::vendor
