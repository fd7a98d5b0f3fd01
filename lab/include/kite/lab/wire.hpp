// The wire path (network path "nic"): the machine file's NIC pairs, the two
// ports of each cabled back to back, moved into two network namespaces with
// the machine file's addresses, the server run in one and the client in the
// other, so that their traffic crosses the cable instead of loopback. What
// is moved is written to a state file before anything moves, so that a
// sitting that dies (SIGKILL, a crash) leaves enough for the next one to put
// every interface back where it was. Set-up code only.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"

namespace kite::lab {

/// An address of an interface as `ip addr add` takes it back.
struct WireAddress {
  std::string family;     ///< inet | inet6
  std::string local;      ///< "10.9.1.1"
  int prefix = 0;         ///< 24
  std::string broadcast;  ///< IPv4 broadcast, "" when none
  std::string text() const { return local + "/" + std::to_string(prefix); }
};

/// One interface the wire path moves, and what it had before.
struct WireInterface {
  std::string name;     ///< mlxA
  std::string pair;     ///< the machine file's pair: mellanox
  std::string role;     ///< server | client
  std::string netns;    ///< the namespace it is moved into
  std::string address;  ///< what it gets there: "10.9.1.1/24"
  bool was_up = false;  ///< its link was up in the lab's namespace
  /// Its addresses there (IPv6 link-local left out: the kernel makes it again at link up).
  std::vector<WireAddress> addresses;
  std::string offloads;  ///< read in its namespace: "mlxA: gro=on tso=off", or "unreadable"
};

/// The state file: who moved what, where.
struct WireState {
  pid_t owner = 0;          ///< the lab process that moved them
  std::string owner_start;  ///< its start time (/proc/<pid>/stat field 22): a reused pid is not the owner
  std::string sitting;      ///< the sitting's folder
  std::string moved_at;     ///< UTC
  std::string server_ns, client_ns;
  std::vector<WireInterface> interfaces;

  nlohmann::json to_json() const;
  /// Throws std::runtime_error for a file that is not a state file.
  static WireState from_json(const nlohmann::json& j);
};

/// <results_dir>/wire-state.json: one per results folder, whatever the machine's name.
std::string wire_state_path(const std::string& results_dir);

/// The start time of a process as /proc/<pid>/stat gives it; "" when it is gone.
std::string process_start_time(pid_t pid);

/// What restore_wire did.
struct WireRestore {
  bool found = false;               ///< a state file was there
  bool held = false;                ///< its owner still runs: nothing was touched
  std::string owner;                ///< "pid 1234, sitting results/hp/20261205-0800"
  std::vector<std::string> done;    ///< "mlxA back with 10.9.1.1/24, up"
  std::vector<std::string> failed;  ///< what could not be put back (the file is then kept)
  nlohmann::json to_json() const;
};

/// Puts back what the state file at `state_file` records when its owner is
/// gone: each interface moved back into this process's network namespace
/// with its addresses and link state as they were, the two namespaces
/// deleted, the file removed. Nothing is touched while the owner runs
/// (`held`). Never throws: what fails is listed, and then the file and the
/// namespaces are kept so that nothing is lost (deleting a namespace
/// destroys a veth inside it and returns a NIC without its addresses).
WireRestore restore_wire(const std::string& state_file);

/// The wire path of one sitting.
class WirePath {
 public:
  /// `tag` names the namespaces kite-<tag>-srv and kite-<tag>-cli (the lab's
  /// pid modulo 10^6, as NetnsPair's, so that a crashed sitting's are found).
  WirePath(const Machine& m, const std::string& tag, std::string state_file, std::string sitting_dir);
  ~WirePath();
  WirePath(const WirePath&) = delete;
  WirePath& operator=(const WirePath&) = delete;

  /// Records, then moves every pair's interfaces, gives them the machine
  /// file's addresses, brings them up and waits for their carrier (10 s at
  /// most). Throws std::runtime_error naming what failed, after putting
  /// back whatever had moved.
  void up();
  /// Puts everything back (restore_wire of its own state file). Idempotent.
  void down();
  bool is_up() const { return up_; }
  const std::string& server_ns() const { return state_.server_ns; }
  const std::string& client_ns() const { return state_.client_ns; }
  const WireState& state() const { return state_; }
  /// "mlxA: gro=on tso=off, mlxB: gro=on tso=off" of a pair.
  std::string offloads_of(const std::string& pair) const;
  /// sitting.json's `wire`: the state file, namespaces, every interface with
  /// its addresses before and in the namespace, offloads, the carrier wait.
  nlohmann::json record() const;
  /// What down() put back and what it could not, once it ran.
  const WireRestore& restored() const { return restored_; }

 private:
  const Machine& machine_;
  std::string state_file_;
  WireState state_;
  WireRestore restored_;
  double carrier_wait_s_ = 0;
  bool up_ = false;
};

}  // namespace kite::lab
