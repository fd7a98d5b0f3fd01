// The lab's inputs: machine file, matrix file, flavour files, and the cells
// they span. All parsing happens at set-up; every mistake is reported as a
// ConfigError naming the file, the key and what is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kite/util/config_error.hpp"

namespace kite::lab {

/// Thrown by every loader; what() reads "FILE: KEY: problem" (util/toml_reader.hpp).
using ConfigError = util::ConfigError;

/// A set of CPU numbers, written "0-3,8" or as a TOML array of integers.
using CoreSet = std::vector<int>;

/// Parses "9-12,14" (empty string = empty set). Throws std::invalid_argument.
CoreSet parse_core_list(const std::string& text);
/// Formats a set back as a compact list ("9-12,14").
std::string format_core_list(const CoreSet& cores);

/// The transports the lab knows, and what each can do.
struct TransportInfo {
  std::string name;
  bool pool = true;      ///< false: pool cells carry the `nopool` marker
  bool shard = true;     ///< false: shard cells carry the `noshard` marker
  bool preload = false;  ///< runs an unchanged binary under a launcher (onload, vma)
};
const std::vector<TransportInfo>& known_transports();
const TransportInfo* find_transport(const std::string& name);
extern const std::vector<std::string> kModels;  ///< single, mono, pool, shard
extern const std::vector<std::string> kLoops;   ///< closed, open

struct NicPair {
  std::string name;
  std::string server_if, client_if;
  std::string server_addr, client_addr;  ///< IPv4 without prefix length
  int prefix = 24;                       ///< of both addresses in their namespaces (same subnet)
  std::vector<std::string> transports;   ///< transports routed over this pair (empty = all)
};

/// What the CPU reports of itself: the hardware epoch's identity. Two CPUs
/// sold under one model string ("AMD EPYC") may differ in the instruction
/// sets the code dispatches on, so the string alone does not name an epoch.
struct CpuIdentity {
  std::string vendor;  ///< vendor_id: GenuineIntel, AuthenticAMD...
  int family = -1, model = -1, stepping = -1;
  std::vector<std::string> features;  ///< those of kDispatchFeatures the CPU and kernel enable, in that order
  /// "AuthenticAMD family 26 model 2 stepping 0; avx2 avx512bw ..." (what the page prints).
  std::string text() const;
};
/// The instruction-set features (as /proc/cpuinfo names them) that Kite's
/// code, or a flavour's, dispatches on at build or run time.
extern const std::vector<std::string> kDispatchFeatures;
/// The identity of the CPU this process runs on (/proc/cpuinfo; features the kernel has disabled are absent).
CpuIdentity host_cpu_identity();
/// The epoch id: the first 12 hex digits of the SHA-256 of the model string and the identity.
std::string epoch_of(const std::string& cpu_model, const CpuIdentity& cpu);

/// A declared service of a machine file, `[services.postgresql]`: the lab
/// starts it before the cells that need it, pins it to `cores` (never a
/// server or coordinator core), records it in the stamp and stops it at the
/// end. Its processes are known to the audit: their CPU is expected and
/// reported, never a foreign burner, but they must stay on their cores.
struct Service {
  std::string name;        ///< "postgresql" (kServices)
  CoreSet cores;           ///< where it runs
  std::string cores_from;  ///< the `cores` key as written: a role ("client") or a core list
  bool fsync = true;       ///< postgresql: fsync and full_page_writes (off: commits skip the disk)
};
/// The services a machine file may declare.
extern const std::vector<std::string> kServices;

struct Machine {
  std::string name;
  std::string cpu_model;
  CpuIdentity cpu;     ///< [cpu] of the file, else this host's (a sitting runs on the host it measures)
  std::string epoch;   ///< epoch_of(cpu_model, cpu): a new CPU is a new hardware epoch
  bool local = false;  ///< the file describes the host it runs on: cores must exist
  std::string kernel;  ///< recorded for a derived machine, informative otherwise
  CoreSet housekeeping, server, client, reserved;
  std::optional<int> coordinator;
  std::string network = "loopback";  ///< loopback | netns | nic
  std::string netns_server_addr = "10.77.0.1", netns_client_addr = "10.77.0.2";
  int netns_prefix = 30;
  std::vector<NicPair> nics;
  std::vector<std::string> transports;  ///< available on this host
  int kernel_busy_poll_usecs = 0;
  /// [transports.kernel] busy_poll_by_model: SO_BUSY_POLL per acceptor model
  /// (the seeds: single 50, the 32-session models 0); a model absent here takes busy_poll_usecs.
  std::map<std::string, int> kernel_busy_poll_by_model;
  bool uring_sqpoll = false;
  std::map<std::string, std::string> onload_env, vma_env;
  std::string onload_profile;
  /// [transports.vma] internal_thread_core: a reserved core for libvma's
  /// per-process maintenance thread, placed there through
  /// VMA_INTERNAL_THREAD_AFFINITY (vma and socketxtreme cells, server and client).
  std::optional<int> vma_internal_thread_core;
  std::vector<std::string> notes;  ///< e.g. "no housekeeping core"
  std::string source_text;         ///< the TOML as read or derived
  std::string source_name;         ///< file name or "local"

