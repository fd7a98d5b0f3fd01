#include "kite/lab/host.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "kite/lab/process.hpp"
#include "kite/lab/util.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

std::string running_kernel(const HostSources& src) {
  if (!src.running_kernel.empty()) return src.running_kernel;
  utsname u{};
  return uname(&u) == 0 ? u.release : "unknown";
}

// The core list of a kernel parameter: isolcpus=domain,managed_irq,10-19 -> "10-19".
std::string cmdline_cores(const std::string& cmdline, const std::string& key) {
  std::istringstream in(cmdline);
  std::string word;
  while (in >> word) {
    if (word.rfind(key + "=", 0) != 0) continue;
    std::string cores;
    std::istringstream parts(word.substr(key.size() + 1));
    for (std::string p; std::getline(parts, p, ',');)
      if (!p.empty() && std::isdigit(static_cast<unsigned char>(p[0]))) cores += (cores.empty() ? "" : ",") + p;
    return cores;
  }
  return "";
}

// sysfs says what the kernel applied; the command line is the fallback where it does not exist.
CoreSet isolated_set(const HostSources& src, const std::string& sysfs_name, const std::string& key,
                     std::string& from) {
  const std::string path = src.cpu_sysfs + "/" + sysfs_name;
  std::string text;
  if (fs::exists(path)) {
    text = trim(read_text_or_empty(path));
    if (text == "(null)") text.clear();
    from = path;
  } else {
    text = cmdline_cores(read_text_or_empty(src.cmdline), key);
    from = src.cmdline;
  }
  try {
    return parse_core_list(text);
  } catch (const std::exception&) {
    from += " (unreadable: '" + text + "')";
    return {};
  }
}

CoreSet missing_from(const CoreSet& measured, const CoreSet& set) {
  CoreSet out;
  for (int c : measured)
    if (std::find(set.begin(), set.end(), c) == set.end()) out.push_back(c);
  return out;
}

json isolation(const Machine& m, const HostSources& src, std::vector<std::string>& warnings) {
  std::string iso_from, nohz_from;
  const CoreSet iso = isolated_set(src, "isolated", "isolcpus", iso_from);
  const CoreSet nohz = isolated_set(src, "nohz_full", "nohz_full", nohz_from);
  CoreSet measured = m.measured_cores();
  std::sort(measured.begin(), measured.end());
  const CoreSet not_iso = missing_from(measured, iso), not_nohz = missing_from(measured, nohz);
  auto text = [](const CoreSet& s) { return s.empty() ? std::string("none") : format_core_list(s); };
  if (!not_iso.empty())
    warnings.push_back("measured core(s) " + format_core_list(not_iso) + " not isolated (isolcpus: " + text(iso) +
                       "): other tasks may be scheduled there");
  if (!not_nohz.empty())
    warnings.push_back("measured core(s) " + format_core_list(not_nohz) + " not in nohz_full (" + text(nohz) +
                       "): the scheduler tick interrupts them");
  return {{"isolcpus", text(iso)},
          {"isolcpus_from", iso_from},
          {"nohz_full", text(nohz)},
          {"nohz_full_from", nohz_from},
          {"measured", text(measured)},
          {"not_isolated", not_iso.empty() ? "" : format_core_list(not_iso)},
          {"not_nohz_full", not_nohz.empty() ? "" : format_core_list(not_nohz)}};
}

json kernel(const HostSources& src, std::vector<std::string>& warnings) {
  const std::string running = running_kernel(src);
  const std::vector<std::string> installed = installed_kernels(src.boot_dir);
  json k = {{"running", running}, {"installed", installed}, {"newest_installed", nullptr},
            {"newer_not_booted", false}};
  if (!installed.empty()) {
    k["newest_installed"] = installed.back();
    if (compare_kernel_versions(installed.back(), running) > 0) {
      k["newer_not_booted"] = true;
      warnings.push_back("kernel " + installed.back() + " is installed but not booted: these figures describe " +
                         running);
    }
  }
  return k;
}

