#include "kite/lab/services.hpp"

#include <filesystem>
#include <sstream>

#include "kite/lab/process.hpp"
#include "kite/lab/util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

// key=value lines of pg_server.sh's state file.
std::string state_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

// Cpus_allowed_list of a process, "" when unreadable.
std::string affinity_of(pid_t pid) {
  std::istringstream in(read_text_or_empty("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return trim(line.substr(18));
  return "";
}

}  // namespace

PgService::PgService(Service decl, std::string script, std::string work)
    : decl_(std::move(decl)), script_(std::move(script)), state_(std::move(work) + "/postgresql.state") {}

PgService::~PgService() { stop(); }

bool PgService::start() {
  tried_ = true;
  started_at_ = utc_now_iso();
  if (!fs::exists(script_)) {
    why_ = "no " + script_ + " to start it with";
    return false;
  }
  // taskset pins initdb, pg_ctl and the postmaster; every backend inherits it.
  const std::vector<std::string> argv = {"env",     std::string("KITE_PG_FSYNC=") + (decl_.fsync ? "on" : "off"),
                                         "taskset", "-c",
                                         comma_list(decl_.cores),
                                         "bash",    script_,
                                         "start",   state_};
  const CommandResult r = run_command(argv, 90.0);
  const std::string state = read_text_or_empty(state_);
  if (r.code != 0) {
    const std::string skip = state_value(state, "skip");
    why_ = "postgresql did not start: " + (skip.empty() ? trim(r.output).substr(0, 400) : skip);
    return false;
  }
  dir_ = state_value(state, "dir");
  bindir_ = state_value(state, "bindir");
  port_ = state_value(state, "port");
  postmaster_ = static_cast<pid_t>(std::atoi(read_text_or_empty(dir_ + "/data/postmaster.pid").c_str()));
  running_ = true;
  affinity_ = affinity_of(postmaster_);
  version_ = trim(run_command({bindir_ + "/postgres", "--version"}, 10.0).output);
  return true;
}

void PgService::stop() {
  if (!running_) return;
  running_ = false;
  run_command({"bash", script_, "stop", state_}, 60.0);
  stopped_at_ = utc_now_iso();
}

std::string PgService::create_database(const std::string& name, std::string& error) {
  if (!running_) {
    error = "postgresql is not running";
    return "";
  }
  const auto psql = [&](const std::string& sql) {
    return run_command({bindir_ + "/psql", "-h", dir_, "-p", port_, "-U", "kite", "-d", "postgres", "-q", "-c", sql},
                       30.0);
  };
  CommandResult r = psql("DROP DATABASE IF EXISTS " + name);
  if (r.code == 0) r = psql("CREATE DATABASE " + name);
  if (r.code != 0) {
    error = "cannot create database " + name + ": " + trim(r.output).substr(0, 300);
    return "";
  }
  databases_.push_back(name);
  return "host=" + dir_ + " port=" + port_ + " user=kite dbname=" + name;
}

json PgService::stamp() const {
  json j = {{"name", decl_.name},
            {"cores", format_core_list(decl_.cores)},
            {"cores_from", decl_.cores_from},
            {"fsync", decl_.fsync},
            {"started", tried_ && why_.empty()},
            {"reason", why_},
            {"started_at", started_at_},
            {"stopped_at", stopped_at_}};
  if (!why_.empty() || !tried_) return j;
  j["version"] = version_;
  j["bindir"] = bindir_;
  j["socket_dir"] = dir_;
  j["port"] = port_;
  j["postmaster_pid"] = postmaster_;
  j["postmaster_affinity"] = affinity_;
  j["databases"] = databases_;
  j["started_by"] = "tests/support/pg_server.sh (initdb in a temporary folder, run as an unprivileged user)";
  return j;
}

std::string database_name_for(const Cell& cell) {
  std::string out = "kite_";
  for (char ch : cell.member() + "_" + cell.transport + "_" + cell.model + "_" + cell.loop)
    out += (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ? ch : '_';
  return out.substr(0, 63);
}

}  // namespace kite::lab
