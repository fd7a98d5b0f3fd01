#include "kite/lab/config.hpp"

#include <fnmatch.h>

// g++ 12 reports a false -Wrestrict inside std::string concatenation at -O3
// (GCC bug 105329); error text is built here at set-up only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <algorithm>
#include <set>
#include <sstream>

#include "kite/bench/acceptor_file.hpp"
#include "kite/util/toml_reader.hpp"

#include "kite/lab/util.hpp"

namespace kite::lab {

const std::vector<std::string> kModels = {"single", "mono", "pool", "shard"};

const std::vector<std::string> kDispatchFeatures = {"sse4_2",   "popcnt",   "bmi2",       "avx2",        "avx512f",
                                                    "avx512bw", "avx512vl", "avx512vbmi", "avx512_vbmi2"};

std::string CpuIdentity::text() const {
  std::string t = (vendor.empty() ? std::string("unknown vendor") : vendor) + " family " + std::to_string(family) +
                  " model " + std::to_string(model) + " stepping " + std::to_string(stepping) + ";";
  for (const auto& f : features) t += " " + f;
  if (features.empty()) t += " none of the dispatch features";
  return t;
}

CpuIdentity host_cpu_identity() {
  CpuIdentity c;
  std::istringstream in(read_text_or_empty("/proc/cpuinfo"));
  std::string line, flags;
  auto value = [](const std::string& l) { return trim(l.substr(l.find(':') + 1)); };
  auto number = [&](const std::string& l) {
    try {
      return std::stoi(value(l));
    } catch (const std::exception&) {
      return -1;
    }
  };
  // The first processor's block: every core of a host is the same CPU.
  while (std::getline(in, line)) {
    if (line.empty() && !c.vendor.empty()) break;
    if (line.find(':') == std::string::npos) continue;
    std::string key = trim(line.substr(0, line.find(':')));
    if (key == "vendor_id")
      c.vendor = value(line);
    else if (key == "cpu family")
      c.family = number(line);
    else if (key == "model")
      c.model = number(line);
    else if (key == "stepping")
      c.stepping = number(line);
    else if (key == "flags")
      flags = " " + value(line) + " ";
  }
  for (const auto& f : kDispatchFeatures)
    if (flags.find(" " + f + " ") != std::string::npos) c.features.push_back(f);
  return c;
}

std::string epoch_of(const std::string& cpu_model, const CpuIdentity& cpu) {
  return sha256_hex(cpu_model + "\n" + cpu.text()).substr(0, 12);
}
const std::vector<std::string> kLoops = {"closed", "open"};

const std::vector<TransportInfo>& known_transports() {
  // What each transport can do, whatever the flavour: the source of the
  // nopool/noshard markers. VMA hands every connection on a port to the first
  // listener (no SO_REUSEPORT spread); the native vendor APIs have no
  // cross-thread handover of a connection.
  static const std::vector<TransportInfo> t = {
      {"kernel", true, true, false},         {"tls", true, true, false}, {"uring", true, true, false},
      {"onload", true, true, true},          {"vma", true, false, true}, {"tcpdirect", false, false, false},
      {"socketxtreme", false, false, false},
  };
  return t;
}

const TransportInfo* find_transport(const std::string& name) {
  for (const auto& t : known_transports())
    if (t.name == name) return &t;
  return nullptr;
}

CoreSet parse_core_list(const std::string& text) {
  CoreSet out;
  std::string s = trim(text);
  if (s.empty()) return out;
  std::istringstream in(s);
  std::string part;
  auto num = [](const std::string& p) {
    std::string t = trim(p);
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw std::invalid_argument("'" + p + "' is not a core number");
    return std::stoi(t);
  };
  while (std::getline(in, part, ',')) {
    auto dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(num(part));
    } else {
      int lo = num(part.substr(0, dash)), hi = num(part.substr(dash + 1));
      if (hi < lo) throw std::invalid_argument("range '" + part + "' runs backwards");
      for (int c = lo; c <= hi; ++c) out.push_back(c);
    }
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw std::invalid_argument("a core is listed twice in '" + text + "'");
  return out;
}

std::string format_core_list(const CoreSet& cores) {
  std::string out;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cores[i]);
    if (j > i) out += "-" + std::to_string(cores[j]);
    i = j + 1;
  }
  return out;
}

int Machine::busy_poll_for(const std::string& transport, const std::string& model) const {
  if (transport != "kernel") return 0;
  auto it = kernel_busy_poll_by_model.find(model);
  return it == kernel_busy_poll_by_model.end() ? kernel_busy_poll_usecs : it->second;
}

std::string Machine::busy_poll_source(const std::string& transport, const std::string& model) const {
  if (transport != "kernel") return "not kernel TCP";
  return kernel_busy_poll_by_model.count(model) ? "transports.kernel.busy_poll_by_model." + model
                                                : "transports.kernel.busy_poll_usecs";
}

bool Machine::has_transport(const std::string& t) const {
  // tls is kernel TCP with OpenSSL in user space: wherever kernel is.
  if (t == "tls" && has_transport("kernel")) return true;
  return std::find(transports.begin(), transports.end(), t) != transports.end();
}

const NicPair* Machine::nic_for(const std::string& transport) const {
  auto listing = [&](const std::string& t) -> const NicPair* {
    for (const auto& p : nics)
      if (p.transports.empty() || std::find(p.transports.begin(), p.transports.end(), t) != p.transports.end())
        return &p;
    return nullptr;
  };
  if (const NicPair* p = listing(transport)) return p;
  if (transport == "tls")
    if (const NicPair* p = listing("kernel")) return p;
  return nics.empty() ? nullptr : &nics.front();
}

std::map<std::string, std::string> Machine::launcher_env(const std::string& transport) const {
  if (transport == "onload") return onload_env;
  if (transport != "vma" && transport != "socketxtreme") return {};
  std::map<std::string, std::string> env = vma_env;
  // A core list (taskset -c form), which libvma tells from a 0x bitmask.
  if (vma_internal_thread_core) env["VMA_INTERNAL_THREAD_AFFINITY"] = std::to_string(*vma_internal_thread_core);
  return env;
}

