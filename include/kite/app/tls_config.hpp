// The [tls] table of an acceptor's or an initiator's configuration file (the
// tls transport, docs/acceptor.md "TLS"), shared by kite-acceptor and the C
// API's initiator.
//
// Acceptor keys: certificate, private_key, ca_file, ca_dir,
// client_certificate ("none", "optional", "require"), min_version ("1.2",
// "1.3"), handshake_timeout_ms. Initiator keys: certificate and private_key
// (a client certificate), ca_file, ca_dir, verify_peer, verify_host,
// server_name, min_version, handshake_timeout_ms. Paths are used as written
// (relative ones from the working folder).
#pragma once

#include <string>

#include "kite/session/log.hpp"
#include "kite/transport/tls.hpp"
#include "kite/util/toml_reader.hpp"

namespace kite::app {

// Reads `t` (the [tls] table) into `out` for `role`, then checks it by making
// the TLS context: every mistake (an unknown key, a missing or unreadable
// file, a key that does not match its certificate) throws ConfigError
// "FILE: [tls]: ..." naming the setting or the file. `host` is the
// initiator's connect host (checked when server_name is not set).
void read_tls_table(const toml::table& t, const util::TomlReader& reader, transport::TlsRole role,
                    const std::string& host, transport::TlsConfig& out);

// The [tls] table's place in a document: throws when `transport_is_tls` and
// the table is missing, or when the table is given for another transport.
void check_tls_table(const toml::table& document, const util::TomlReader& reader, bool transport_is_tls,
                     const std::string& transport_name);

// The engine's transport events (TLS refusals) as Logger lines from "tls".
class LoggerEvents final : public transport::EventLog {
 public:
  explicit LoggerEvents(session::Logger& log) noexcept : log_(log) {}
  void event(const char* line) noexcept override { log_.log(session::LogLevel::error, "tls", line); }

 private:
  session::Logger& log_;
};

}  // namespace kite::app
