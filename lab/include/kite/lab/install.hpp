// Installed binaries: a flavour's built files, copied into an immutable folder
// named by their hash, so that a sitting measures a build that nothing
// rebuilds under it (docs/lab.md "Installed binaries").
//
// An install lives in <results>/<host>/installs/<flavour>-<hash12>/: the
// flavour's `binary` and every `artifacts` file side by side under their file
// names, read-only, and install.json (date, git, the binary's --version answer,
// compiler and flags, host-tuned or portable, each file's sha256 and source).
// <hash12> is the start of the sha256 of the file list ("NAME SHA256\n" per
// file, binary first), so the same files always make the same folder.
// Set-up code throughout.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"

namespace kite::lab {

/// One file of an install.
struct InstalledFile {
  std::string name;    ///< its name in the install folder
  std::string source;  ///< the path it was copied from
  std::string sha256;
};

/// An install as its folder and install.json describe it.
struct Install {
  std::string flavour;
  std::string id;                    ///< "<flavour>-<hash12>", the folder's name
  std::string dir;                   ///< the folder
  std::string binary;                ///< the installed binary: dir/<the binary's file name>
  std::string date;                  ///< UTC, ISO 8601, when it was installed
  std::vector<InstalledFile> files;  ///< the binary first, then the artifacts
  nlohmann::json info;               ///< install.json as read
};

/// <results_dir>/<host>/installs: `host` is the machine's name, as for sittings.
std::string installs_dir(const std::string& results_dir, const std::string& host);

struct InstallRequest {
  std::string flavour;       ///< its file is <flavours_dir>/<flavour>.toml
  std::string flavours_dir;  ///< default <source_dir>/lab/flavours
  std::string build_dir;     ///< where `binary` and relative `artifacts` are found
  std::string source_dir;    ///< the source tree whose git state is recorded
  std::string results_dir;
  std::string host;
};

struct InstallOutcome {
  Install install;
  bool reused = false;  ///< an identical install existed and was kept as it is
};

/// Installs a flavour's built files, or finds the identical install already
/// there. The files are copied into a temporary folder that is renamed into
/// place once complete, so a failure leaves no partial install. Throws
/// ConfigError for an unknown flavour or a missing file, std::runtime_error
/// for a failed copy or an existing install whose files no longer match.
InstallOutcome install_flavour(const InstallRequest& request);

/// Every install under installs_dir(results_dir, host), oldest first (by
/// date); only `flavour`'s when it is given. Folders without a readable
/// install.json are left out with a message on stderr.
std::vector<Install> list_installs(const std::string& results_dir, const std::string& host,
                                   const std::string& flavour = "");

/// A table of installs, one line each: id, date, git revision (and "dirty"),
/// host-tuned, portable or unknown, and "newest" on the newest of each flavour.
std::string install_listing(const std::vector<Install>& installs);

/// "" when every file of the install has the sha256 install.json gives; otherwise what differs.
std::string verify_install(const Install& install);

/// True when build flags tune for the build host's CPU (-march=native,
/// -mcpu=native, -mtune=native, Rust's target-cpu=native, -xHost).
bool host_tuned_flags(const std::string& flags);

/// The installs a sitting measures: one per flavour of its matrix, and the
/// client's, which is cpp's install whenever cpp is installed.
struct SittingInstalls {
  std::map<std::string, Install> servers;  ///< by flavour
  std::optional<Install> client;

  /// The flavour's install, nullptr when the sitting measures the build tree for it.
  const Install* server(const std::string& flavour) const;
  bool empty() const { return servers.empty() && !client; }
};

/// The newest install of every flavour given (and of cpp, for the client), or
/// the one `pinned` names for a flavour (a resumed sitting keeps its installs).
/// Throws ConfigError naming the flavour and the command that installs it when
/// a flavour has none, or a pinned install is gone or damaged.
SittingInstalls choose_installs(const std::string& results_dir, const std::string& host,
                                const std::vector<std::string>& flavours,
                                const std::map<std::string, std::string>& pinned);

/// Points a flavour at its install: `binary` and `artifacts` become the
/// absolute paths of the installed copies, so that everything a sitting does
/// with a flavour's files (start, hash, check before every cell) uses them.
void point_at_install(Flavour& f, const Install& install);

/// sitting.json's "installs": one entry per install used, with what uses it
/// ("server:<flavour>", "client") and its install.json facts.
nlohmann::json installs_json(const SittingInstalls& installs);
/// The pins a resumed sitting keeps, read back from installs_json's output.
std::map<std::string, std::string> pinned_installs(const nlohmann::json& installs);

/// What a result's stamp.effective says of a binary it ran: {"from": "install",
/// "install": id, "sha256"} when `install` is given, else {"from": "build tree",
/// "path", "sha256"}.
nlohmann::json build_origin(const Install* install, const std::string& path, const std::string& sha256);

}  // namespace kite::lab
