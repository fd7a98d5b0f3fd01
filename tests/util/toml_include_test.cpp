// CLI11 is included first on purpose: the order kite-acceptor once blamed for
// a crash in its TOML loader. Through kite/util/toml.hpp the order must not
// matter (see the header's comment); this unit parses and walks a document
// through the shared libtomlplusplus, and runs under ASan in the debug build.
#include <CLI/CLI.hpp>

#include "kite/util/toml.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include <gtest/gtest.h>

namespace {

std::filesystem::path write_temp(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("kite-toml-test-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << text;
  return path;
}

TEST(TomlInclude, parsesAFileAfterCli11WasIncludedFirst) {
  const auto path = write_temp(
      "title = \"kite\"\n"
      "[engine]\nmodel = \"mono\"\nport = 9876\ncores = [2, 3]\n"
      "[[session]]\nTargetCompID = \"A\"\n"
      "[[session]]\nTargetCompID = \"B\"\nHeartBtInt = 30\n");
  toml::table doc = toml::parse_file(path.string());
  std::filesystem::remove(path);

  EXPECT_EQ(doc["title"].value_or(std::string{}), "kite");
  EXPECT_EQ(doc["engine"]["model"].value_or(std::string{}), "mono");
  EXPECT_EQ(doc["engine"]["port"].value_or(0), 9876);
  const toml::array* cores = doc["engine"]["cores"].as_array();
  ASSERT_NE(cores, nullptr);
  ASSERT_EQ(cores->size(), 2u);
  EXPECT_EQ((*cores)[1].value_or(0), 3);
  const toml::array* sessions = doc["session"].as_array();
  ASSERT_NE(sessions, nullptr);
  ASSERT_EQ(sessions->size(), 2u);
  EXPECT_EQ((*sessions)[1].as_table()->at_path("HeartBtInt").value_or(0), 30);
  // The source region points into a path string owned by the library's side.
  EXPECT_EQ(doc["engine"]["port"].node()->source().begin.line, 4u);
}

TEST(TomlInclude, reportsAParseErrorWithItsPosition) {
  try {
    (void)toml::parse(std::string_view{"a = 1\nb = = 2\n"}, std::string_view{"inline.toml"});
    FAIL() << "a malformed document parsed";
  } catch (const toml::parse_error& e) {
    EXPECT_EQ(e.source().begin.line, 2u);
    EXPECT_NE(std::string(e.description()).size(), 0u);
  }
}

TEST(TomlInclude, cli11AndTomlWorkInTheSameUnit) {
  CLI::App app{"t"};
  std::string config;
  app.add_option("--config", config);
  const char* argv[] = {"t", "--config", "x.toml"};
  app.parse(3, argv);
  EXPECT_EQ(config, "x.toml");
  toml::table t = toml::parse(std::string_view{"k = 'v'\n"});
  EXPECT_EQ(t["k"].value_or(std::string{}), "v");
}

}  // namespace
