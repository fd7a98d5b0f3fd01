// Certificates of the lab's tls transport: a CA and a server certificate
// signed by it, made at a sitting's start (and by check-flavour) with the
// `openssl` command, and the client side of a TLS connection for
// check-flavour's peers.
#pragma once

#include <string>
#include <vector>

namespace kite::lab {

/// The files of one set: what {tls_ca}, {tls_cert} and {tls_key} receive.
struct LabCertificates {
  std::string ca;    ///< PEM certificate of the CA (the client's trust anchor)
  std::string cert;  ///< PEM server certificate, signed by the CA
  std::string key;   ///< PEM private key of the server certificate
  bool made() const { return !ca.empty(); }
};

/// Makes a P-256 CA and a server certificate naming `addresses` (IPv4, each
/// an IP subjectAltName; 127.0.0.1 and localhost always) in `dir` (created),
/// valid for 7 days. Throws std::runtime_error with the reason (no openssl
/// command, its output) on failure.
LabCertificates make_lab_certificates(const std::string& dir, const std::vector<std::string>& addresses);

/// Whether this lab was built with OpenSSL (check-flavour's TLS peers).
bool lab_tls_compiled_in();

}  // namespace kite::lab
