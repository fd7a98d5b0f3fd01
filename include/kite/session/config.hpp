// The TOML configuration file: a [defaults] table and one [[session]] table
// per session (keys named as QuickFIX names its settings; docs/config.md).
// Any other top-level table ([engine], [app], ...) is the daemon's: the app
// reads the file (src/app/config_file.hpp) and hands its document to
// read_config() for the sessions.
//
// load_config() throws ConfigError whose message names the file, the session
// (index and ID when known) and the setting: unknown key, wrong type, bad
// value, missing required setting.
#pragma once

#include <string>
#include <vector>

#include "kite/util/config_error.hpp"
#include "kite/util/toml.hpp"
#include "kite/util/toml_reader.hpp"

#include "kite/session/settings.hpp"

namespace kite::session {

using ConfigError = util::ConfigError;

struct Config {
  std::string path;
  std::vector<SessionSettings> sessions;  // [defaults] merged into each [[session]]
};

Config load_config(const std::string& path);
// The same from text (`name` is used in error messages in place of a path).
Config parse_config(std::string_view text, const std::string& name);
// The same from a parsed document (other top-level tables are left alone);
// errors name reader.file(). A relative DataDictionary is taken from
// `folder` (empty: the working directory).
Config read_config(const util::TomlReader& reader, const toml::table& document, const std::string& folder);

}  // namespace kite::session
