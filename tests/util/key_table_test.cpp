// A table of keys: each key's setter runs on its value (in toml++'s key order),
// an unknown key is refused naming the file, the table, the key, the keys
// there are and the line, and a setter's refusal reads the same way.
#include <gtest/gtest.h>

#include <string>

#include "kite/util/key_table.hpp"

namespace kite::util {
namespace {

struct Model {
  std::string seen;
  std::int64_t port = 0;
};

const Key<Model> kKeys[] = {
    {"name", [](Model& m, const Setting& s) { m.seen += "name=" + s.string() + ";"; }},
    {"port",
     [](Model& m, const Setting& s) {
       m.port = s.integer(1, 65535);
       m.seen += "port;";
     }},
    {"even",
     [](Model&, const Setting& s) {
       if (s.integer(0, 100) % 2 != 0) s.fail("must be even");
     }},
};

std::string error_of(const std::string& text) {
  const TomlReader r("t.toml");
  const toml::table doc = r.parse(text);
  Model m;
  try {
    read_keys(m, r, *doc["engine"].as_table(), "[engine]", std::span(kKeys));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(KeyTable, eachKeysSetterRunsOnItsValue) {
  const TomlReader r("t.toml");
  const toml::table doc = r.parse("[engine]\nport = 9\nname = \"a\"\n");
  Model m;
  read_keys(m, r, *doc["engine"].as_table(), "[engine]", std::span(kKeys));
  EXPECT_EQ(m.seen, "name=a;port;");  // toml++ keeps a table's keys sorted
  EXPECT_EQ(m.port, 9);
}

TEST(KeyTable, anUnknownKeyNamesTheKeysThereAre) {
  EXPECT_EQ(error_of("[engine]\nname = \"a\"\nprot = 9\n"),
            "t.toml: [engine]: setting prot: unknown setting (expected one of: name, port, even) (line 3)");
}

TEST(KeyTable, aSettersRefusalNamesTheSettingAndLine) {
  EXPECT_EQ(error_of("[engine]\n\nport = 0\n"),
            "t.toml: [engine]: setting port: value 0 out of range 1..65535 (line 3)");
  EXPECT_EQ(error_of("[engine]\neven = 3\n"), "t.toml: [engine]: setting even: must be even (line 2)");
  EXPECT_EQ(error_of("[engine]\nname = 3\n"),
            "t.toml: [engine]: setting name: expected a string, got an integer (line 2)");
}

TEST(KeyTable, flagTakesQuickFixsYAndN) {
  const TomlReader r("t.toml");
  const toml::table doc = r.parse("a = \"Y\"\nb = false\nc = \"yes\"\n");
  EXPECT_TRUE((Setting{r, *doc.get("a"), "a"}.flag()));
  EXPECT_FALSE((Setting{r, *doc.get("b"), "b"}.flag()));
  EXPECT_THROW((Setting{r, *doc.get("c"), "c"}.flag()), ConfigError);
}

}  // namespace
}  // namespace kite::util
