// A sitting's stamp: sitting.json as it starts, resumes and ends, the
// binaries it hashes, and each attempt's record of what ran (stamp.effective).
#include <filesystem>

#include "kite/lab/install.hpp"
#include "kite/lab/method.hpp"
#include "kite/lab/util.hpp"

#include "sitting_parts.hpp"

namespace fs = std::filesystem;

namespace kite::lab::detail {

namespace {

// stamp.effective's record of where a binary the cell ran comes from.
json build_of(const Setup& c, const Install* install, const std::string& path) {
  std::string abs = fs::absolute(path).lexically_normal().string();
  auto it = c.binaries.find(abs);
  return build_origin(install, rel(abs, c.opt.source_dir), it == c.binaries.end() ? "" : it->second.sha256);
}

// The launcher settings of a transport (the stamp's `launcher`, what compare
// names): the machine file's environment (EF_*, VMA_*), onload's profile, the
// core of libvma's thread. Null for transports without a launcher.
json launcher_settings(const Machine& m, const std::string& transport) {
  if (transport != "onload" && transport != "vma" && transport != "socketxtreme") return nullptr;
  json l = {{"env", m.launcher_env(transport)}};
  if (transport == "onload") {
    l["command"] = "onload";
    l["profile"] = m.onload_profile;
  } else {
    l["preload"] = "libvma.so";
    l["vma_internal_thread_core"] = m.vma_internal_thread_core ? json(*m.vma_internal_thread_core) : json(nullptr);
    if (transport == "socketxtreme") l["env"]["VMA_SOCKETXTREME"] = "1";
  }
  return l;
}

json effective_transport(const Setup& c, const std::string& transport, int busy_poll) {
  const Machine& m = c.opt.machine;
  json t = {{"name", transport}};
  if (transport == "kernel") t["busy_poll_usecs"] = busy_poll;
  if (transport == "uring") t["sqpoll"] = m.uring_sqpoll;
  if (json l = launcher_settings(m, transport); !l.is_null()) {
    t["env"] = l["env"];
    if (l.contains("profile")) t["profile"] = l["profile"];
    if (l.contains("vma_internal_thread_core")) t["vma_internal_thread_core"] = l["vma_internal_thread_core"];
  }
  return t;
}

// The cell's wire: the pair it crosses, its interfaces and their offloads (null off the nic path).
json cell_wire(const Context& c, const std::string& transport) {
  const NicPair* p = c.network == "nic" ? c.opt.machine.nic_for(transport) : nullptr;
  if (!p) return nullptr;
  // Appended, not "/" + ...: GCC 12 warns falsely (-Wrestrict) on that once inlined here.
  std::string pfx = "/";
  pfx += std::to_string(p->prefix);
  return {{"pair", p->name},
          {"server", {{"interface", p->server_if}, {"address", p->server_addr + pfx}}},
          {"client", {{"interface", p->client_if}, {"address", p->client_addr + pfx}}},
          {"offloads", c.wire ? c.wire->offloads_of(p->name) : ""}};
}

json binaries_json(const Setup& c) {
  json j = json::object();
  for (const auto& [p, b] : c.binaries) {
    json& e = j[rel(p, c.opt.source_dir)];
    e = {{"sha256", b.sha256}, {"used_by", b.used_by}};
    if (b.run) e["version"] = b.version;
  }
  return j;
}

json git_stamp(const std::string& src) {
  CommandResult rev = run_command({"git", "-C", src, "rev-parse", "HEAD"}, 10.0);
  CommandResult st = run_command({"git", "-C", src, "status", "--porcelain", "--untracked-files=no"}, 10.0);
  return {{"revision", rev.code == 0 ? trim(rev.output) : "unknown"},
          {"dirty", st.code == 0 && !trim(st.output).empty()}};
}

json overrides_json(const SittingOptions& opt) {
  json overrides = json::object();
  if (opt.busy_poll_usecs) overrides["busy_poll_usecs"] = *opt.busy_poll_usecs;
  if (opt.idle) overrides["idle"] = *opt.idle;
  if (opt.network) overrides["network"] = *opt.network;
  if (opt.cells) overrides["cells"] = *opt.cells;
  if (!opt.series.empty()) overrides["one_sitting_per_cell"] = opt.series;
  if (opt.installed) overrides["installed"] = true;
  if (!opt.audit) overrides["audit"] = false;
  if (!opt.check) overrides["check"] = false;
  return overrides;
}

// sitting.json's `effective`: what the sitting's cells are given, overrides applied.
json effective_settings(const Setup& c) {
  json by_model = json::object();  // what each model's kernel cells are given (an override gives them all one value)
  for (const auto& model : kModels) by_model[model] = cell_busy_poll(c, {"", "kernel", model, ""});
  json e = {{"busy_poll_usecs", c.busy_poll},
            {"busy_poll_by_model", by_model},
            {"idle", c.idle},
            {"network", c.network},
            {"audit", c.opt.audit},
            {"check", c.opt.check},
            {"workers", workers_json(c.workers)}};
  // What the launchers are given (compare names any that differs), whether or not this host has the stack.
  json launchers = json::object();
  for (const char* t : {"onload", "vma", "socketxtreme"}) launchers[t] = launcher_settings(c.opt.machine, t);
  e["launchers"] = launchers;
  return e;
}

// sitting.json's `pairing`: the rule a paired sitting runs by, and its seed (read back on resume).
SittingPairingRecord pairing_stamp(const Matrix::Rounds& r, std::uint64_t seed) {
  SittingPairingRecord p;
  p.reference = r.reference;
  p.target = r.target;
  p.resolution = r.resolution;
  p.min_rounds = r.min_rounds;
  p.max_rounds = r.max_rounds;
  p.budget_rounds = r.budget_rounds > 0 ? r.budget_rounds : r.max_rounds;
  p.seed = seed;
  return p;
}

}  // namespace

std::string ask_version(const std::string& path) {
  CommandResult r = run_command({path, "--version"}, 5.0);
  std::string out = trim(r.output);
  if (r.code != 0 || out.empty())
    return "unavailable: '" + fs::path(path).filename().string() + " --version' exited " + std::to_string(r.code);
  return out.substr(0, 800);
}

json effective_stamp(const Context& c, const Cell& cell, const AttemptPlan& p, int attempt_no) {
  const Machine& m = c.opt.machine;
  ServerStart start;
  start.ready_file = p.ready;
  const std::string acceptor_file = read_text_or_empty(acceptor_config_path(start));
  return {
      {"server_argv", p.server.argv},
      // The kite-acceptor file the server ran, when its flavour takes {acceptor_config}.
      {"acceptor_config", acceptor_file.empty() ? json() : json(acceptor_file)},
      {"server_env", p.server.env},
      {"client_argv", p.client.argv},
      {"client_env", p.client.env},
      {"network", c.network},
      {"bind", p.net.bind},
      {"server_netns", p.net.server_ns},
      {"client_netns", p.net.client_ns},
      {"offloads", c.netns  ? c.netns->offloads()
                   : c.wire ? cell_wire(c, cell.transport).value("offloads", "")
                            : ""},
      {"wire", cell_wire(c, cell.transport)},
      {"launcher", launcher_settings(m, cell.transport)},
      {"cores",
       {{"server", format_core_list(m.server)},
        {"server_allowed", format_core_list(p.allowed_server)},
        {"coordinator", p.coordinator},
        {"coordinator_shared", !m.coordinator.has_value()},
        {"client", format_core_list(m.client)}}},
      {"transport", effective_transport(c, cell.transport, p.busy_poll)},
      {"busy_poll_usecs", p.busy_poll},
      {"busy_poll_from", cell_busy_poll_source(c, cell)},
      {"idle", c.idle},
      {"store", p.store},
      {"sessions", p.sessions},
      {"workers", c.workers.count},
      {"cannot", c.flavours.at(cell.flavour).cannot},
      {"attempt", attempt_no},
      {"server_build", build_of(c, c.installed.server(cell.flavour), flavour_binary(c, c.flavours.at(cell.flavour)))},
      {"client_build", build_of(c, c.installed.client ? &*c.installed.client : nullptr, c.client_path)},
  };
}

// Every binary and artifact of the sitting, hashed now; a missing one is left out.
std::map<std::string, Binary> hash_binaries(const Setup& c) {
  std::map<std::string, Binary> out;
  auto add = [&](const std::string& path, const std::string& user, bool run) {
    if (path.empty()) return;
    std::string abs = fs::absolute(path).lexically_normal().string();
    Binary& b = out[abs];
    b.path = abs;
    b.used_by.push_back(user);
    b.run = b.run || run;
  };
  add(c.client_path, "client", true);
  for (const auto& [n, f] : c.flavours) {
    add(flavour_binary(c, f), "server:" + n, true);
    for (const auto& a : f.artifacts) add(find_artifact(a, c.opt.build_dir), "artifact:" + n, false);
  }
  for (auto& [p, b] : out) b.sha256 = sha256_file(p);
  return out;
}

// What changed since the sitting started: a binary or artifact ("" when nothing).
std::string changed_binary(const Setup& c, const std::map<std::string, Binary>& now) {
  for (const auto& [p, b] : c.binaries) {
    auto it = now.find(p);
    std::string h = it == now.end() ? "" : it->second.sha256;
    if (h != b.sha256)
      return rel(p, c.opt.source_dir) + " changed during the sitting (sha256 " + b.sha256.substr(0, 12) +
             " at start, " + (h.empty() ? std::string("now unreadable") : h.substr(0, 12) + " now") + ")";
  }
  return "";
}

// The stamp of the sitting to resume. A resumed sitting runs with the files
// and overrides it started with: they replace those of the options.
json resume_stamp(SittingOptions& opt, const std::string& dir) {
  json previous;
  try {
    previous = json::parse(read_text(dir + "/sitting.json"));
  } catch (const std::exception& e) {
    throw ConfigError(dir + ": cannot resume: sitting.json unreadable: " + e.what());
  }
  opt.machine = parse_machine(previous.at("machine_file").get<std::string>(),
                              previous.at("machine_source").get<std::string>() + " (recorded)");
  opt.matrix = parse_matrix(previous.at("matrix_file").get<std::string>(),
                            previous.at("matrix_source").get<std::string>() + " (recorded)");
  const json& ov = previous.value("overrides", json::object());
  if (ov.contains("installed")) opt.installed = ov["installed"].get<bool>();
  opt.pinned_installs = pinned_installs(previous.value("installs", json::array()));
  if (ov.contains("busy_poll_usecs")) opt.busy_poll_usecs = ov["busy_poll_usecs"].get<int>();
  if (ov.contains("idle")) opt.idle = ov["idle"].get<std::string>();
  if (ov.contains("network")) opt.network = ov["network"].get<std::string>();
  if (ov.contains("cells")) opt.cells = ov["cells"].get<std::vector<std::string>>();
  if (ov.contains("one_sitting_per_cell")) opt.series = ov["one_sitting_per_cell"].get<std::string>();
  if (ov.contains("audit")) opt.audit = ov["audit"].get<bool>();
  if (ov.contains("check")) opt.check = ov["check"].get<bool>();
  return previous;
}

// Why a sitting cannot be resumed with the binaries there are now ("" when it can).
std::string resume_refusal(const Setup& c, const json& previous) {
  const json& was = previous.value("binaries", json::object());
  for (const auto& [p, b] : c.binaries) {
    std::string key = rel(p, c.opt.source_dir);
    std::string then = was.contains(key) ? was[key].value("sha256", "") : "";
    if (!then.empty() && then != b.sha256)
      return "cannot resume " + c.dir + ": " + key + " is not the " + (b.run ? "binary" : "artifact") +
             " the sitting started with (sha256 " + then.substr(0, 12) + " then, " + b.sha256.substr(0, 12) +
             " now); start a new sitting";
  }
  return "";
}

// sitting.json as the sitting starts (or resumes): the host, the binaries, the inputs, the settings.
json start_stamp(const Setup& c, const json& previous) {
  const SittingOptions& opt = c.opt;
  json stamp = previous.is_null() ? json::object() : previous;
  stamp["schema"] = 1;
  stamp["sitting"] = c.sitting;
  stamp["host"] = host_name();
  stamp["machine"] = opt.machine.name;
  stamp["kernel"] = host_kernel();
  stamp["cpu_model"] = opt.machine.cpu_model;
  stamp["epoch"] = opt.machine.epoch;
  const CpuIdentity& cpu = opt.machine.cpu;
  stamp["cpu"] = {{"vendor", cpu.vendor},
                  {"family", cpu.family},
                  {"model", cpu.model},
                  {"stepping", cpu.stepping},
                  {"features", cpu.features}};
  if (opt.matrix.pairing == "rounds") {
    stamp["pairing"] = to_json(pairing_stamp(opt.matrix.rounds, c.pairing_seed));
  }
  stamp["method"] = {{"version", method_for(opt.matrix.pairing)}, {"summary", method_summary_for(opt.matrix.pairing)}};
  stamp["binaries"] = binaries_json(c);
  stamp["installs"] = installs_json(c.installed);
  stamp["lab_build"] = {{"compiler", lab_compiler()}, {"flags", lab_build_flags()}};
  stamp["git"] = git_stamp(opt.source_dir);
  stamp["sysctls"] = host_latency_sysctls();
  stamp["provenance"] = host_provenance(opt.machine, opt.host_sources);
  stamp["online_cores"] = format_core_list(host_online_cores());
  stamp["machine_notes"] = opt.machine.notes;
  if (!opt.machine.coordinator)
    stamp["machine_notes"].push_back("no coordinator core: the pool's front door shares the first server core");
  if (previous.is_null()) stamp["start"] = utc_now_iso();
  stamp["resumed"] = previous.is_null() ? json::array() : previous.value("resumed", json::array());
  if (!previous.is_null()) stamp["resumed"].push_back(utc_now_iso());
  stamp["end"] = nullptr;
  stamp["machine_source"] = opt.machine.source_name;
  stamp["machine_file"] = opt.machine.source_text;
  stamp["matrix_source"] = opt.matrix.source_name;
  stamp["matrix_file"] = opt.matrix.source_text;
  stamp["overrides"] = overrides_json(opt);
  stamp["effective"] = effective_settings(c);
  const auto& vt = opt.machine.vma_internal_thread_core;
  stamp["vma_internal_thread"] = vt ? json{{"core", *vt},
                                           {"env", "VMA_INTERNAL_THREAD_AFFINITY=" + std::to_string(*vt)},
                                           {"reserved", format_core_list(opt.machine.reserved)},
                                           {"applies_to", {"vma", "socketxtreme"}}}
                                    : json(nullptr);
  stamp["command_line"] = opt.command_line;
  json flv = json::object();
  for (const auto& [n, f] : c.flavours) flv[n] = read_text_or_empty(f.source_name);
  stamp["flavour_files"] = flv;
  return stamp;
}

// The part of sitting.json every cell's stamp repeats.
json cell_sitting_stamp(const Setup& c, const json& stamp) {
  return {{"sitting", c.sitting},          {"machine", c.opt.machine.name},
          {"epoch", c.opt.machine.epoch},  {"git", stamp["git"]},
          {"binaries", stamp["binaries"]}, {"host", stamp["host"]},
          {"kernel", stamp["kernel"]},     {"host_warnings", stamp["provenance"]["warnings"]}};
}

// sitting.json as the sitting ends: when, how, and how many cells ended in each state (measured ones by verdict).
void end_stamp(json& stamp, const Stop& stop, const SittingResult& res) {
  stamp["end"] = utc_now_iso();
  stamp["interrupted"] = stop.interrupted;
  stamp["stopped"] = stop.reason;
  std::map<std::string, int> counts;
  for (const auto& o : res.cells) counts[o.state == CellState::measured ? o.verdict : to_string(o.state)]++;
  stamp["outcome"] = counts;
}

}  // namespace kite::lab::detail
