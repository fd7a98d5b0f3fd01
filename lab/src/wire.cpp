#include "kite/lab/wire.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "kite/lab/process.hpp"
#include "kite/lab/util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

std::string command_text(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

// `ip [-n NS] ARGS...`
std::vector<std::string> ip_argv(const std::string& ns, std::vector<std::string> args) {
  std::vector<std::string> argv = {"ip"};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void must(const std::vector<std::string>& argv) {
  CommandResult r = run_command(argv);
  if (r.code != 0)
    throw std::runtime_error("wire: '" + command_text(argv) + "' failed (" + std::to_string(r.code) +
                             "): " + trim(r.output));
}

bool netns_exists(const std::string& ns) { return !ns.empty() && fs::exists("/run/netns/" + ns); }

// `ip -j addr show dev IF` in a namespace ("" = ours): the interface's one
// object, or null when it is not there.
json link_json(const std::string& ns, const std::string& ifname) {
  CommandResult r = run_command(ip_argv(ns, {"-j", "addr", "show", "dev", ifname}));
  if (r.code != 0) return nullptr;
  try {
    // run_command mixes stderr in; the JSON array is the output's first '['.
    const auto at = r.output.find('[');
    if (at == std::string::npos) return nullptr;
    json j = json::parse(r.output.substr(at, r.output.rfind(']') - at + 1));
    return j.is_array() && !j.empty() ? j[0] : json(nullptr);
  } catch (const std::exception&) {
    return nullptr;
  }
}

bool link_up(const json& link) {
  const auto flags = link.value("flags", std::vector<std::string>{});
  return std::find(flags.begin(), flags.end(), "UP") != flags.end();
}

// The addresses an interface carries, link-local IPv6 left out (made again at link up).
std::vector<WireAddress> addresses_of(const json& link) {
  std::vector<WireAddress> out;
  for (const auto& a : link.value("addr_info", json::array())) {
    WireAddress w;
    w.family = a.value("family", "");
    w.local = a.value("local", "");
    w.prefix = a.value("prefixlen", 0);
    w.broadcast = a.value("broadcast", "");
    if (w.local.empty() || (w.family == "inet6" && a.value("scope", "") == "link")) continue;
    out.push_back(w);
  }
  return out;
}

json address_json(const WireAddress& a) {
  return {{"family", a.family}, {"local", a.local}, {"prefix", a.prefix}, {"broadcast", a.broadcast}};
}

std::string address_list(const std::vector<WireAddress>& v) {
  std::string out;
  for (const auto& a : v) out += (out.empty() ? "" : " ") + a.text();
  return out.empty() ? "no address" : out;
}

// Puts back every interface the state records, then deletes its namespaces
// when nothing failed (a namespace deleted with a veth inside destroys it).
WireRestore put_back(const WireState& s) {
  WireRestore r;
  r.found = true;
  r.owner = "pid " + std::to_string(s.owner) + ", sitting " + s.sitting;
  const std::string self = std::to_string(getpid());
  for (const auto& i : s.interfaces) {
    json here = link_json("", i.name);
    if (here.is_null()) {
      if (!netns_exists(i.netns) || link_json(i.netns, i.name).is_null()) {
        r.failed.push_back(i.name + ": in neither this namespace nor " + i.netns);
        continue;
      }
      CommandResult m = run_command(ip_argv(i.netns, {"link", "set", "dev", i.name, "netns", self}));
      here = link_json("", i.name);
      if (m.code != 0 || here.is_null()) {
        r.failed.push_back(i.name + ": cannot move it back from " + i.netns + ": " + trim(m.output));
        continue;
      }
    }
    const std::vector<WireAddress> now = addresses_of(here);
    bool ok = true;
    for (const auto& a : i.addresses) {
      if (std::any_of(now.begin(), now.end(), [&](const WireAddress& n) { return n.text() == a.text(); })) continue;
      std::vector<std::string> add = {"ip", "addr", "add", a.text()};
      if (!a.broadcast.empty()) add.insert(add.end(), {"broadcast", a.broadcast});
      add.insert(add.end(), {"dev", i.name});
      CommandResult c = run_command(add);
      if (c.code != 0) {
        r.failed.push_back(i.name + ": cannot give back " + a.text() + ": " + trim(c.output));
        ok = false;
      }
    }
    CommandResult l = run_command({"ip", "link", "set", "dev", i.name, i.was_up ? "up" : "down"});
    if (l.code != 0) {
      r.failed.push_back(i.name + ": cannot set its link " + (i.was_up ? "up" : "down") + ": " + trim(l.output));
      ok = false;
    }
    if (ok) r.done.push_back(i.name + " back with " + address_list(i.addresses) + ", " + (i.was_up ? "up" : "down"));
  }
  if (r.failed.empty())
    for (const auto& ns : {s.server_ns, s.client_ns})
      if (netns_exists(ns)) run_command({"ip", "netns", "del", ns});
  return r;
}

}  // namespace

json WireState::to_json() const {
  json ifs = json::array();
  for (const auto& i : interfaces) {
    json addrs = json::array();
    for (const auto& a : i.addresses) addrs.push_back(address_json(a));
    ifs.push_back({{"name", i.name},
                   {"pair", i.pair},
                   {"role", i.role},
                   {"netns", i.netns},
                   {"address", i.address},
                   {"was_up", i.was_up},
                   {"addresses", addrs},
                   {"offloads", i.offloads}});
  }
  return {{"owner", owner},         {"owner_start", owner_start}, {"sitting", sitting}, {"moved_at", moved_at},
          {"server_ns", server_ns}, {"client_ns", client_ns},     {"interfaces", ifs}};
}

WireState WireState::from_json(const json& j) {
  WireState s;
  try {
    s.owner = j.at("owner").get<pid_t>();
    s.owner_start = j.at("owner_start").get<std::string>();
    s.sitting = j.value("sitting", "");
    s.moved_at = j.value("moved_at", "");
    s.server_ns = j.at("server_ns").get<std::string>();
    s.client_ns = j.at("client_ns").get<std::string>();
    for (const auto& x : j.at("interfaces")) {
      WireInterface i;
      i.name = x.at("name").get<std::string>();
      i.pair = x.value("pair", "");
      i.role = x.value("role", "");
      i.netns = x.at("netns").get<std::string>();
      i.address = x.value("address", "");
      i.was_up = x.value("was_up", false);
      i.offloads = x.value("offloads", "");
      for (const auto& a : x.value("addresses", json::array()))
        i.addresses.push_back(
            {a.value("family", ""), a.value("local", ""), a.value("prefix", 0), a.value("broadcast", "")});
      s.interfaces.push_back(i);
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not a wire state file: ") + e.what());
  }
  return s;
}

std::string wire_state_path(const std::string& results_dir) { return results_dir + "/wire-state.json"; }

std::string process_start_time(pid_t pid) {
  const std::string stat = read_text_or_empty("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  // Fields after the command: state is field 3, starttime field 22.
  std::string rest = stat.substr(close + 2), field;
  int n = 3;
  for (std::size_t at = 0; at <= rest.size(); ++at) {
    if (at == rest.size() || rest[at] == ' ') {
      if (n == 22) return field;
      field.clear();
      ++n;
    } else {
      field += rest[at];
    }
  }
  return "";
}

json WireRestore::to_json() const {
  return {{"found", found}, {"held", held}, {"owner", owner}, {"done", done}, {"failed", failed}};
}

WireRestore restore_wire(const std::string& state_file) {
  WireRestore r;
  const std::string text = read_text_or_empty(state_file);
  if (text.empty()) return r;
  r.found = true;
  WireState s;
  try {
    s = WireState::from_json(json::parse(text));
  } catch (const std::exception& e) {
    r.failed.push_back(state_file + ": " + e.what());
    return r;
  }
  if (s.owner > 0 && process_start_time(s.owner) == s.owner_start && !s.owner_start.empty()) {
    r.held = true;
    r.owner = "pid " + std::to_string(s.owner) + ", sitting " + s.sitting;
    return r;
  }
  r = put_back(s);
  if (r.failed.empty()) fs::remove(state_file);
  return r;
}

WirePath::WirePath(const Machine& m, const std::string& tag, std::string state_file, std::string sitting_dir)
    : machine_(m), state_file_(std::move(state_file)) {
  state_.owner = getpid();
  state_.owner_start = process_start_time(getpid());
  state_.sitting = std::move(sitting_dir);
  state_.server_ns = "kite-" + tag + "-srv";
  state_.client_ns = "kite-" + tag + "-cli";
}

WirePath::~WirePath() { down(); }

void WirePath::up() {
  // What each interface has before anything moves: written down first, so
  // that whatever happens next can be put back.
  for (const auto& p : machine_.nics)
    for (const bool server : {true, false}) {
      WireInterface i;
      i.name = server ? p.server_if : p.client_if;
      i.pair = p.name;
      i.role = server ? "server" : "client";
      i.netns = server ? state_.server_ns : state_.client_ns;
      i.address = (server ? p.server_addr : p.client_addr) + "/" + std::to_string(p.prefix);
      json link = link_json("", i.name);
      if (link.is_null())
        throw std::runtime_error("wire: interface " + i.name + " (pair " + p.name + ", " + i.role +
                                 ") is not in the lab's network namespace");
      i.was_up = link_up(link);
      i.addresses = addresses_of(link);
      state_.interfaces.push_back(i);
    }
  state_.moved_at = utc_now_iso();
  fs::create_directories(fs::path(state_file_).parent_path());
  write_text_atomic(state_file_, state_.to_json().dump(1));
  up_ = true;
  try {
    for (const auto& ns : {state_.server_ns, state_.client_ns}) {
      must({"ip", "netns", "add", ns});
      must(ip_argv(ns, {"link", "set", "lo", "up"}));
    }
    for (auto& i : state_.interfaces) {
      must({"ip", "link", "set", "dev", i.name, "netns", i.netns});
      must(ip_argv(i.netns, {"addr", "add", i.address, "dev", i.name}));
      must(ip_argv(i.netns, {"link", "set", "dev", i.name, "up"}));
    }
    // A NIC renegotiates its link after the move; a veth is up once both ends are.
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& i : state_.interfaces) {
      while (true) {
        json l = link_json(i.netns, i.name);
        if (!l.is_null() && l.value("operstate", "") == "UP") break;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10))
          throw std::runtime_error("wire: " + i.name + " in " + i.netns + " has no carrier after 10 s (operstate " +
                                   (l.is_null() ? std::string("unknown") : l.value("operstate", "unknown")) +
                                   "): is the pair cabled?");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    carrier_wait_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& i : state_.interfaces) {
      auto f = interface_offloads(i.netns, i.name, false);
      i.offloads = f ? offloads_text(i.name, *f) : i.name + ": unreadable";
    }
    write_text_atomic(state_file_, state_.to_json().dump(1));
  } catch (...) {
    down();
    throw;
  }
}

void WirePath::down() {
  if (!up_) return;
  up_ = false;
  restored_ = put_back(state_);
  if (restored_.failed.empty()) fs::remove(state_file_);
}

std::string WirePath::offloads_of(const std::string& pair) const {
  std::string out;
  for (const auto& i : state_.interfaces)
    if (i.pair == pair) out += (out.empty() ? "" : ", ") + i.offloads;
  return out;
}

json WirePath::record() const {
  json pairs = json::array();
  for (const auto& p : machine_.nics) {
    json pj = {{"name", p.name}, {"transports", p.transports}, {"prefix", p.prefix}};
    for (const auto& i : state_.interfaces) {
      if (i.pair != p.name) continue;
      json before = json::array();
      for (const auto& a : i.addresses) before.push_back(a.text());
      pj[i.role] = {{"interface", i.name},    {"netns", i.netns},           {"address", i.address},
                    {"offloads", i.offloads}, {"addresses_before", before}, {"was_up", i.was_up}};
    }
    pairs.push_back(pj);
  }
  return {{"path", "nic"},
          {"server_ns", state_.server_ns},
          {"client_ns", state_.client_ns},
          {"state_file", state_file_},
          {"moved_at", state_.moved_at},
          {"carrier_wait_s", carrier_wait_s_},
          {"pairs", pairs}};
}

}  // namespace kite::lab
