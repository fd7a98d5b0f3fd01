#include "kite/lab/tls.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "kite/lab/process.hpp"
#include "kite/lab/util.hpp"

namespace kite::lab {

namespace fs = std::filesystem;

LabCertificates make_lab_certificates(const std::string& dir, const std::vector<std::string>& addresses) {
  if (find_executable("openssl", "").empty())
    throw std::runtime_error(
        "tls: no openssl command on PATH to make the lab's certificates (Debian: apt-get install openssl)");
  fs::create_directories(dir);
  std::vector<std::string> ips = {"127.0.0.1"};
  for (const auto& a : addresses)
    if (!a.empty() && std::find(ips.begin(), ips.end(), a) == ips.end()) ips.push_back(a);
  std::string san = "subjectAltName=DNS:localhost";
  for (const auto& ip : ips) san += ",IP:" + ip;
  write_text_atomic(dir + "/server.ext", san + "\n");
  LabCertificates c{dir + "/ca.pem", dir + "/server.pem", dir + "/server.key"};
  const std::vector<std::string> ec = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};
  auto run = [](std::vector<std::string> argv) {
    const CommandResult r = run_command(argv, 30.0);
    if (r.code != 0)
      throw std::runtime_error("tls: making the lab's certificates failed: openssl " + argv[1] + ": " + trim(r.output));
  };
  auto with = [&ec](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), ec.begin(), ec.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  run(with({"openssl", "req", "-x509"},
           {"-keyout", dir + "/ca.key", "-out", c.ca, "-days", "7", "-subj", "/CN=Kite lab CA"}));
  run(with({"openssl", "req"}, {"-keyout", c.key, "-out", dir + "/server.csr", "-subj", "/CN=kite-lab-server"}));
  run({"openssl", "x509", "-req", "-in", dir + "/server.csr", "-CA", c.ca, "-CAkey", dir + "/ca.key", "-CAcreateserial",
       "-out", c.cert, "-days", "7", "-extfile", dir + "/server.ext"});
  return c;
}

#ifdef KITE_LAB_TLS
bool lab_tls_compiled_in() { return true; }
#else
bool lab_tls_compiled_in() { return false; }
#endif

}  // namespace kite::lab
