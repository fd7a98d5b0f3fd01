// Certificates for the tls transport's benchmarks and tests, made when they
// start with the `openssl` command in a temporary folder: a CA, a server
// certificate for localhost / 127.0.0.1 and a client certificate signed by
// it, and a self-signed "rogue" server certificate no peer trusts.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace kite::bench {

class Certificates {
 public:
  // Makes them; ok() false (and why()) when the openssl command is missing or fails.
  Certificates() {
    char tmpl[] = "/tmp/kite-tls-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      why_ = "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      why_ = "no openssl command on PATH";
      return;
    }
    std::ofstream(dir_ + "/server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    std::ofstream(dir_ + "/client.ext") << "extendedKeyUsage=clientAuth\n";
    const std::string d = dir_;
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script = "set -e; cd '" + d +
                               "'; exec >log.txt 2>&1;"
                               "openssl req -x509" +
                               key +
                               " -keyout ca.key -out ca.pem -days 2 -subj '/CN=Kite Test CA';"
                               "openssl req" +
                               key +
                               " -keyout server.key -out server.csr -subj '/CN=localhost';"
                               "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out "
                               "server.pem -days 2 -extfile server.ext;"
                               "openssl req" +
                               key +
                               " -keyout client.key -out client.csr -subj '/CN=kite-client';"
                               "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out "
                               "client.pem -days 2 -extfile client.ext;"
                               "openssl req -x509" +
                               key +
                               " -keyout rogue.key -out rogue.pem -days 2 -subj '/CN=localhost' "
                               "-addext subjectAltName=DNS:localhost,IP:127.0.0.1;";
    if (std::system(("sh -c \"" + escape(script) + "\"").c_str()) != 0) {
      why_ = "openssl failed: see " + d + "/log.txt";
      return;
    }
    ok_ = true;
  }
  ~Certificates() {
    if (!dir_.empty() && ok_) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  std::string path(const char* name) const { return dir_ + "/" + name; }
  std::string ca() const { return path("ca.pem"); }
  std::string server_cert() const { return path("server.pem"); }
  std::string server_key() const { return path("server.key"); }
  std::string client_cert() const { return path("client.pem"); }
  std::string client_key() const { return path("client.key"); }
  std::string rogue_cert() const { return path("rogue.pem"); }
  std::string rogue_key() const { return path("rogue.key"); }
  const std::string& dir() const { return dir_; }

 private:
  static std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\' || c == '$' || c == '`') o.push_back('\\');
      o.push_back(c);
    }
    return o;
  }
  std::string dir_, why_;
  bool ok_ = false;
};

}  // namespace kite::bench
