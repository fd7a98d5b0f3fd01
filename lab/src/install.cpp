#include "kite/lab/install.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "kite/lab/process.hpp"
#include "kite/lab/util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

constexpr const char* kInstallJson = "install.json";

// A file to install: where it is now and its name in the install folder.
struct SourceFile {
  std::string path, name, sha256;
};

// The flavour's binary then its artifacts, found as a sitting finds them.
std::vector<SourceFile> source_files(const Flavour& f, const std::string& build_dir) {
  std::vector<SourceFile> out;
  std::string binary = find_executable(f.binary, build_dir);
  if (binary.empty())
    throw ConfigError(f.source_name + ": binary: '" + f.binary + "' is not built (looked in " + build_dir +
                      " and PATH); build it first");
  out.push_back({binary, fs::path(f.binary).filename().string(), ""});
  for (const auto& a : f.artifacts) {
    const std::string path = find_artifact(a, build_dir);
    if (path.empty())
      throw ConfigError(f.source_name + ": artifacts: '" + a + "' is not a file (looked in " + build_dir + ")");
    out.push_back({path, fs::path(a).filename().string(), ""});
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (out[i].name == out[j].name)
        throw ConfigError(f.source_name + ": artifacts: two files are named '" + out[i].name +
                          "'; an install holds its files side by side under their names");
    out[i].path = fs::absolute(out[i].path).lexically_normal().string();
    out[i].sha256 = sha256_file(out[i].path);
    if (out[i].sha256.empty()) throw std::runtime_error(out[i].path + ": cannot read");
  }
  return out;
}

// The hash that names the install: the same files (names and contents) give the same one.
std::string files_hash(const std::vector<SourceFile>& files) {
  std::string list;
  for (const auto& f : files) list += f.name + " " + f.sha256 + "\n";
  return sha256_hex(list);
}

// `key="value"` or `key=value` in a --version answer; "" when absent.
std::string stamp_field(const std::string& text, const std::string& key) {
  for (std::size_t at = text.find(key + "="); at != std::string::npos; at = text.find(key + "=", at + 1)) {
    if (at > 0 && text[at - 1] != ' ' && text[at - 1] != '\n') continue;
    std::size_t from = at + key.size() + 1;
    if (from < text.size() && text[from] == '"') {
      std::size_t end = text.find('"', from + 1);
      return end == std::string::npos ? "" : text.substr(from + 1, end - from - 1);
    }
    return text.substr(from, text.find_first_of(" \n", from) - from);
  }
  return "";
}

json source_git(const std::string& source_dir) {
  CommandResult rev = run_command({"git", "-C", source_dir, "rev-parse", "HEAD"}, 10.0);
  CommandResult st = run_command({"git", "-C", source_dir, "status", "--porcelain", "--untracked-files=no"}, 10.0);
  return {{"revision", rev.code == 0 ? trim(rev.output) : "unknown"},
          {"dirty", rev.code == 0 && st.code == 0 && !trim(st.output).empty()}};
}

// install.json's facts about how the binary was built, from its --version answer.
json build_facts(const std::string& binary) {
  CommandResult r = run_command({binary, "--version"}, 5.0);
  std::string answer = trim(r.output).substr(0, 800);
  if (r.code != 0 || answer.empty())
    answer = "unavailable: '" + fs::path(binary).filename().string() + " --version' exited " + std::to_string(r.code);
  std::string compiler = stamp_field(answer, "compiler");
  std::string flags = stamp_field(answer, "build_flags");
  if (flags.empty()) flags = stamp_field(answer, "flags");
  json j = {{"version", answer},
            {"compiler", compiler.empty() ? "unknown" : compiler},
            {"flags", flags.empty() ? "unknown" : flags}};
  if (std::string level = stamp_field(answer, "codec_level"); !level.empty()) j["codec_level"] = level;
  if (flags.empty()) {
    j["host_tuned"] = nullptr;
    j["build"] = "unknown";
  } else {
    j["host_tuned"] = host_tuned_flags(flags);
    j["build"] = host_tuned_flags(flags) ? "host-tuned" : "portable";
  }
  return j;
}

Install read_install(const fs::path& dir) {
  Install in;
  in.info = json::parse(read_text((dir / kInstallJson).string()));
  in.dir = fs::absolute(dir).lexically_normal().string();
  in.id = dir.filename().string();
  in.flavour = in.info.at("flavour").get<std::string>();
  in.binary = in.dir + "/" + in.info.at("binary").get<std::string>();
  in.date = in.info.at("date").get<std::string>();
  for (const auto& f : in.info.at("files"))
    in.files.push_back(
        {f.at("name").get<std::string>(), f.at("source").get<std::string>(), f.at("sha256").get<std::string>()});
  if (in.info.value("install", "") != in.id)
    throw std::runtime_error("install.json names install '" + in.info.value("install", "") + "', not its folder's");
  return in;
}