  bool has_transport(const std::string& t) const;
  /// SO_BUSY_POLL microseconds of a cell: 0 off kernel, else the model's value, else the transport's.
  int busy_poll_for(const std::string& transport, const std::string& model) const;
  /// Which key gave busy_poll_for its value ("transports.kernel.busy_poll_by_model.single", ...).
  std::string busy_poll_source(const std::string& transport, const std::string& model) const;
  CoreSet measured_cores() const;  ///< server + client + coordinator
  /// The NIC pair a transport's cells cross on the nic path: the first that
  /// lists it (tls: else the first that lists kernel), else the first pair;
  /// null without pairs.
  const NicPair* nic_for(const std::string& transport) const;
  /// The launcher settings the lab gives a preload transport's processes,
  /// from this file: onload's env; vma's env and, with
  /// vma_internal_thread_core, VMA_INTERNAL_THREAD_AFFINITY; socketxtreme
  /// (which runs under libvma) the same as vma. Empty for other transports.
  std::map<std::string, std::string> launcher_env(const std::string& transport) const;
  /// [services.<name>]: programs the lab starts for a sitting besides the
  /// servers and the client (e.g. the database of the postgresql store).
  std::map<std::string, Service> services;
};

/// Loads and validates a machine file. Throws ConfigError.
Machine load_machine(const std::string& path);
/// Parses machine TOML text; `name` is used in error messages.
Machine parse_machine(const std::string& text, const std::string& name);
/// Derives a machine for this host: cores, CPU model, kernel, transports.
Machine derive_local_machine();
/// Renders a derived machine as a TOML file.
std::string machine_to_toml(const Machine& m);

struct Thresholds {
  double cv_p50 = 0.10, cv_p99 = 0.25, rate_fraction = 0.99, response_over_service = 2.0;
};

struct Matrix {
  std::string name;
  std::vector<std::string> flavours, transports, models, loops;
  /// [transport_models]: a transport played on these models only (e.g. tls = ["single", "mono"]).
  std::map<std::string, std::vector<std::string>> transport_models;
  std::map<std::string, int> sessions{{"single", 1}, {"mono", 32}, {"pool", 32}, {"shard", 32}};
  int rate = 50000;          ///< open loop, aggregate orders/s
  int max_in_flight = 1000;  ///< open loop cap per session
  int think_us = 0;          ///< closed loop
  double warmup_s = 1.0, duration_s = 5.0;
  int runs = 5;
  std::optional<int> workers;  ///< [server] workers: pool/shard server threads; nullopt = "auto" (see workers_for)
  std::string idle = "spin";
  std::string store = "null";  ///< [server] store: a store setting (kStoreSettings) every cell runs with
  /// `pair_on`: the one dimension the members of a paired group differ in:
  /// "flavour" (the default) or "store" (the members are one flavour's cells
  /// with each of `stores`; docs/lab.md "Groups on a server setting").
  std::string pair_on = "flavour";
  std::vector<std::string> stores;  ///< with pair_on = "store": the store settings, the first the default reference
  Thresholds thresholds;
  double audit_interval_s = 0.2;
  double audit_burn_fraction = 0.25;  ///< a foreign thread above this share of a sample burns
  double ready_timeout_s = 10.0;
  int attempts = 2;        ///< a failed cell is tried again once; a repeat makes it partial
  bool installed = false;  ///< measure each flavour's newest install, not the build tree (install.hpp)
  /// `cells` (or bench-run --cells): the matrix's cells to run, as patterns
  /// FLAVOUR/TRANSPORT/MODEL/LOOP whose parts are names or shell globs
  /// (`rust-pure/*/mono/closed`); empty: every cell.
  std::vector<std::string> cells;
  /// `pairing`: "sequential" runs the cells one after another (method v1);
  /// "rounds" measures each group of cells that differ only in the flavour
  /// in interleaved rounds (method v2, docs/lab.md "Paired sittings").
  std::string pairing = "sequential";
  /// [rounds]: the paired groups' reference, stopping rule and seed.
  struct Rounds {
    std::string reference = "cpp";  ///< a flavour, or with pair_on = "store" a store setting (default: stores[0])
    double target = 0.05;           ///< each ratio's interval within +-target of its median
    double resolution = 0.02;       ///< an interval within +-resolution of 1 is `level`
    int min_rounds = 8, max_rounds = 30;
    int budget_rounds = 0;   ///< runs of this many full rounds at most (0: max_rounds); settled members leave
    std::uint64_t seed = 0;  ///< 0: drawn at the sitting's start (and recorded)
  } rounds;
  std::string source_text, source_name;
};

/// The store settings a matrix names (`[server] store`, `stores`), each a
/// StoreKind and, for postgresql, its commit policy: null, memory, file
/// (the memory-mapped journal), postgresql-sync, postgresql-async.
extern const std::vector<std::string> kStoreSettings;
/// A store setting as the engine takes it: StoreKind and PostgreSQLStoreCommit ("" when not postgresql).
struct StoreSetting {
  std::string kind, commit;
};
StoreSetting store_setting(const std::string& setting);
/// The service a store setting needs ("postgresql"), or "".
std::string service_for_store(const std::string& setting);
/// Why the matrix cannot run on the machine for want of a declared service
/// (a postgresql store without [services.postgresql]), or "".
std::string missing_services(const Matrix& mx, const Machine& m);

/// Checks a cell selection against a matrix: each pattern has four parts
/// and matches at least one of its cells. Returns "" or what is wrong.
std::string check_cell_selection(const Matrix& mx, const std::vector<std::string>& patterns);
/// Splits "a,b" into patterns (the --cells form).
std::vector<std::string> split_cell_selection(const std::string& text);

Matrix load_matrix(const std::string& path);
Matrix parse_matrix(const std::string& text, const std::string& name);

/// A flavour: how to find and start its server.
struct Flavour {
  std::string name;
  std::string description;
  std::string binary;             ///< relative to the build dir, or absolute, or a name on PATH
  std::vector<std::string> args;  ///< with {placeholders}
  std::vector<std::string> models, transports;
  std::map<std::string, std::string> env;
  int max_sessions = 0;  ///< the most sessions its server takes (a sweep stays under it); 0: no limit
  std::string source_name;