// `ethtool -i IF`: driver, version, firmware-version, bus-info.
json nic(const std::string& interface, const std::string& pair, const std::string& role, const HostSources& src) {
  json n = {{"interface", interface}, {"pair", pair}, {"role", role}};
  n["present"] = fs::exists(src.net_sysfs + "/" + interface);
  if (!n["present"].get<bool>()) return n;
  const std::string ethtool = src.ethtool.empty() ? "" : find_executable(src.ethtool, "");
  if (!ethtool.empty()) {
    const CommandResult r = run_command({ethtool, "-i", interface}, 5.0);
    if (r.code == 0) {
      std::istringstream in(r.output);
      for (std::string line; std::getline(in, line);) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string k = trim(line.substr(0, colon)), v = trim(line.substr(colon + 1));
        if (k == "driver") n["driver"] = v;
        if (k == "version") n["version"] = v;
        if (k == "firmware-version") n["firmware"] = v;
        if (k == "bus-info") n["bus"] = v;
      }
      n["source"] = "ethtool -i";
      return n;
    }
  }
  std::error_code ec;
  const fs::path drv = fs::read_symlink(src.net_sysfs + "/" + interface + "/device/driver", ec);
  n["driver"] = ec ? "unknown" : drv.filename().string();
  n["firmware"] = "unknown";
  n["source"] = "sysfs (no ethtool)";
  return n;
}

std::string text_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "none";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

}  // namespace

std::vector<std::string> installed_kernels(const std::string& boot_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(boot_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("vmlinuz-", 0) == 0 && name.find("rescue") == std::string::npos) out.push_back(name.substr(8));
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return compare_kernel_versions(a, b) < 0; });
  return out;
}

int compare_kernel_versions(const std::string& a, const std::string& b) { return strverscmp(a.c_str(), b.c_str()); }

json host_provenance(const Machine& m, const HostSources& src) {
  std::vector<std::string> warnings;
  json p;
  p["kernel"] = kernel(src, warnings);
  p["nics"] = json::array();
  for (const auto& pair : m.nics) {
    p["nics"].push_back(nic(pair.server_if, pair.name, "server", src));
    p["nics"].push_back(nic(pair.client_if, pair.name, "client", src));
  }
  p["isolation"] = isolation(m, src, warnings);
  p["warnings"] = warnings;
  return p;
}

std::vector<std::string> provenance_differences(const json& before, const json& now) {
  std::vector<std::string> out;
  if (!before.is_object() || !now.is_object()) {
    if (before.is_object() != now.is_object())
      out.push_back(std::string("host provenance ") + (before.is_object() ? "recorded" : "unrecorded") + " -> " +
                    (now.is_object() ? "recorded" : "unrecorded"));
    return out;
  }
  auto differ = [&](const std::string& what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(what + " " + a + " -> " + b);
  };
  const json k0 = before.value("kernel", json::object()), k1 = now.value("kernel", json::object());
  differ("kernel", text_of(k0, "running"), text_of(k1, "running"));
  auto not_booted = [](const json& k) {
    return k.value("newer_not_booted", false) ? "yes (" + text_of(k, "newest_installed") + ")" : std::string("no");
  };
  differ("newer kernel installed but not booted:", not_booted(k0), not_booted(k1));
  const json i0 = before.value("isolation", json::object()), i1 = now.value("isolation", json::object());
  differ("isolcpus", text_of(i0, "isolcpus"), text_of(i1, "isolcpus"));
  differ("nohz_full", text_of(i0, "nohz_full"), text_of(i1, "nohz_full"));
  std::map<std::string, json> n0;
  for (const auto& n : before.value("nics", json::array())) n0[n.value("interface", "")] = n;
  for (const auto& n : now.value("nics", json::array())) {
    const std::string name = n.value("interface", "");
    auto it = n0.find(name);
    if (it == n0.end()) {
      out.push_back("NIC " + name + " unrecorded -> recorded");
      continue;
    }
    for (const char* key : {"driver", "version", "firmware"})
      differ("NIC " + name + " " + (std::strcmp(key, "version") == 0 ? "driver version" : key),
             text_of(it->second, key), text_of(n, key));
    n0.erase(it);
  }
  for (const auto& [name, n] : n0) out.push_back("NIC " + name + " recorded -> unrecorded");
  return out;
}

}  // namespace kite::lab