CoreSet Machine::measured_cores() const {
  CoreSet out = server;
  out.insert(out.end(), client.begin(), client.end());
  if (coordinator) out.push_back(*coordinator);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

using util::TomlReader;

// [transports.onload.env]-style tables: names to strings (integers written out).
std::map<std::string, std::string> read_env(const TomlReader& r, const toml::table& t, const char* k,
                                            const std::string& path) {
  std::map<std::string, std::string> out;
  const toml::table* e = r.table(t, k, path);
  if (!e) return out;
  for (const auto& [name, v] : *e) {
    if (v.is_string())
      out[std::string(name.str())] = std::string(*v.as_string());
    else if (v.is_integer())
      out[std::string(name.str())] = std::to_string(v.as_integer()->get());
    else
      r.wrong_type(v, path + k + "." + std::string(name.str()), "a string or an integer");
  }
  return out;
}

std::optional<CoreSet> read_cores(const TomlReader& r, const toml::table& t, const char* k, const std::string& path) {
  const toml::node* n = t.get(k);
  if (!n) return std::nullopt;
  if (n->is_string()) {
    try {
      return parse_core_list(std::string(*n->as_string()));
    } catch (const std::invalid_argument& e) {
      r.fail(*n, path + k, e.what());
    }
  }
  if (n->is_integer()) return CoreSet{static_cast<int>(n->as_integer()->get())};
  if (n->is_array()) {
    CoreSet out;
    for (const auto& e : *n->as_array()) {
      if (!e.is_integer()) r.fail(e, path + k, "core arrays hold integers only");
      out.push_back(static_cast<int>(e.as_integer()->get()));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  r.wrong_type(*n, path + k, "a core list (\"9-12,14\" or [9, 10])");
}

void check_one_of(const TomlReader& r, const std::string& key, const std::string& v,
                  const std::vector<std::string>& allowed, const char* what) {
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  r.fail(key, "unknown " + std::string(what) + " '" + v + "' (known: " + list + ")");
}

std::vector<std::string> transport_names() {
  std::vector<std::string> out;
  for (const auto& t : known_transports()) out.push_back(t.name);
  return out;
}

// An IPv4 address as a number (valid_ipv4 first).
std::uint32_t ipv4_value(const std::string& s) {
  std::uint32_t v = 0;
  std::istringstream in(s);
  std::string p;
  while (std::getline(in, p, '.')) v = (v << 8) | static_cast<std::uint32_t>(std::stoi(p));
  return v;
}

bool valid_ipv4(const std::string& s) {
  int parts = 0;
  std::istringstream in(s);
  std::string p;
  while (std::getline(in, p, '.')) {
    if (p.empty() || p.size() > 3 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    if (std::stoi(p) > 255) return false;
    ++parts;
  }
  return parts == 4 && s.back() != '.';
}

// `cores` of a service: a role of [cores] ("client", "housekeeping",
// "reserved") or a core list; never a server or the coordinator core.
CoreSet service_cores(const TomlReader& r, const toml::table& t, const std::string& p, const Machine& m,
                      std::string& from) {
  const toml::node* n = t.get("cores");
  if (!n) r.fail(p + "cores", "missing: where the service runs (\"client\", \"housekeeping\", \"reserved\" or cores)");
  CoreSet cores;
  from = n->is_string() ? std::string(*n->as_string()) : "";
  if (from == "client" || from == "housekeeping" || from == "reserved") {
    cores = from == "client" ? m.client : from == "housekeeping" ? m.housekeeping : m.reserved;
    if (cores.empty()) r.fail(p + "cores", "cores." + from + " is empty");
  } else {
    cores = read_cores(r, t, "cores", p).value_or(CoreSet{});
    from = format_core_list(cores);
    if (cores.empty()) r.fail(p + "cores", "empty");
  }
  for (int c : cores)
    if (std::find(m.server.begin(), m.server.end(), c) != m.server.end() || (m.coordinator && *m.coordinator == c))
      r.fail(p + "cores", "core " + std::to_string(c) +
                              " is a server or coordinator core: a service runs away from the server it would disturb");
  return cores;
}

// [services.<name>]: the programs a sitting starts beside its servers.
void read_services(const TomlReader& r, const toml::table& root, Machine& m) {
  const toml::table* sv = r.table(root, "services", "");
  if (!sv) return;
  for (const auto& [k, v] : *sv) {
    const std::string name(k.str());
    check_one_of(r, "services." + name, name, kServices, "service");
    const std::string p = "services." + name + ".";
    const toml::table* t = r.table(*sv, name.c_str(), "services.");
    r.only(*t, p, {"cores", "fsync"});
    Service s;
    s.name = name;
    s.cores = service_cores(r, *t, p, m, s.cores_from);
    s.fsync = r.boolean(*t, "fsync", p).value_or(true);
    m.services[name] = s;
  }
}

}  // namespace

namespace {

// [cpu]: the identity that names the hardware epoch (the host's when absent).
void read_cpu(const TomlReader& r, const toml::table& root, Machine& m) {
  if (const toml::table* cpu = r.table(root, "cpu", "")) {
    r.only(*cpu, "cpu.", {"vendor", "family", "model", "stepping", "features"});
    CpuIdentity c;
    c.vendor = r.string(*cpu, "vendor", "cpu.").value_or("");
    c.family = static_cast<int>(r.integer(*cpu, "family", "cpu.").value_or(-1));
    c.model = static_cast<int>(r.integer(*cpu, "model", "cpu.").value_or(-1));
    c.stepping = static_cast<int>(r.integer(*cpu, "stepping", "cpu.").value_or(-1));
    if (c.vendor.empty() || c.family < 0 || c.model < 0 || c.stepping < 0)
      r.fail("cpu", "vendor, family, model and stepping are all required (as /proc/cpuinfo gives them)");
    for (const auto& f : r.strings(*cpu, "features", "cpu.").value_or(std::vector<std::string>{})) {
      check_one_of(r, "cpu.features", f, kDispatchFeatures, "dispatch feature");
      c.features.push_back(f);
    }
    // One order, so that a file listing the same features another way is the same epoch.
    std::vector<std::string> ordered;
    for (const auto& f : kDispatchFeatures)
      if (std::find(c.features.begin(), c.features.end(), f) != c.features.end()) ordered.push_back(f);
    c.features = ordered;
    m.cpu = c;
  }
}

// [cores]: each role's cores, no core in two roles, every one online on a local host.
void read_machine_cores(const TomlReader& r, const toml::table& root, Machine& m) {
  const toml::table* cores = r.table(root, "cores", "");
  if (!cores) r.fail("cores", "missing [cores] table (server and client cores at least)");
  r.only(*cores, "cores.", {"housekeeping", "coordinator", "server", "client", "reserved"});
  m.housekeeping = read_cores(r, *cores, "housekeeping", "cores.").value_or(CoreSet{});
  m.server = read_cores(r, *cores, "server", "cores.").value_or(CoreSet{});
  m.client = read_cores(r, *cores, "client", "cores.").value_or(CoreSet{});
  m.reserved = read_cores(r, *cores, "reserved", "cores.").value_or(CoreSet{});
  if (auto c = read_cores(r, *cores, "coordinator", "cores.")) {
    if (c->size() > 1) r.fail("cores.coordinator", "one core only");
    if (!c->empty()) m.coordinator = c->front();
  }
  if (m.server.empty()) r.fail("cores.server", "empty: a sitting needs at least one server core");
  if (m.client.empty()) r.fail("cores.client", "empty: a sitting needs at least one client core");
  std::map<int, std::string> role_of;
  auto claim = [&](const CoreSet& set, const std::string& role) {
    for (int c : set) {
      if (c < 0) r.fail("cores." + role, "negative core " + std::to_string(c));
      auto [it, fresh] = role_of.emplace(c, role);
      if (!fresh)
        r.fail("cores." + role, "core " + std::to_string(c) + " is in two roles (" + it->second + " and " + role + ")");
    }
  };
  claim(m.housekeeping, "housekeeping");
  if (m.coordinator) claim({*m.coordinator}, "coordinator");
  claim(m.server, "server");
  claim(m.client, "client");
  claim(m.reserved, "reserved");
  if (m.local) {
    CoreSet online = host_online_cores();
    for (const auto& [c, role] : role_of)
      if (std::find(online.begin(), online.end(), c) == online.end())
        r.fail("cores." + role, role + " core " + std::to_string(c) + " does not exist on this host (online cores: " +
                                    format_core_list(online) + "; the file says local = true)");
  }
  if (m.housekeeping.empty())
    m.notes.push_back("no housekeeping core: the lab, interrupts and every other process share the measured cores");
}

// One [[network.nic]] pair, checked against the pairs before it.
void read_nic(const TomlReader& r, const toml::table& t, int i, Machine& m) {
  const std::string p = "network.nic[" + std::to_string(i) + "].";
  r.only(t, p, {"name", "server_if", "client_if", "server_addr", "client_addr", "prefix", "transports"});
  NicPair n;
  n.name = r.string(t, "name", p).value_or("pair" + std::to_string(i + 1));
  n.server_if = r.string(t, "server_if", p).value_or("");
  n.client_if = r.string(t, "client_if", p).value_or("");
  n.server_addr = r.string(t, "server_addr", p).value_or("");
  n.client_addr = r.string(t, "client_addr", p).value_or("");
  n.transports = r.strings(t, "transports", p).value_or(std::vector<std::string>{});
  if (n.server_if.empty() || n.client_if.empty()) r.fail(p + "server_if", "both interfaces are required");
  for (const auto* a : {&n.server_addr, &n.client_addr})
    if (!valid_ipv4(*a)) r.fail(p + "server_addr", "not an IPv4 address: '" + *a + "'");
  n.prefix = static_cast<int>(r.integer(t, "prefix", p).value_or(24));
  if (n.prefix < 8 || n.prefix > 30) r.fail(p + "prefix", "must be 8..30 (both addresses in one subnet)");
  // The wire path gives each end its address in its own namespace: no route but the subnet's.
  if (ipv4_value(n.server_addr) >> (32 - n.prefix) != ipv4_value(n.client_addr) >> (32 - n.prefix))
    r.fail(p + "client_addr", n.client_addr + " is not in " + n.server_addr + "/" + std::to_string(n.prefix) +
                                  "'s subnet (the two ends of a pair share one)");
  if (n.server_if == n.client_if) r.fail(p + "client_if", "the two ends of a pair are two interfaces");
  for (const auto& other : m.nics)
    for (const auto* iface : {&n.server_if, &n.client_if})
      if (*iface == other.server_if || *iface == other.client_if)
        r.fail(p + "server_if", "interface '" + *iface + "' is in two pairs (" + other.name + " and " + n.name + ")");
  for (const auto& tr : n.transports) check_one_of(r, p + "transports", tr, transport_names(), "transport");
  m.nics.push_back(n);
}

// [network]: the path between client and server, and its addresses.
void read_network(const TomlReader& r, const toml::table& root, Machine& m) {
  if (const toml::table* net = r.table(root, "network", "")) {
    r.only(*net, "network.", {"path", "server_addr", "client_addr", "prefix", "nic"});
    m.network = r.string(*net, "path", "network.").value_or("loopback");
    check_one_of(r, "network.path", m.network, {"loopback", "netns", "nic"}, "network path");
    m.netns_server_addr = r.string(*net, "server_addr", "network.").value_or(m.netns_server_addr);
    m.netns_client_addr = r.string(*net, "client_addr", "network.").value_or(m.netns_client_addr);
    m.netns_prefix = static_cast<int>(r.integer(*net, "prefix", "network.").value_or(30));
    if (m.network == "netns") {
      // Addresses that exist only inside the lab's namespaces: never route anywhere real.
      for (const auto* a : {&m.netns_server_addr, &m.netns_client_addr})
        if (!valid_ipv4(*a) || a->rfind("10.77.", 0) != 0)
          r.fail("network", "netns addresses must be IPv4 in 10.77.0.0/16, found '" + *a + "'");
      if (m.netns_prefix < 24 || m.netns_prefix > 30) r.fail("network.prefix", "must be 24..30");
    }
    if (const toml::node* nics = net->get("nic")) {
      if (!nics->is_array_of_tables()) r.fail("network.nic", "must be an array of tables ([[network.nic]])");
      int i = 0;
      for (const auto& e : *nics->as_array()) read_nic(r, *e.as_table(), i++, m);
    }
    if (m.network == "nic" && m.nics.empty())
      r.fail("network.nic", "path = \"nic\" needs at least one [[network.nic]]");
  }
}

// [transports.kernel]: busy polling, for every model or by model.
void read_kernel_transport(const TomlReader& r, const toml::table& tr, Machine& m) {
  if (const toml::table* k = r.table(tr, "kernel", "transports.")) {
    r.only(*k, "transports.kernel.", {"busy_poll_usecs", "busy_poll_by_model"});
    m.kernel_busy_poll_usecs = static_cast<int>(r.integer(*k, "busy_poll_usecs", "transports.kernel.").value_or(0));
    if (m.kernel_busy_poll_usecs < 0) r.fail("transports.kernel.busy_poll_usecs", "must be >= 0");
    if (const toml::table* bm = r.table(*k, "busy_poll_by_model", "transports.kernel.")) {
      const std::string p = "transports.kernel.busy_poll_by_model.";
      r.only(*bm, p, {"single", "mono", "pool", "shard"});
      for (const auto& model : kModels)
        if (auto v = r.integer(*bm, model.c_str(), p)) {
          if (*v < 0) r.fail(p + model, "must be >= 0 (microseconds; 0: no busy polling)");
          m.kernel_busy_poll_by_model[model] = static_cast<int>(*v);
        }
    }
  }
}

// [transports.vma]: its environment and where libvma's own thread runs.
void read_vma_transport(const TomlReader& r, const toml::table& tr, Machine& m) {
  if (const toml::table* v = r.table(tr, "vma", "transports.")) {
    r.only(*v, "transports.vma.", {"env", "internal_thread_core"});
    m.vma_env = read_env(r, *v, "env", "transports.vma.");
    if (auto c = r.integer(*v, "internal_thread_core", "transports.vma.")) {
      const std::string key = "transports.vma.internal_thread_core";
      if (std::find(m.reserved.begin(), m.reserved.end(), static_cast<int>(*c)) == m.reserved.end())
        r.fail(key, "core " + std::to_string(*c) + " is not one of cores.reserved (" + format_core_list(m.reserved) +
                        "): libvma's thread is kept off the measured cores");
      if (m.vma_env.count("VMA_INTERNAL_THREAD_AFFINITY"))
        r.fail(key, "and env.VMA_INTERNAL_THREAD_AFFINITY both place libvma's thread: give one");
      m.vma_internal_thread_core = static_cast<int>(*c);
    }
  }
}

// [transports]: which are available here and their settings.
void read_transports(const TomlReader& r, const toml::table& root, Machine& m) {
  const toml::table* tr = r.table(root, "transports", "");
  m.transports = {"kernel"};
  if (tr) {
    r.only(*tr, "transports.", {"available", "kernel", "uring", "onload", "vma", "tcpdirect", "socketxtreme"});
    if (auto a = r.strings(*tr, "available", "transports.")) {
      for (const auto& t : *a) check_one_of(r, "transports.available", t, transport_names(), "transport");
      m.transports = *a;
    }
    read_kernel_transport(r, *tr, m);
    if (const toml::table* u = r.table(*tr, "uring", "transports.")) {
      r.only(*u, "transports.uring.", {"sqpoll"});
      m.uring_sqpoll = r.boolean(*u, "sqpoll", "transports.uring.").value_or(false);
    }
    if (const toml::table* o = r.table(*tr, "onload", "transports.")) {
      r.only(*o, "transports.onload.", {"env", "profile"});
      m.onload_env = read_env(r, *o, "env", "transports.onload.");
      m.onload_profile = r.string(*o, "profile", "transports.onload.").value_or("");
    }
    read_vma_transport(r, *tr, m);
    for (const char* native : {"tcpdirect", "socketxtreme"})
      if (const toml::table* v = r.table(*tr, native, "transports."))
        r.only(*v, std::string("transports.") + native + ".", {});
  }
}

}  // namespace

Machine parse_machine(const std::string& text, const std::string& name) {
  const TomlReader r(name);
  toml::table root = r.parse(text);
  r.only(root, "",
         {"name", "cpu_model", "cpu", "local", "kernel", "notes", "cores", "network", "transports", "services"});
  Machine m;
  m.source_text = text;
  m.source_name = name;
  m.name = r.string(root, "name", "").value_or("");
  if (m.name.empty()) r.fail("name", "missing (every machine file names its host)");
  m.local = r.boolean(root, "local", "").value_or(false);
  m.cpu_model = r.string(root, "cpu_model", "").value_or("");
  if (m.cpu_model.empty()) {
    if (!m.local) r.fail("cpu_model", "missing (required unless local = true, where the host's is read)");
    m.cpu_model = host_cpu_model();
  }
  m.kernel = r.string(root, "kernel", "").value_or(m.local ? host_kernel() : "");
  m.notes = r.strings(root, "notes", "").value_or(std::vector<std::string>{});
  m.cpu = host_cpu_identity();
  read_cpu(r, root, m);
  m.epoch = epoch_of(m.cpu_model, m.cpu);

  read_machine_cores(r, root, m);
  read_network(r, root, m);
  read_transports(r, root, m);
  read_services(r, root, m);
  return m;
}

Machine load_machine(const std::string& path) {
  std::string text;
  try {
    text = read_text(path);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  return parse_machine(text, path);
}

Machine derive_local_machine() {
  CoreSet online = host_online_cores();
  std::ostringstream t;
  t << "# Derived by bench-run for this host at " << utc_now_iso() << ".\n";
  t << "name = \"" << host_name() << "\"\n";
  t << "cpu_model = \"" << host_cpu_model() << "\"\n";
  t << "kernel = \"" << host_kernel() << "\"\n";
  t << "local = true\n\n[cores]\n";
  std::size_t n = online.size();
  auto pick = [&](std::size_t from, std::size_t count) {
    CoreSet s;
    for (std::size_t i = from; i < from + count && i < n; ++i) s.push_back(online[i]);
    return format_core_list(s);
  };
  if (n >= 4) {
    // Core 0 keeps the lab, interrupts and everything else; a coordinator
    // core for the pool's front door; the rest split between server and client.
    std::size_t rest = n - 2, servers = rest / 2;
    t << "housekeeping = \"" << pick(0, 1) << "\"\ncoordinator = " << online[1] << "\n";
    t << "server = \"" << pick(2, servers) << "\"\nclient = \"" << pick(2 + servers, rest - servers) << "\"\n";
  } else if (n >= 2) {
    t << "# Too few cores for a housekeeping or coordinator core: the pool's\n"
         "# front door shares the first server core.\n";
    t << "server = \"" << online[0] << "\"\nclient = \"" << pick(1, n - 1) << "\"\n";
  } else {
    throw ConfigError("local: this host has " + std::to_string(n) +
                      " online core; a sitting needs separate server and client cores");
  }
  t << "\n[network]\npath = \"loopback\"\n\n[transports]\navailable = [\"kernel\"";
  if (host_has_io_uring()) t << ", \"uring\"";
  // Vendor stacks only where their launchers and libraries exist.
  if (!find_executable("onload", "").empty()) t << ", \"onload\"";
  if (!read_text_or_empty("/usr/lib/libvma.so").empty() || !read_text_or_empty("/usr/lib64/libvma.so").empty())
    t << ", \"vma\"";
  t << "]\n\n[transports.kernel]\nbusy_poll_usecs = 0\n";
  return parse_machine(t.str(), "local");
}

std::string machine_to_toml(const Machine& m) { return m.source_text; }

namespace {

// `pair_on` and `stores`, and the [rounds] reference they make valid: a
// flavour, or with pair_on = "store" one of the stores (the first by default).
void read_pair_on(const TomlReader& r, const toml::table& root, Matrix& m) {
  m.pair_on = r.string(root, "pair_on", "").value_or("flavour");
  check_one_of(r, "pair_on", m.pair_on, {"flavour", "store"}, "pair_on setting");
  m.stores = r.strings(root, "stores", "").value_or(std::vector<std::string>{});
  const toml::table* rounds = r.table(root, "rounds", "");
  const bool named = rounds && rounds->get("reference");
  if (m.pair_on == "flavour") {
    if (!m.stores.empty()) r.fail("stores", "only with pair_on = \"store\" (the members' stores)");
    if (std::find(m.flavours.begin(), m.flavours.end(), m.rounds.reference) == m.flavours.end() && named)
      r.fail("rounds.reference", "'" + m.rounds.reference + "' is not one of the matrix's flavours");
    return;
  }
  if (m.stores.size() < 2) r.fail("stores", "pair_on = \"store\" needs at least two stores to pair");
  for (const auto& st : m.stores) {
    check_one_of(r, "stores", st, kStoreSettings, "store");
    if (std::count(m.stores.begin(), m.stores.end(), st) > 1) r.fail("stores", "'" + st + "' twice");
  }
  if (const toml::table* s = r.table(root, "server", ""); s && s->get("store"))
    r.fail("server.store", "pair_on = \"store\" gives each member its store from `stores`: drop server.store");
  if (!named) m.rounds.reference = m.stores.front();
  if (std::find(m.stores.begin(), m.stores.end(), m.rounds.reference) == m.stores.end())
    r.fail("rounds.reference", "'" + m.rounds.reference + "' is not one of the matrix's stores (pair_on = \"store\")");
}

// The cells: flavours, transports (and the models each allows), models and loops.
void read_cell_dimensions(const TomlReader& r, const toml::table& root, Matrix& m) {
  auto need = [&](const char* k) {
    auto v = r.strings(root, k, "");
    if (!v || v->empty()) r.fail(k, "missing or empty");
    return *v;
  };
  m.flavours = need("flavours");
  for (const auto& f : m.flavours)
    if (f.empty() || !std::all_of(f.begin(), f.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        }))
      r.fail("flavours", "'" + f + "' is not a flavour name (lower case, digits, - and _)");
  m.transports = need("transports");
  for (const auto& t : m.transports) check_one_of(r, "transports", t, transport_names(), "transport");
  m.models = need("models");
  for (const auto& t : m.models) check_one_of(r, "models", t, kModels, "model");
  m.loops = need("loops");
  for (const auto& t : m.loops) check_one_of(r, "loops", t, kLoops, "loop");
  if (const toml::table* tm = r.table(root, "transport_models", "")) {
    for (const auto& [k, v] : *tm) {
      const std::string t(k.str());
      const std::string key = "transport_models." + t;
      if (std::find(m.transports.begin(), m.transports.end(), t) == m.transports.end())
        r.fail(key, "'" + t + "' is not one of the matrix's transports");
      auto models = r.strings(*tm, t.c_str(), "transport_models.");
      if (!models || models->empty()) r.fail(key, "missing or empty");
      for (const auto& model : *models) {
        check_one_of(r, key, model, kModels, "model");
        if (std::find(m.models.begin(), m.models.end(), model) == m.models.end())
          r.fail(key, "'" + model + "' is not one of the matrix's models");
      }
      m.transport_models[t] = *models;
    }
  }
}

// Which cells, and how each is run: idle strategy, installed binaries, runs, warm-up and duration.
void read_runs(const TomlReader& r, const toml::table& root, Matrix& m) {
  m.cells = r.strings(root, "cells", "").value_or(std::vector<std::string>{});
  if (std::string bad = check_cell_selection(m, m.cells); !bad.empty()) r.fail("cells", bad);
  m.idle = r.string(root, "idle", "").value_or("spin");
  check_one_of(r, "idle", m.idle, {"spin", "block"}, "idle strategy");
  m.installed = r.boolean(root, "installed", "").value_or(false);
  m.runs = static_cast<int>(r.integer(root, "runs", "").value_or(5));
  if (m.runs < 1 || m.runs > 100) r.fail("runs", "must be 1..100");
  m.warmup_s = r.number(root, "warmup_s", "").value_or(1.0);
  m.duration_s = r.number(root, "duration_s", "").value_or(5.0);
  if (m.warmup_s < 0) r.fail("warmup_s", "must be >= 0");
  if (m.duration_s <= 0) r.fail("duration_s", "must be > 0");
}

// [sessions] per model.
void read_sessions(const TomlReader& r, const toml::table& root, Matrix& m) {
  if (const toml::table* s = r.table(root, "sessions", "")) {
    r.only(*s, "sessions.", {"single", "mono", "pool", "shard"});
    for (const auto& model : kModels)
      if (auto v = r.integer(*s, model.c_str(), "sessions.")) {
        if (*v < 1 || *v > 4096) r.fail("sessions." + model, "must be 1..4096");
        m.sessions[model] = static_cast<int>(*v);
      }
    if (m.sessions["single"] != 1) r.fail("sessions.single", "the single model has exactly one session");
  }
}

// [open] and [closed]: the load of each loop.
void read_load(const TomlReader& r, const toml::table& root, Matrix& m) {
  if (const toml::table* o = r.table(root, "open", "")) {
    r.only(*o, "open.", {"rate", "max_in_flight"});
    m.rate = static_cast<int>(r.integer(*o, "rate", "open.").value_or(m.rate));
    m.max_in_flight = static_cast<int>(r.integer(*o, "max_in_flight", "open.").value_or(m.max_in_flight));
    if (m.rate < 1) r.fail("open.rate", "must be > 0 orders/s");
    if (m.max_in_flight < 1) r.fail("open.max_in_flight", "must be > 0");
  }
  if (const toml::table* c = r.table(root, "closed", "")) {
    r.only(*c, "closed.", {"think_us"});
    m.think_us = static_cast<int>(r.integer(*c, "think_us", "closed.").value_or(0));
    if (m.think_us < 0) r.fail("closed.think_us", "must be >= 0");
  }
}

// [server]: workers and the session store.
void read_server(const TomlReader& r, const toml::table& root, Matrix& m) {
  if (const toml::table* s = r.table(root, "server", "")) {
    r.only(*s, "server.", {"workers", "store"});
    if (const toml::node* w = s->get("workers")) {
      if (w->is_integer()) {
        m.workers = static_cast<int>(w->as_integer()->get());
        if (*m.workers < 1) r.fail(*w, "server.workers", "must be >= 1 or \"auto\"");
      } else if (!w->is_string() || std::string(*w->as_string()) != "auto") {
        r.wrong_type(*w, "server.workers", "an integer or \"auto\"");
      }
    }
    m.store = r.string(*s, "store", "server.").value_or("null");
    check_one_of(r, "server.store", m.store, kStoreSettings, "store");
  }
}

// [thresholds], [audit] and [cell]: how a cell is judged, audited and retried.
void read_judging(const TomlReader& r, const toml::table& root, Matrix& m) {
  if (const toml::table* t = r.table(root, "thresholds", "")) {
    r.only(*t, "thresholds.", {"cv_p50", "cv_p99", "rate_fraction", "response_over_service"});
    m.thresholds.cv_p50 = r.number(*t, "cv_p50", "thresholds.").value_or(m.thresholds.cv_p50);
    m.thresholds.cv_p99 = r.number(*t, "cv_p99", "thresholds.").value_or(m.thresholds.cv_p99);
    m.thresholds.rate_fraction = r.number(*t, "rate_fraction", "thresholds.").value_or(m.thresholds.rate_fraction);
    m.thresholds.response_over_service =
        r.number(*t, "response_over_service", "thresholds.").value_or(m.thresholds.response_over_service);
    if (m.thresholds.rate_fraction <= 0 || m.thresholds.rate_fraction > 1)
      r.fail("thresholds.rate_fraction", "must be in (0, 1]");
  }
  if (const toml::table* a = r.table(root, "audit", "")) {
    r.only(*a, "audit.", {"interval_s", "burn_fraction"});
    m.audit_interval_s = r.number(*a, "interval_s", "audit.").value_or(m.audit_interval_s);
    m.audit_burn_fraction = r.number(*a, "burn_fraction", "audit.").value_or(m.audit_burn_fraction);
    if (m.audit_interval_s < 0.05 || m.audit_interval_s > 5) r.fail("audit.interval_s", "must be 0.05..5 s");
    if (m.audit_burn_fraction <= 0 || m.audit_burn_fraction > 1) r.fail("audit.burn_fraction", "must be in (0, 1]");
  }
  if (const toml::table* c = r.table(root, "cell", "")) {
    r.only(*c, "cell.", {"ready_timeout_s", "attempts"});
    m.ready_timeout_s = r.number(*c, "ready_timeout_s", "cell.").value_or(m.ready_timeout_s);
    m.attempts = static_cast<int>(r.integer(*c, "attempts", "cell.").value_or(m.attempts));
    if (m.attempts < 1 || m.attempts > 5) r.fail("cell.attempts", "must be 1..5");
  }
}

// `pairing` and [rounds]: paired groups and when they stop.
void read_rounds(const TomlReader& r, const toml::table& root, Matrix& m) {
  m.pairing = r.string(root, "pairing", "").value_or("sequential");
  check_one_of(r, "pairing", m.pairing, {"sequential", "rounds"}, "pairing");
  if (const toml::table* t = r.table(root, "rounds", "")) {
    r.only(*t, "rounds.", {"reference", "target", "resolution", "min_rounds", "max_rounds", "budget_rounds", "seed"});
    m.rounds.reference = r.string(*t, "reference", "rounds.").value_or(m.rounds.reference);
    m.rounds.target = r.number(*t, "target", "rounds.").value_or(m.rounds.target);
    m.rounds.resolution = r.number(*t, "resolution", "rounds.").value_or(m.rounds.resolution);
    if (m.rounds.resolution < 0 || m.rounds.resolution >= 0.5) r.fail("rounds.resolution", "must be 0..0.5");
    m.rounds.min_rounds = static_cast<int>(r.integer(*t, "min_rounds", "rounds.").value_or(m.rounds.min_rounds));
    m.rounds.max_rounds = static_cast<int>(r.integer(*t, "max_rounds", "rounds.").value_or(m.rounds.max_rounds));
    m.rounds.budget_rounds =
        static_cast<int>(r.integer(*t, "budget_rounds", "rounds.").value_or(m.rounds.budget_rounds));
    m.rounds.seed = static_cast<std::uint64_t>(r.integer(*t, "seed", "rounds.").value_or(0));
    if (m.rounds.target <= 0 || m.rounds.target >= 1) r.fail("rounds.target", "must be in (0, 1): 0.05 is +-5%");
    if (m.rounds.min_rounds < 2 || m.rounds.min_rounds > 1000) r.fail("rounds.min_rounds", "must be 2..1000");
    if (m.rounds.max_rounds < m.rounds.min_rounds || m.rounds.max_rounds > 1000)
      r.fail("rounds.max_rounds", "must be min_rounds..1000");
    if (m.rounds.budget_rounds != 0 &&
        (m.rounds.budget_rounds < m.rounds.min_rounds || m.rounds.budget_rounds > m.rounds.max_rounds))
      r.fail("rounds.budget_rounds", "must be min_rounds..max_rounds (or 0: max_rounds)");
  }
}

// A paired run's client lives for its warm-up and run only, and the audit
// judges it by whole samples: two must fit, or every run ends unverified.
void check_paired_audit(const TomlReader& r, const toml::table&, Matrix& m) {
  if (m.pairing == "rounds" && m.audit_interval_s > (m.warmup_s + m.duration_s) / 2)
    r.fail("audit.interval_s", "must be at most half of warmup_s + duration_s in a paired matrix (" +
                                   format_number(m.audit_interval_s) + " s against runs of " +
                                   format_number(m.warmup_s + m.duration_s) + " s): every run would be unverified");
}

}  // namespace

Matrix parse_matrix(const std::string& text, const std::string& name) {
  const TomlReader r(name);
  toml::table root = r.parse(text);
  r.only(root, "",
         {"name",       "flavours",         "transports", "models",  "loops",  "idle",       "runs",  "warmup_s",
          "duration_s", "sessions",         "open",       "closed",  "server", "thresholds", "audit", "cell",
          "installed",  "transport_models", "cells",      "pairing", "rounds", "pair_on",    "stores"});
  Matrix m;
  m.source_text = text;
  m.source_name = name;
  m.name = r.string(root, "name", "").value_or("");
  // Read in this order, each section checked against the ones before it: the first mistake found is named.
  for (auto section : {read_cell_dimensions, read_runs, read_sessions, read_load, read_server, read_judging,
                       read_rounds, read_pair_on, check_paired_audit})
    section(r, root, m);
  return m;
}

Matrix load_matrix(const std::string& path) {
  std::string text;
  try {
    text = read_text(path);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  return parse_matrix(text, path);
}

namespace {

// build, requires, artifacts (docs/flavours.md "Build and identity"): commands and names, none empty;
// `probe` gives every placeholder a value, so a misspelt one in a build command fails now.
void read_flavour_build(const TomlReader& r, const toml::table& root, const std::map<std::string, std::string>& probe,
                        Flavour& f) {
  auto nonempty = [&](const char* key, const std::vector<std::string>& v) {
    for (const auto& e : v)
      if (trim(e).empty()) r.fail(key, "holds an empty string");
  };
  if (auto b = r.strings(root, "build", "")) {
    if (b->empty()) r.fail("build", "empty (leave it out when the server is built elsewhere)");
    nonempty("build", *b);
    for (const auto& a : *b) expand(a, probe, f.source_name + ": build");
    f.build = *b;
  }
  f.required_tools = r.strings(root, "requires", "").value_or(std::vector<std::string>{});
  nonempty("requires", f.required_tools);
  for (const auto& t : f.required_tools)
    if (t.find_first_of(" \t/") != std::string::npos)
      r.fail("requires", "'" + t + "' is not a command name (a name looked up on PATH, like \"cargo\")");
  f.artifacts = r.strings(root, "artifacts", "").value_or(std::vector<std::string>{});
  nonempty("artifacts", f.artifacts);
}

// A table of reasons (cannot, not_claimed, build_only): each key one of `allowed`, each value why.
std::map<std::string, std::string> read_reasons(const TomlReader& r, const toml::table& root, const char* key,
                                                const std::vector<std::string>& allowed, const char* what) {
  std::map<std::string, std::string> out;
  if (const toml::table* t = r.table(root, key, ""))
    for (const auto& [k, v] : *t) {
      const std::string path = std::string(key) + "." + std::string(k.str());
      if (!v.is_string()) r.wrong_type(v, path, "a string (the reason)");
      out[std::string(k.str())] = std::string(*v.as_string());
    }
  for (const auto& [k, why] : out) {
    check_one_of(r, std::string(key) + "." + k, k, allowed, what);
    if (trim(why).empty()) r.fail(std::string(key) + "." + k, "needs the reason as its value");
  }
  return out;
}

}  // namespace

Flavour parse_flavour(const std::string& text, const std::string& name) {
  const TomlReader r(name);
  toml::table root = r.parse(text);
  r.only(root, "",
         {"name", "description", "binary", "args", "models", "transports", "env", "build", "requires", "artifacts",
          "cannot", "not_claimed", "max_sessions", "build_only"});
  Flavour f;
  f.source_name = name;
  f.name = r.string(root, "name", "").value_or("");
  if (f.name.empty()) r.fail("name", "missing");
  f.description = r.string(root, "description", "").value_or("");
  f.binary = r.string(root, "binary", "").value_or("");
  if (f.binary.empty()) r.fail("binary", "missing (a path relative to the build dir, an absolute path or a command)");
  auto args = r.strings(root, "args", "");
  if (!args) r.fail("args", "missing (the server's argument template)");
  f.args = *args;
  f.models = r.strings(root, "models", "").value_or(kModels);
  for (const auto& m : f.models) check_one_of(r, "models", m, kModels, "model");
  f.transports = r.strings(root, "transports", "").value_or(std::vector<std::string>{"kernel"});
  for (const auto& t : f.transports) check_one_of(r, "transports", t, transport_names(), "transport");
  f.env = read_env(r, root, "env", "");
  if (auto n = r.integer(root, "max_sessions", "")) {
    if (*n < 1) r.fail("max_sessions", "must be at least 1 (leave it out when the server has no limit)");
    f.max_sessions = static_cast<int>(*n);
  }
  // Catch a misspelt placeholder now rather than at the first cell.
  std::map<std::string, std::string> probe;
  for (const auto& k : kPlaceholders) probe[k] = "x";
  for (const auto& a : f.args) expand(a, probe, name + ": args");
  read_flavour_build(r, root, probe, f);
  f.cannot = read_reasons(r, root, "cannot", kCannotSettings, "transport setting");
  std::vector<std::string> claimable = kContractParts;
  claimable.insert(claimable.end(), kContractChecks.begin(), kContractChecks.end());
  f.not_claimed = read_reasons(r, root, "not_claimed", claimable, "contract part or check");
  f.build_only = read_reasons(r, root, "build_only", transport_names(), "transport");
  for (const auto& [t, why] : f.build_only)
    if (std::find(f.transports.begin(), f.transports.end(), t) == f.transports.end())
      r.fail("build_only." + t, "'" + t + "' is not one of the flavour's transports (declare it there too)");
  return f;
}

Flavour load_flavour(const std::string& path) {
  std::string text;
  try {
    text = read_text(path);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  return parse_flavour(text, path);
}

std::map<std::string, Flavour> load_flavours(const std::string& dir, const std::vector<std::string>& names) {
  std::map<std::string, Flavour> out;
  for (const auto& n : names) {
    std::string path = dir + "/" + n + ".toml";
    if (read_text_or_empty(path).empty()) throw ConfigError("flavours: unknown flavour '" + n + "' (no " + path + ")");
    Flavour f = load_flavour(path);
    if (f.name != n) throw ConfigError(path + ": name: '" + f.name + "' does not match the file name");
    out.emplace(n, std::move(f));
  }
  return out;
}

std::string expand(const std::string& tmpl, const std::map<std::string, std::string>& vars, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out += tmpl[i];
      continue;
    }
    auto close = tmpl.find('}', i);
    if (close == std::string::npos) throw ConfigError(where + ": unclosed '{' in '" + tmpl + "'");
    std::string key = tmpl.substr(i + 1, close - i - 1);
    auto it = vars.find(key);
    if (it == vars.end()) throw ConfigError(where + ": unknown placeholder {" + key + "} in '" + tmpl + "'");
    out += it->second;
    i = close;
  }
  return out;
}

// ---- Starting a flavour's server (docs/flavours.md "Process").

const std::vector<std::string> kPlaceholders = {
    "model",          "transport",       "port",     "bind",       "cores",  "coordinator_core", "sessions",
    "workers",        "busy_poll_usecs", "idle",     "ready_file", "store",  "store_dir",        "flavour",
    "build_dir",      "source_dir",      "tls_cert", "tls_key",    "tls_ca", "store_commit",     "store_conninfo",
    "acceptor_config"};
const std::vector<std::string> kCannotSettings = {"busy_poll", "direct_read"};
const std::vector<std::string> kContractParts = {"process", "threads", "logon", "orders", "session", "transport"};
const std::vector<std::string> kContractChecks = {
    "build",        "version",      "ready",         "logon",     "reconnect",   "orders",  "heartbeat",
    "test-request", "garbled",      "unknown-type",  "logout",    "gap",         "too-low", "thread-names",
    "pinning",      "runtime-idle", "thread-stable", "busy-poll", "direct-read", "sigterm", "unsupported"};

std::string comma_list(const CoreSet& cores) {
  std::string out;
  for (int c : cores) {
    if (!out.empty()) out += ',';
    out += std::to_string(c);
  }
  return out;
}

std::map<std::string, std::string> placeholder_values(const ServerStart& s) {
  return {
      {"model", s.model},
      {"transport", s.transport},
      {"port", std::to_string(s.port)},
      {"bind", s.bind},
      {"cores", comma_list(s.cores)},
      {"coordinator_core", std::to_string(s.coordinator_core)},
      {"sessions", std::to_string(s.sessions)},
      {"workers", std::to_string(s.workers)},
      {"busy_poll_usecs", std::to_string(s.busy_poll_usecs)},
      {"idle", s.idle},
      {"ready_file", s.ready_file},
      {"store", s.store},
      {"store_dir", s.store_dir},
      {"store_commit", s.store_commit},
      {"store_conninfo", s.store_conninfo},
      {"flavour", s.flavour},
      {"build_dir", s.build_dir},
      {"source_dir", s.source_dir},
      {"tls_cert", s.tls_cert},
      {"tls_key", s.tls_key},
      {"tls_ca", s.tls_ca},
      {"acceptor_config", acceptor_config_path(s)},
  };
}

std::string acceptor_config_path(const ServerStart& s) {
  return s.ready_file.empty() ? std::string() : s.ready_file + ".acceptor.toml";
}

namespace {

bench::AcceptorFile acceptor_file_of(const ServerStart& s) {
  bench::AcceptorFile f;
  f.model = s.model;
  f.transport = s.transport;
  f.bind = s.bind;
  f.port = s.port;
  f.sessions = static_cast<unsigned>(std::max(1, s.sessions));
  f.workers = static_cast<unsigned>(std::max(1, s.workers));
  f.cores.assign(s.cores.begin(), s.cores.end());
  f.coordinator_core = s.coordinator_core;
  f.spin = s.idle == "spin";
  f.busy_poll_usecs = s.busy_poll_usecs;
  f.store = s.store;
  f.store_dir = s.store_dir;
  f.store_commit = s.store_commit;
  f.store_conninfo = s.store_conninfo;
  f.tls_cert = s.tls_cert;
  f.tls_key = s.tls_key;
  return f;
}

}  // namespace

std::vector<std::string> server_argv(const Flavour& f, const std::string& binary, const ServerStart& s) {
  const std::map<std::string, std::string> vars = placeholder_values(s);
  std::vector<std::string> argv = {binary};
  bool file = false;
  for (const auto& a : f.args) {
    argv.push_back(expand(a, vars, f.source_name + ": args"));
    file = file || a.find("{acceptor_config}") != std::string::npos;
  }
  if (file) {
    const std::string path = acceptor_config_path(s);
    if (path.empty() || !bench::write_file_atomically(path, bench::render_acceptor_file(acceptor_file_of(s))))
      throw std::runtime_error(f.source_name + ": cannot write the acceptor file '" + path + "' for {acceptor_config}");
  }
  return argv;
}

int auto_workers(const Machine& m) { return std::max(1, static_cast<int>(m.server.size())); }

Workers workers_for(const Matrix& mx, const Machine& m) {
  Workers w;
  w.server_cores = auto_workers(m);
  w.from_matrix = mx.workers.has_value();
  w.count = mx.workers.value_or(w.server_cores);
  return w;
}

std::string marker_for(const Cell& c, const Machine& m, const Flavour& f, const Workers& w) {
  const TransportInfo* t = find_transport(c.transport);
  if (t && c.model == "pool" && !t->pool) return "nopool";
  if (t && c.model == "shard" && !t->shard) return "noshard";
  if (!m.has_transport(c.transport)) return "unmeasurable";
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (!has(f.transports, c.transport) || !has(f.models, c.model)) return "unsupported";
  if ((c.model == "pool" || c.model == "shard") && w.oversubscribed()) return "oversubscribed";
  return "";
}

namespace {
std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> out(1);
  for (const char ch : text) {
    if (ch == sep)
      out.emplace_back();
    else
      out.back() += ch;
  }
  return out;
}
}  // namespace

bool cell_matches(const Cell& c, const std::string& pattern) {
  const std::vector<std::string> part = split_on(pattern, '/');
  if (part.size() != 4) return false;
  const std::string value[4] = {c.flavour, c.transport, c.model, c.loop};
  for (int i = 1; i < 4; ++i)
    if (fnmatch(part[i].c_str(), value[i].c_str(), 0) != 0) return false;
  return fnmatch(part[0].c_str(), value[0].c_str(), 0) == 0 || fnmatch(part[0].c_str(), c.member().c_str(), 0) == 0;
}

std::vector<std::string> split_cell_selection(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& p : split_on(text, ','))
    if (!p.empty()) out.push_back(p);
  return out;
}

std::string check_cell_selection(const Matrix& mx, const std::vector<std::string>& patterns) {
  Matrix all = mx;
  all.cells.clear();
  const std::vector<Cell> cells = plan_cells(all);
  for (const auto& p : patterns) {
    if (split_on(p, '/').size() != 4)
      return "'" + p + "' is not FLAVOUR/TRANSPORT/MODEL/LOOP (a part may be * or a glob)";
    if (std::none_of(cells.begin(), cells.end(), [&](const Cell& c) { return cell_matches(c, p); }))
      return "'" + p + "' matches no cell of the matrix" + (mx.name.empty() ? "" : " '" + mx.name + "'");
  }
  return "";
}

std::vector<Cell> plan_cells(const Matrix& mx) {
  const auto selected = [&](const Cell& c) {
    return mx.cells.empty() ||
           std::any_of(mx.cells.begin(), mx.cells.end(), [&](const std::string& p) { return cell_matches(c, p); });
  };
  std::vector<Cell> out;
  for (const auto& t : mx.transports)
    for (const auto& m : mx.models) {
      if (auto only = mx.transport_models.find(t);
          only != mx.transport_models.end() &&
          std::find(only->second.begin(), only->second.end(), m) == only->second.end())
        continue;
      for (const auto& l : mx.loops)
        for (const auto& f : mx.flavours)
          for (const auto& store : mx.pair_on == "store" ? mx.stores : std::vector<std::string>{""})
            if (Cell c{f, t, m, l, store}; selected(c)) out.push_back(c);
    }
  return out;
}

std::string group_key(const Matrix& mx, const Cell& c) {
  const std::string tml = c.transport + "/" + c.model + "/" + c.loop;
  return mx.pair_on == "store" ? c.flavour + "/" + tml : tml;
}

bool is_reference(const Matrix& mx, const Cell& c) {
  return (mx.pair_on == "store" ? c.store : c.flavour) == mx.rounds.reference;
}

Cell member_cell(const std::string& member, const std::string& transport, const std::string& model,
                 const std::string& loop) {
  const auto at = member.find('@');
  if (at == std::string::npos) return {member, transport, model, loop};
  return {member.substr(0, at), transport, model, loop, member.substr(at + 1)};
}

const std::vector<std::string> kServices = {"postgresql"};
const std::vector<std::string> kStoreSettings = {"null", "memory", "file", "postgresql-sync", "postgresql-async"};

StoreSetting store_setting(const std::string& setting) {
  if (setting.rfind("postgresql-", 0) == 0) return {"postgresql", setting.substr(11)};
  return {setting, ""};
}

std::string service_for_store(const std::string& setting) {
  return store_setting(setting).kind == "postgresql" ? "postgresql" : "";
}

std::string missing_services(const Matrix& mx, const Machine& m) {
  std::vector<std::string> settings = mx.pair_on == "store" ? mx.stores : std::vector<std::string>{mx.store};
  for (const auto& st : settings) {
    const std::string need = service_for_store(st);
    if (!need.empty() && !m.services.count(need))
      return "matrix '" + mx.name + "' has store " + st + ", which needs a " + need + " service, and machine '" +
             m.name + "' declares none (add [services." + need + "] to " + m.source_name +
             ": docs/lab.md \"Services\")";
  }
  return "";
}

}  // namespace kite::lab