  // Build and identity, and what the flavour does not claim (docs/flavours.md).
  std::vector<std::string> build;  ///< argv that builds the server, run in {source_dir}; empty: built elsewhere
  std::vector<std::string> required_tools;  ///< `requires`: commands that must be on PATH; a missing one: `unbuilt`
  std::vector<std::string>
      artifacts;  ///< files besides `binary` that define the server (jar, dll, .so), same path rules
  std::map<std::string, std::string> cannot;       ///< transport setting -> why the runtime cannot apply it
  std::map<std::string, std::string> not_claimed;  ///< contract part or check -> why the flavour does not claim it
  /// [build_only]: declared transports its server has only where their vendor
  /// SDK is installed (tcpdirect, socketxtreme), with what it needs and what
  /// is claimed; elsewhere the server answers `unsupported:`. Nothing of such
  /// a transport is claimed as measured until a sitting measures it.
  std::map<std::string, std::string> build_only;
};

Flavour load_flavour(const std::string& path);
Flavour parse_flavour(const std::string& text, const std::string& name);
/// Loads every `<dir>/<name>.toml` for the names given. Throws ConfigError for a missing one.
std::map<std::string, Flavour> load_flavours(const std::string& dir, const std::vector<std::string>& names);

/// Replaces {key} by vars[key]; an unknown placeholder throws ConfigError.
std::string expand(const std::string& tmpl, const std::map<std::string, std::string>& vars, const std::string& where);

// ---- Starting a flavour's server: the placeholders of its args (docs/flavours.md).

/// Every placeholder a flavour's `args` may use.
extern const std::vector<std::string> kPlaceholders;
/// Transport settings a flavour may declare under [cannot].
extern const std::vector<std::string> kCannotSettings;
/// Contract parts and checks a flavour may name under [not_claimed].
extern const std::vector<std::string> kContractParts;
extern const std::vector<std::string> kContractChecks;

/// One start of a flavour's server: the value of every placeholder.
struct ServerStart {
  std::string model, transport;
  std::string bind = "127.0.0.1";
  int port = 0;
  CoreSet cores;  ///< {cores}: written as a plain comma list, never a range
  int coordinator_core = -1;
  int sessions = 1, workers = 2;
  int busy_poll_usecs = 0;
  std::string idle = "spin";
  std::string ready_file, store = "null", store_dir;
  /// {store_commit} {store_conninfo}: a postgresql store's commit policy and libpq connection string ("" otherwise).
  std::string store_commit, store_conninfo;
  std::string flavour, build_dir, source_dir;
  /// {tls_cert} {tls_key} {tls_ca}: the sitting's certificates (lab/src/tls.cpp), "" when it has no tls cell.
  std::string tls_cert, tls_key, tls_ca;
};

/// "9,10,11": what {cores} receives, a plain comma list, never a range.
std::string comma_list(const CoreSet& cores);
/// The placeholder values of a start, keyed as in kPlaceholders.
std::map<std::string, std::string> placeholder_values(const ServerStart& s);
/// {acceptor_config}: the kite-acceptor file of a start, beside its ready file.
std::string acceptor_config_path(const ServerStart& s);
/// binary followed by the flavour's args with every placeholder replaced.
/// When the args name {acceptor_config}, the file is written first
/// (kite::bench::render_acceptor_file); std::runtime_error if it cannot be.
std::vector<std::string> server_argv(const Flavour& f, const std::string& binary, const ServerStart& s);

struct Cell {
  std::string flavour, transport, model, loop;
  /// The cell's store setting when its matrix pairs on the store (pair_on =
  /// "store"), else "" (every cell runs the matrix's [server] store).
  std::string store = {};
  /// What names the cell among its group: the flavour, or "cpp@file" when it has a store of its own.
  std::string member() const { return store.empty() ? flavour : flavour + "@" + store; }
  std::string id() const { return member() + "/" + transport + "/" + model + "/" + loop; }
  std::string file_name() const { return member() + "_" + transport + "_" + model + "_" + loop + ".json"; }
};
/// The cell a member name ("cpp" or "cpp@file") has in a transport, model and loop.
Cell member_cell(const std::string& member, const std::string& transport, const std::string& model,
                 const std::string& loop);

/// How many server threads a pool or shard cell starts, and where the number
/// comes from. A spinning thread per server core: more of them than cores
/// measures the scheduler's time slicing, not the model.
struct Workers {
  int count = 1;             ///< {workers}
  int server_cores = 1;      ///< the machine file's server cores
  bool from_matrix = false;  ///< an explicit [server] workers; false: "auto", one per server core
  bool oversubscribed() const { return count > server_cores; }
  /// "matrix" or "server cores".
  std::string from() const { return from_matrix ? "matrix" : "server cores"; }
};
/// "auto": one worker per server core of the machine, at least 1.
int auto_workers(const Machine& m);
/// The matrix's [server] workers, or auto_workers when it says "auto" (the default).
Workers workers_for(const Matrix& mx, const Machine& m);

/// Why a cell cannot exist, or "" when it can be measured. Order of precedence:
/// nopool/noshard (the transport), unmeasurable (the host), unsupported (the
/// flavour), oversubscribed (a pool or shard cell with more workers than server cores).
std::string marker_for(const Cell& c, const Machine& m, const Flavour& f, const Workers& w = {});

/// Every cell of the matrix in sitting order (transport, model, loop, flavour,
/// and with pair_on = "store" each store in `stores` order), only those its
/// `cells` selection matches when it has one.
std::vector<Cell> plan_cells(const Matrix& mx);
/// The key of a cell's paired group: the cells that differ only in the
/// matrix's pair_on dimension share it ("kernel/single/closed", or with
/// pair_on = "store" "cpp/kernel/single/closed").
std::string group_key(const Matrix& mx, const Cell& c);
/// The member of a group's cells that the others are divided by: the
/// [rounds] reference (a flavour, or a store setting with pair_on = "store").
bool is_reference(const Matrix& mx, const Cell& c);

/// Whether a cell matches a pattern FLAVOUR/TRANSPORT/MODEL/LOOP (globs per
/// part; the first part is matched against the flavour and the member name).
bool cell_matches(const Cell& c, const std::string& pattern);

}  // namespace kite::lab
