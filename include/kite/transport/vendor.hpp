// Vendor kernel-bypass stacks.
//
// Launch-time stacks (onload, vma, and the socketxtreme API, which lives in
// libvma): the binary is unchanged and drives kernel sockets; the vendor
// library takes the socket calls over when the process is started through
// the vendor launcher or LD_PRELOAD. build_launch() turns configuration (the
// machine file's settings) into the argv and environment to start a program
// that way; the lab uses it, nothing here runs a vendor stack.
//
// Native-API stacks: `tcpdirect` (zf API) and `socketxtreme`
// (vma_extra.h socketxtreme_poll) are Drivers compiled only with
// KITE_WITH_TCPDIRECT / KITE_WITH_SOCKETXTREME and the SDK headers. They
// cannot be built or run on the development machine (no SDK, no Solarflare
// or Mellanox NIC): they are written from the public API documentation,
// untested, and no figure is ever claimed for them. See docs/transports.md.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kite/transport/driver.hpp"
#include "kite/transport/transport.hpp"

namespace kite::transport::vendor {

using EnvVar = std::pair<std::string, std::string>;

struct LaunchConfig {
  Kind transport = Kind::kernel;
  // onload: `onload --profile=<profile> program...`, or with onload_preload
  // LD_PRELOAD=<onload_library> (no wrapper, e.g. where `onload` is not on PATH).
  std::string onload_command = "onload";
  std::string onload_profile = "latency";  // empty: no --profile
  bool onload_preload = false;
  std::string onload_library = "libonload.so";
  // vma and socketxtreme: LD_PRELOAD=<vma_library>.
  std::string vma_library = "libvma.so";
  // Extra environment from the machine file (EF_POLL_USEC, VMA_SPEC,
  // ZF_ATTR, ...). Names must be [A-Za-z_][A-Za-z0-9_]*.
  std::vector<EnvVar> env;
  // An LD_PRELOAD already in force, kept after the vendor library.
  std::string inherited_ld_preload;
};

struct LaunchCommand {
  std::vector<std::string> argv;  // what to exec
  std::vector<EnvVar> env;        // what to add to the environment
  // For logs and stamps: "ENV=v ... argv..." with shell quoting.
  std::string shell() const;
};

// Builds the command that runs `program` (argv[0] and its arguments) on
// `config.transport`. kernel, uring, tls and tcpdirect need no launcher (tcpdirect
// reads ZF_ATTR from the environment). False with `error` for bad input.
bool build_launch(const LaunchConfig& config, const std::vector<std::string>& program, LaunchCommand& out,
                  std::string& error);

// Native-API drivers. Without their build option these return nullptr and
// say why. The tcpdirect driver owns its listening zocket (zftl), bound to
// `bind_address:port` (a real interface address, not INADDR_ANY or loopback).
std::unique_ptr<Driver> make_tcpdirect_driver(const DriverConfig& c, const std::string& bind_address,
                                              std::uint16_t port, std::string& error);
std::unique_ptr<Driver> make_socketxtreme_driver(const DriverConfig& c, std::string& error);

}  // namespace kite::transport::vendor
