// The TOML configuration file: a [defaults] table and one [[session]] table
// per session (keys named as QuickFIX names its settings; docs/config.md).
// An [engine] table (and any other top-level table) is left to the daemon:
// the parsed document is kept in Config::document.
//
// load_config() throws ConfigError whose message names the file, the session
// (index and ID when known) and the setting: unknown key, wrong type, bad
// value, missing required setting.
#pragma once

#include <string>
#include <vector>

#include "kite/util/config_error.hpp"
#include "kite/util/toml.hpp"

#include "kite/session/settings.hpp"

namespace kite::session {

using ConfigError = util::ConfigError;

struct Config {
  std::string path;
  toml::table document;                   // the whole file, [engine] included
  std::vector<SessionSettings> sessions;  // [defaults] merged into each [[session]]
};

Config load_config(const std::string& path);
// The same from text (`name` is used in error messages in place of a path).
Config parse_config(std::string_view text, const std::string& name);

}  // namespace kite::session
