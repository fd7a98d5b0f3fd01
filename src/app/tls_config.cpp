#include "kite/app/tls_config.hpp"

namespace kite::app {

using transport::TlsRole;

void read_tls_table(const toml::table& t, const util::TomlReader& r, TlsRole role, const std::string& host,
                    transport::TlsConfig& c) {
  const bool server = role == TlsRole::server;
  const auto path = [](std::string_view key) { return std::string("[tls]: setting ").append(key); };
  for (const auto& [k, v] : t) {
    const std::string_view key = k.str();
    if (key == "certificate") {
      c.certificate = r.expect_string(v, path(key));
    } else if (key == "private_key") {
      c.private_key = r.expect_string(v, path(key));
    } else if (key == "ca_file") {
      c.ca_file = r.expect_string(v, path(key));
    } else if (key == "ca_dir") {
      c.ca_dir = r.expect_string(v, path(key));
    } else if (key == "min_version") {
      const std::string s = r.expect_string(v, path(key));
      if (!transport::parse_tls_version(s, c.min_version))
        r.fail(v, path(key), "expected \"1.2\" or \"1.3\", got \"" + s + "\"");
    } else if (key == "handshake_timeout_ms") {
      c.handshake_timeout_ms = static_cast<int>(r.expect_integer(v, path(key), 1, 600000));
    } else if (server && key == "client_certificate") {
      const std::string s = r.expect_string(v, path(key));
      if (!transport::parse_client_cert(s, c.client_cert))
        r.fail(v, path(key), "expected \"none\", \"optional\" or \"require\", got \"" + s + "\"");
    } else if (!server && key == "verify_peer") {
      c.verify_peer = r.expect_boolean(v, path(key));
    } else if (!server && key == "verify_host") {
      c.verify_host = r.expect_boolean(v, path(key));
    } else if (!server && key == "server_name") {
      c.server_name = r.expect_string(v, path(key));
    } else if (key == "client_certificate" || key == "verify_peer" || key == "verify_host" || key == "server_name") {
      r.fail(v, path(key),
             server ? "an initiator's setting (an acceptor has client_certificate)"
                    : "an acceptor's setting (an initiator shows its own with certificate and private_key)");
    } else {
      r.fail(v, path(key),
             server ? "unknown setting (certificate, private_key, ca_file, ca_dir, client_certificate, min_version, "
                      "handshake_timeout_ms)"
                    : "unknown setting (certificate, private_key, ca_file, ca_dir, verify_peer, verify_host, "
                      "server_name, min_version, handshake_timeout_ms)");
    }
  }
  std::string error;
  if (transport::TlsContext::make(c, role, host, error) == nullptr) r.fail("[tls]", error);
}

void check_tls_table(const toml::table& doc, const util::TomlReader& r, bool transport_is_tls,
                     const std::string& transport_name) {
  const toml::node* t = doc.get("tls");
  if (transport_is_tls && t == nullptr)
    r.fail("[engine]: setting transport",
           "tls needs a [tls] table (certificate and private_key on an acceptor, "
           "ca_file or ca_dir on an initiator)");
  if (!transport_is_tls && t != nullptr)
    r.fail(*t, "[tls]", "given, but [engine] transport is \"" + transport_name + "\": set transport = \"tls\"");
}

}  // namespace kite::app
