#include <cctype>

#include "kite/transport/vendor.hpp"

namespace kite::transport::vendor {
namespace {

bool valid_env_name(const std::string& n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
  for (const char c : n) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string quote(const std::string& s) {
  bool plain = !s.empty();
  for (const char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./=:,@%+").find(c) != std::string_view::npos)) {
      plain = false;
    }
  }
  if (plain) return s;
  std::string q = "'";
  for (const char c : s) {
    if (c == '\'') q.append("'\\''");
    else q.push_back(c);
  }
  q.push_back('\'');
  return q;
}

std::string preload(const std::string& lib, const std::string& inherited) {
  return inherited.empty() ? lib : lib + ":" + inherited;
}

}  // namespace

std::string LaunchCommand::shell() const {
  std::string s;
  for (const auto& [k, v] : env) {
    s.append(k).append("=").append(quote(v)).append(" ");
  }
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i) s.push_back(' ');
    s.append(quote(argv[i]));
  }
  return s;
}

bool build_launch(const LaunchConfig& c, const std::vector<std::string>& program, LaunchCommand& out,
                  std::string& error) {
  out = {};
  if (program.empty() || program[0].empty()) {
    error = "no program to launch";
    return false;
  }
  for (const auto& [k, v] : c.env) {
    if (!valid_env_name(k)) {
      error = "invalid environment variable name '" + k + "'";
      return false;
    }
    if (k == "LD_PRELOAD") {
      error = "LD_PRELOAD is set by the launcher; use inherited_ld_preload";
      return false;
    }
  }
  switch (c.transport) {
    case Kind::kernel:
    case Kind::uring:
    case Kind::tcpdirect:
    case Kind::tls:
      out.argv = program;
      break;
    case Kind::onload:
      if (c.onload_preload) {
        out.env.emplace_back("LD_PRELOAD", preload(c.onload_library, c.inherited_ld_preload));
        out.argv = program;
      } else {
        if (c.onload_command.empty()) {
          error = "onload: empty launcher command";
          return false;
        }
        if (c.onload_profile.find_first_of(" \t'\"") != std::string::npos) {
          error = "onload: invalid profile name '" + c.onload_profile + "'";
          return false;
        }
        out.argv.push_back(c.onload_command);
        if (!c.onload_profile.empty()) out.argv.push_back("--profile=" + c.onload_profile);
        out.argv.insert(out.argv.end(), program.begin(), program.end());
        if (!c.inherited_ld_preload.empty()) out.env.emplace_back("LD_PRELOAD", c.inherited_ld_preload);
      }
      break;
    case Kind::vma:
    case Kind::socketxtreme:
      if (c.vma_library.empty()) {
        error = "vma: empty library path";
        return false;
      }
      out.env.emplace_back("LD_PRELOAD", preload(c.vma_library, c.inherited_ld_preload));
      // libvma 9.x switches socketxtreme on at run time; older builds need
      // --enable-socketxtreme at libvma's configure time.
      if (c.transport == Kind::socketxtreme) out.env.emplace_back("VMA_SOCKETXTREME", "1");
      out.argv = program;
      break;
  }
  for (const auto& kv : c.env) out.env.push_back(kv);
  return true;
}

#ifndef KITE_HAVE_TCPDIRECT
std::unique_ptr<Driver> make_tcpdirect_driver(const DriverConfig&, const std::string&, std::uint16_t,
                                              std::string& error) {
  error = "tcpdirect: not built (configure with -DKITE_WITH_TCPDIRECT=ON where the TCPDirect SDK is installed)";
  return nullptr;
}
#endif

#ifndef KITE_HAVE_SOCKETXTREME
std::unique_ptr<Driver> make_socketxtreme_driver(const DriverConfig&, std::string& error) {
  error = "socketxtreme: not built (configure with -DKITE_WITH_SOCKETXTREME=ON where libvma's vma_extra.h is installed)";
  return nullptr;
}
#endif

}  // namespace kite::transport::vendor