void make_read_only(const fs::path& p) {
  const fs::perms exec = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  const bool executable = (fs::status(p).permissions() & fs::perms::owner_exec) != fs::perms::none;
  fs::permissions(p, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read |
                         (executable ? exec : fs::perms::none));
}

// The staging folder of an install: removed unless committed, so a failure leaves nothing behind.
struct Staging {
  fs::path dir;
  bool committed = false;
  ~Staging() {
    if (committed) return;
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
  }
};

// Copies the files into the staging folder, checks the copies, and writes install.json.
void stage(const Staging& st, const std::vector<SourceFile>& files, const InstallRequest& rq, const Flavour& f,
           const std::string& id) {
  json listed = json::array();
  for (const auto& s : files) {
    fs::path to = st.dir / s.name;
    fs::copy_file(s.path, to);
    if (sha256_file(to.string()) != s.sha256)
      throw std::runtime_error(s.path + " changed while it was copied; install again once the build is done");
    make_read_only(to);
    listed.push_back({{"name", s.name}, {"source", s.path}, {"sha256", s.sha256}});
  }
  json info = {{"schema", 1},
               {"install", id},
               {"flavour", f.name},
               {"host", rq.host},
               {"date", utc_now_iso()},
               {"git", source_git(rq.source_dir)},
               {"binary", files.front().name},
               {"files", listed},
               {"hash", files_hash(files)},
               {"flavour_file", read_text_or_empty(f.source_name)}};
  info.update(build_facts((st.dir / files.front().name).string()));
  write_text_atomic((st.dir / kInstallJson).string(), info.dump(1));
  make_read_only(st.dir / kInstallJson);
  fs::permissions(st.dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
}

// An existing install of the same files, checked before it is reused.
InstallOutcome reuse(const fs::path& dir) {
  Install in = read_install(dir);
  if (std::string bad = verify_install(in); !bad.empty())
    throw std::runtime_error(dir.string() + ": an install of these files exists but was altered (" + bad +
                             "); remove it (chmod -R u+w, then rm -r) and install again");
  return {in, true};
}

}  // namespace

std::string installs_dir(const std::string& results_dir, const std::string& host) {
  return results_dir + "/" + host + "/installs";
}

bool host_tuned_flags(const std::string& flags) {
  for (const char* tuned : {"-march=native", "-mcpu=native", "-mtune=native", "target-cpu=native", "-xHost"})
    if (flags.find(tuned) != std::string::npos) return true;
  return false;
}

InstallOutcome install_flavour(const InstallRequest& rq) {
  const std::string flavours_dir = rq.flavours_dir.empty() ? rq.source_dir + "/lab/flavours" : rq.flavours_dir;
  const Flavour f = load_flavours(flavours_dir, {rq.flavour}).at(rq.flavour);
  const std::vector<SourceFile> files = source_files(f, rq.build_dir);
  const std::string id = f.name + "-" + files_hash(files).substr(0, 12);
  const fs::path root = installs_dir(rq.results_dir, rq.host);
  const fs::path final_dir = root / id;
  if (fs::exists(final_dir)) return reuse(final_dir);

  fs::create_directories(root);
  Staging st{root / (".staging-" + id + "-" + std::to_string(getpid()))};
  fs::remove_all(st.dir);
  fs::create_directory(st.dir);
  stage(st, files, rq, f, id);
  if (std::rename(st.dir.c_str(), final_dir.c_str()) != 0) {
    // Another install of the same files got there first.
    if ((errno == EEXIST || errno == ENOTEMPTY) && fs::exists(final_dir / kInstallJson)) return reuse(final_dir);
    throw std::runtime_error(final_dir.string() + ": rename failed: " + std::strerror(errno));
  }
  st.committed = true;
  return {read_install(final_dir), false};
}

std::vector<Install> list_installs(const std::string& results_dir, const std::string& host,
                                   const std::string& flavour) {
  std::vector<Install> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(installs_dir(results_dir, host), ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.front() == '.') continue;
    try {
      Install in = read_install(e.path());
      if (flavour.empty() || in.flavour == flavour) out.push_back(std::move(in));
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "bench-run: %s: not an install, left out: %s\n", e.path().c_str(), ex.what());
    }
  }
  // Dates have whole seconds; install.json's time orders two installs of the same second.
  auto written = [](const Install& in) {
    std::error_code wec;
    return fs::last_write_time(fs::path(in.dir) / kInstallJson, wec);
  };
  std::sort(out.begin(), out.end(), [&](const Install& a, const Install& b) {
    return a.date != b.date ? a.date < b.date : written(a) < written(b);
  });
  return out;
}

