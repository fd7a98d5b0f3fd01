// Runs a program through the shell for the tests that drive Kite's command
// line tools (kite-admin, kite-fixprint): its exit status and its output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace kite::test {

struct CommandOutput {
  int status = -1;  // the exit status; -1 when it did not exit normally
  std::string out;  // stdout (add "2>&1" to the command for stderr too)
};

inline CommandOutput run_command(const std::string& cmd) {
  CommandOutput r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char b[4096];
  std::size_t n;
  while ((n = std::fread(b, 1, sizeof b, p)) > 0) r.out.append(b, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// kite-admin at `bin` asking the acceptor behind `socket`; stderr included.
inline CommandOutput kite_admin(const std::string& bin, const std::string& socket, const std::string& args) {
  return run_command(bin + " --socket " + socket + " " + args + " 2>&1");
}

}  // namespace kite::test
