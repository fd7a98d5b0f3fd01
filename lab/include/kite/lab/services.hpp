// The declared services of a machine file ([services.postgresql]): programs a
// sitting starts beside its servers, pinned to their declared cores, stamped,
// known to the audit, and stopped when the sitting ends, however it ends.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"

namespace kite::lab {

/// A private PostgreSQL server for the postgresql store's cells: initdb into
/// a temporary folder and a server on a unix socket there, run as an
/// unprivileged user (`nobody` when the lab runs as root), every process
/// pinned to the service's cores (taskset; the backends inherit it). It is
/// started by `script` (tests/support/pg_server.sh, the tests' own fixture)
/// so that the lab and the tests start it one way.
class PgService {
 public:
  /// `work`: where its state file goes (the sitting's .work folder).
  PgService(Service decl, std::string script, std::string work);
  ~PgService();  ///< stops it
  PgService(const PgService&) = delete;
  PgService& operator=(const PgService&) = delete;

  /// Starts it; false with why() when it cannot start here (no server
  /// binaries, initdb or the server failed): the cells that need it are
  /// then marked, not run.
  bool start();
  /// Stops it and removes its folder (idempotent).
  void stop();
  bool running() const { return running_; }
  const std::string& why() const { return why_; }
  pid_t root() const { return postmaster_; }
  const Service& declared() const { return decl_; }

  /// Creates a database of its own for one member's server (two servers on
  /// one database would fight over the sessions' advisory locks) and returns
  /// its libpq connection string; "" with `error` set when it could not.
  std::string create_database(const std::string& name, std::string& error);

  /// sitting.json's services.postgresql: what ran, where, and how it ended.
  nlohmann::json stamp() const;

 private:
  Service decl_;
  std::string script_, state_;
  std::string dir_, bindir_, port_, version_, affinity_, started_at_, stopped_at_;
  std::vector<std::string> databases_;
  pid_t postmaster_ = 0;
  bool running_ = false, tried_ = false;
  std::string why_;
};

/// A database name for a member's cell: "kite_" and the cell's file stem with
/// every character outside [a-z0-9_] as '_' (PostgreSQL folds and limits names).
std::string database_name_for(const Cell& cell);

}  // namespace kite::lab
