// The error of a configuration file that cannot be used (util/toml_reader.hpp
// builds its one-line message). kite::session::ConfigError and
// kite::lab::ConfigError name this type.
#pragma once

#include <stdexcept>

namespace kite::util {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A well-formed configuration this build cannot run: a transport that is not
// compiled in, a model the transport cannot run (libkite: KITE_ERROR_UNSUPPORTED).
class Unsupported : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

}  // namespace kite::util