std::string install_listing(const std::vector<Install>& installs) {
  if (installs.empty()) return "no installs\n";
  std::map<std::string, std::string> newest;  // flavour -> id; the list runs oldest first
  for (const auto& in : installs) newest[in.flavour] = in.id;
  auto row = [](const std::string& id, const std::string& date, const std::string& git, const std::string& build,
                bool is_newest) {
    char line[512];
    std::snprintf(line, sizeof line, "%-28s %-20s %-19s %-10s", id.c_str(), date.c_str(), git.c_str(), build.c_str());
    return (is_newest ? std::string(line) + " newest" : trim(line)) + "\n";
  };
  std::string out = row("install", "date", "git", "build", false);
  for (const auto& in : installs) {
    const json git = in.info.value("git", json::object());
    std::string rev = git.value("revision", "unknown").substr(0, 12) + (git.value("dirty", false) ? "+dirty" : "");
    out += row(in.id, in.date, rev, in.info.value("build", "unknown"), newest[in.flavour] == in.id);
  }
  return out;
}

std::string verify_install(const Install& in) {
  for (const auto& f : in.files) {
    std::string now = sha256_file(in.dir + "/" + f.name);
    if (now != f.sha256)
      return f.name +
             (now.empty() ? " is unreadable" : " has sha256 " + now.substr(0, 12) + ", not " + f.sha256.substr(0, 12));
  }
  return "";
}

const Install* SittingInstalls::server(const std::string& flavour) const {
  auto it = servers.find(flavour);
  return it == servers.end() ? nullptr : &it->second;
}

SittingInstalls choose_installs(const std::string& results_dir, const std::string& host,
                                const std::vector<std::string>& flavours,
                                const std::map<std::string, std::string>& pinned) {
  const std::string where = installs_dir(results_dir, host);
  auto checked = [&](Install in) {
    if (std::string bad = verify_install(in); !bad.empty())
      throw ConfigError(in.dir + ": install " + in.id + " was altered (" + bad + "); install the flavour again");
    return in;
  };
  // A resumed sitting keeps the installs it started with, and the client it started with.
  const bool resumed = !pinned.empty();
  auto pick = [&](const std::string& flavour) -> std::optional<Install> {
    std::vector<Install> all = list_installs(results_dir, host, flavour);
    if (!resumed) return all.empty() ? std::nullopt : std::optional<Install>(checked(all.back()));
    auto pin = pinned.find(flavour);
    if (pin == pinned.end()) return std::nullopt;
    for (const auto& in : all)
      if (in.id == pin->second) return checked(in);
    throw ConfigError("install " + pin->second + " of flavour " + flavour +
                      ", which this sitting started with, is no longer in " + where + "; start a new sitting");
  };
  SittingInstalls s;
  for (const auto& f : flavours) {
    std::optional<Install> in = pick(f);
    if (!in)
      throw ConfigError("flavour " + f + " has no install in " + where +
                        " and the sitting measures installed binaries; install it with 'bench-run install " + f +
                        "' (or run without --installed)");
    s.servers.emplace(f, std::move(*in));
  }
  if (const Install* cpp = s.server("cpp"))
    s.client = *cpp;
  else
    s.client = pick("cpp");
  return s;
}

void point_at_install(Flavour& f, const Install& in) {
  f.binary = in.binary;
  f.artifacts.clear();
  for (std::size_t i = 1; i < in.files.size(); ++i) f.artifacts.push_back(in.dir + "/" + in.files[i].name);
}

json installs_json(const SittingInstalls& s) {
  json out = json::array();
  auto add = [&](const Install& in, const std::string& user) {
    for (auto& e : out)
      if (e["install"] == in.id) {
        e["used_by"].push_back(user);
        return;
      }
    json e = {{"install", in.id}, {"flavour", in.flavour}, {"used_by", {user}}, {"dir", in.dir}};
    for (const char* k : {"date", "git", "version", "compiler", "flags", "host_tuned", "build", "files"})
      if (in.info.contains(k)) e[k] = in.info[k];
    out.push_back(std::move(e));
  };
  for (const auto& [f, in] : s.servers) add(in, "server:" + f);
  if (s.client) add(*s.client, "client");
  return out;
}

std::map<std::string, std::string> pinned_installs(const json& installs) {
  std::map<std::string, std::string> out;
  if (!installs.is_array()) return out;
  for (const auto& e : installs) out[e.value("flavour", "")] = e.value("install", "");
  return out;
}

json build_origin(const Install* install, const std::string& path, const std::string& sha256) {
  if (install) return {{"from", "install"}, {"install", install->id}, {"sha256", sha256}};
  return {{"from", "build tree"}, {"path", path}, {"sha256", sha256}};
}

}  // namespace kite::lab
