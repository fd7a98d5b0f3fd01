// `bench-run check-flavour NAME`: plays the flavour contract (docs/flavours.md)
// against a flavour's server and says, check by check, what holds. It starts
// the server from lab/flavours/<NAME>.toml for every model and transport the
// file declares and this machine has, talks FIX to it over blocking sockets
// with timeouts (a conformance check, not a measurement), inspects its threads
// and sockets from /proc, and stops it with SIGTERM. Set-up code throughout.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kite/lab/config.hpp"

namespace kite::lab {

enum class CheckStatus { ok, fail, skip };

/// One printed line: "ok   single/kernel logon: 1 session logged on".
struct CheckLine {
  CheckStatus status = CheckStatus::ok;
  std::string scope;   ///< "single/kernel", or "" for a check of the whole flavour
  std::string name;    ///< one of kContractChecks
  std::string detail;  ///< what was seen; for a failure, why
  std::string text() const;
};

struct CheckOptions {
  std::string flavour;  ///< its file is <flavours_dir>/<flavour>.toml
  /// The flavour as the caller resolved it (a sitting of installs points its
  /// binary and artifacts at the install); empty: read from its file.
  std::optional<Flavour> resolved;
  std::string flavours_dir;             ///< default <source_dir>/lab/flavours
  std::string build_dir;                ///< where a relative `binary` is found; {build_dir}
  std::string source_dir;               ///< {source_dir}
  std::string work_dir;                 ///< ready files, stores and server logs; default a fresh folder under /tmp
  Machine machine;                      ///< cores, transports and busy poll of this machine
  int workers = 0;                      ///< {workers} of pool and shard; 0: one per server core (a matrix's "auto")
  std::vector<std::string> transports;  ///< play only these transports (empty: every declared one)
  std::vector<std::string> models;      ///< play only these models (empty: every declared one)
  int busy_poll_usecs = 50;             ///< {busy_poll_usecs} on kernel (the machine's when it sets one)
  double ready_timeout_s = 10.0;        ///< as the lab's [cell] ready_timeout_s
  double grace_s = 5.0;                 ///< SIGTERM to exit: the lab's grace before SIGKILL
  double burn_fraction = 0.25;          ///< runtime threads stay under the audit's threshold
  std::function<void(const CheckLine&)> on_line;  ///< called as each line is decided
  std::function<bool()> stop;  ///< asked between cells: true ends the check early (a sitting's SIGINT)
};

struct CheckReport {
  std::vector<CheckLine> lines;
  int passed = 0, failed = 0, skipped = 0;
  /// "N passed, M failed, K skipped".
  std::string summary() const;
};

/// Runs every check. Throws ConfigError when the flavour file cannot be read.
CheckReport check_flavour(const CheckOptions& options);

/// SO_BUSY_POLL of each connected IPv4 socket of process `pid` (our child),
/// keyed by the peer's port, read through pidfd_getfd. Empty with `why` set
/// when the descriptors cannot be taken (no pidfd_getfd, no permission).
std::map<int, int> read_server_busy_poll(int pid, std::string& why);

/// The contract part a check belongs to ("session" for "gap"), for [not_claimed].
std::string contract_part_of(const std::string& check);

}  // namespace kite::lab
