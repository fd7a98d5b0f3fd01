// The shared TOML reader: its messages (file, key path, line, type names) and
// where a program finds the FIX dictionaries.
#include "kite/util/toml_reader.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "kite/util/dictionary_dir.hpp"

namespace kite::util {
namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TomlReader, wrongTypeNamesFileKeyTypeAndLine) {
  const TomlReader r("a.toml");
  const toml::table t = r.parse("x = 1\n[cores]\nserver = \"two\"\n");
  EXPECT_EQ(error_of([&] { r.integer(*r.table(t, "cores", ""), "server", "cores."); }),
            "a.toml: cores.server: expected an integer, got a string (line 3)");
  const TomlReader q("b.toml");
  EXPECT_EQ(error_of([&] { q.expect_string(*t.get("x"), "session 1: setting X"); }),
            "b.toml: session 1: setting X: expected a string, got an integer (line 1)");
}

TEST(TomlReader, readsTypedValuesAndLeavesAbsentKeysEmpty) {
  const TomlReader r("a.toml");
  const toml::table t = r.parse("n = 3\nf = 2.5\nb = true\nl = [\"x\", \"y\"]\n");
  EXPECT_EQ(r.number(t, "n", ""), 3.0);  // an integer is a number
  EXPECT_EQ(r.number(t, "f", ""), 2.5);
  EXPECT_EQ(r.boolean(t, "b", ""), true);
  EXPECT_EQ(r.strings(t, "l", ""), (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(r.string(t, "missing", "").has_value());
  EXPECT_EQ(r.table(t, "missing", ""), nullptr);
  EXPECT_EQ(error_of([&] { r.expect_integer(*t.get("n"), "n", 4, 9); }),
            "a.toml: n: value 3 out of range 4..9 (line 1)");
  const toml::table mixed = r.parse("l = [\"x\", 1]\n");
  EXPECT_EQ(error_of([&] { r.strings(mixed, "l", ""); }),
            "a.toml: l: expected an array of strings, got an element that is an integer (line 1)");
}

TEST(TomlReader, unknownKeyListsTheKnownOnes) {
  const TomlReader r("a.toml");
  const toml::table t = r.parse("name = \"x\"\n\ncolour = 1\n");
  EXPECT_EQ(error_of([&] {
              r.only(t, "", {"name", "size"});
            }),
            "a.toml: colour: unknown key (expected one of: name, size) (line 3)");
}

TEST(TomlReader, syntaxAndFileErrorsNameTheFile) {
  const TomlReader r("broken.toml");
  EXPECT_EQ(error_of([&] { r.parse("a = 1\n[cores\n"); }).rfind("broken.toml:2:", 0), 0u);
  EXPECT_NE(error_of([&] { r.parse("a = 1\n[cores\n"); }).find("TOML syntax"), std::string::npos);
  const TomlReader missing("/nonexistent/kite.toml");
  EXPECT_EQ(error_of([&] { missing.parse_file(); }).rfind("/nonexistent/kite.toml: cannot be read", 0), 0u);
}

TEST(DictionaryDir, environmentFirstThenTheBuildsFolder) {
  const char* env = std::getenv("KITE_DICTIONARY_DIR");
  const std::string saved = env != nullptr ? env : "";
  ::setenv("KITE_DICTIONARY_DIR", "/somewhere/else", 1);
  EXPECT_EQ(dictionary_dir(), "/somewhere/else");
  ::unsetenv("KITE_DICTIONARY_DIR");
  // No share/kite/dictionaries beside a build tree's binary: the configured folder.
  EXPECT_TRUE(std::filesystem::exists(dictionary_dir() + "/FIX44.xml")) << dictionary_dir();
  if (!saved.empty()) ::setenv("KITE_DICTIONARY_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace kite::util
