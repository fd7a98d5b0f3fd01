// Child processes and network namespaces for the lab (set-up code, not hot path).
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kite::lab {

struct SpawnSpec {
  std::vector<std::string> argv;           ///< argv[0] is a path or a name on PATH
  std::map<std::string, std::string> env;  ///< added to (or replacing in) the lab's environment
  std::string netns;                       ///< run inside /run/netns/<netns> when set
  std::string stdout_path = "/dev/null";
  std::string stderr_path;  ///< file; empty with pipe_stderr = a pipe
  bool pipe_stderr = false;
};

/// A started process in its own process group (so a Ctrl-C at the terminal
/// reaches only the lab, which then stops its children in order).
class Child {
 public:
  Child() = default;
  ~Child();
  Child(Child&& o) noexcept;
  Child& operator=(Child&& o) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  /// Throws std::runtime_error when fork, the netns or a redirection fails.
  /// An exec failure shows as exit code 127.
  static Child spawn(const SpawnSpec& spec);

  pid_t pid() const { return pid_; }
  int stderr_fd() const { return err_fd_; }
  bool running();
  /// Exit code; 128+N when killed by signal N; nullopt while running.
  std::optional<int> exit_code();
  /// SIGTERM, then SIGKILL after grace_s. Returns the exit code.
  int stop(double grace_s);
  /// Waits up to timeout_s. Returns the exit code or nullopt.
  std::optional<int> wait_for(double timeout_s);

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  std::optional<int> code_;
};

struct CommandResult {
  int code = -1;
  std::string output;  ///< stdout and stderr together
};
/// Runs a command to completion (bounded by timeout_s, then killed).
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s = 10.0);

/// Two namespaces joined by a veth pair, addresses only inside them. Created by
/// up(), removed by down() and by the destructor. Names start with "kite-" so
/// that remove_stale_namespaces() can find leftovers of a crashed sitting.
class NetnsPair {
 public:
  NetnsPair(std::string tag, std::string server_addr, std::string client_addr, int prefix);
  ~NetnsPair();
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  /// Creates everything; GRO on and TSO off on both ends (busy polling does
  /// nothing on veth otherwise). Throws std::runtime_error with what failed.
  void up();
  void down();
  bool is_up() const { return up_; }
  const std::string& server_ns() const { return server_ns_; }
  const std::string& client_ns() const { return client_ns_; }
  const std::string& server_addr() const { return server_addr_; }
  const std::string& client_addr() const { return client_addr_; }
  /// "gro=on tso=off" per end as read back after setting.
  const std::string& offloads() const { return offloads_; }

 private:
  std::string server_ns_, client_ns_, server_if_, client_if_;
  std::string server_addr_, client_addr_;
  int prefix_;
  std::string offloads_;
  bool up_ = false;
};

/// GRO and TSO of interface `ifname` in namespace `ns` ("" = the lab's own),
/// read with the SIOCETHTOOL ioctl (no ethtool command needed), after setting
/// GRO on and TSO off when `set_gro_on_tso_off` (busy polling does nothing on
/// veth otherwise). Bits: 1 = GRO on, 2 = TSO on; nullopt when unreadable.
std::optional<int> interface_offloads(const std::string& ns, const std::string& ifname, bool set_gro_on_tso_off);
/// "IF: gro=on tso=off" for the bits interface_offloads returned.
std::string offloads_text(const std::string& ifname, int bits);

/// Removes network namespaces and links named kite-* (leftovers of a crash).
/// Returns the names removed.
std::vector<std::string> remove_stale_namespaces();
/// The same, limited to names whose owner is gone: a NetnsPair's names carry
/// its lab's pid (modulo 10^6); those of a live process, or not in that form,
/// are kept, so a sitting can call this at start without breaking another
/// sitting running beside it. Returns the names removed.
std::vector<std::string> remove_orphaned_namespaces();
/// Names of the network namespaces that exist now.
std::vector<std::string> list_namespaces();

/// A TCP port that was free on 127.0.0.1 a moment ago.
int pick_free_port();

/// Set by SIGINT/SIGTERM once install_stop_handlers() ran.
bool stop_requested();
void install_stop_handlers();
/// For tests: clears the flag.
void reset_stop_request();

}  // namespace kite::lab
