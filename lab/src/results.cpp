#include "kite/lab/results.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "kite/lab/method.hpp"
#include "kite/lab/util.hpp"

#include "result_schema.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// Numbers as the page prints settings: integers without a decimal point.
std::string number_text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string cpu_text_of(const json& stamp) {
  auto it = stamp.find("cpu");
  if (it == stamp.end() || !it->is_object()) return "";
  CpuIdentity c;
  c.vendor = str(*it, "vendor");
  c.family = it->value("family", -1);
  c.model = it->value("model", -1);
  c.stepping = it->value("stepping", -1);
  c.features = it->value("features", std::vector<std::string>{});
  return c.text();
}

// The server binary of a flavour in a sitting: the stamp's effective server_build, else sitting.json's binaries.
std::string server_binary(const json& result, const json& stamp, const std::string& flavour) {
  if (auto e = result.find("stamp"); e != result.end() && e->is_object())
    if (auto eff = e->find("effective"); eff != e->end() && eff->is_object())
      if (auto b = eff->find("server_build"); b != eff->end() && b->is_object()) {
        std::string h = str(*b, "sha256");
        if (!h.empty()) return h.substr(0, 12);
      }
  if (auto bins = stamp.find("binaries"); bins != stamp.end() && bins->is_object())
    for (const auto& [path, b] : bins->items()) {
      auto users = b.value("used_by", std::vector<std::string>{});
      if (std::find(users.begin(), users.end(), "server:" + flavour) != users.end())
        return str(b, "sha256").substr(0, 12);
    }
  return "";
}

bool newer(const StoredSitting& a, const StoredSitting& b) {
  return std::tie(a.start, a.name) > std::tie(b.start, b.name);
}

}  // namespace

std::string StoredResult::word() const {
  if (state == CellState::marked) return marker.empty() ? "marked" : marker;
  if (state == CellState::measured) return verdict;
  return to_string(state);
}

double StoredResult::p50(const std::string& view) const {
  if (!measured()) return -1;
  const LatencyRecord* v = summary_of(*this).view(view);
  return v && v->p50 ? *v->p50 : -1;
}

Settings StoredSitting::settings_for(const std::string& transport, const std::string& model,
                                     const std::string& loop) const {
  const json eff = stamp.value("effective", json::object());
  Settings s;
  auto it = matrix.sessions.find(model);
  s["sessions"] = std::to_string(it == matrix.sessions.end() ? 1 : it->second);
  if (loop == "open")
    s["rate"] = std::to_string(matrix.rate);
  else
    s["think_us"] = std::to_string(matrix.think_us);
  s["runs"] = std::to_string(matrix.runs);
  s["duration_s"] = number_text(matrix.duration_s);
  s["warmup_s"] = number_text(matrix.warmup_s);
  s["network"] = eff.value("network", std::string("loopback"));
  if (transport == "kernel") {  // per model since busy_poll_by_model; older sittings gave every model one value
    const json by_model = eff.value("busy_poll_by_model", json::object());
    s["busy_poll_usecs"] =
        std::to_string(by_model.contains(model) ? by_model[model].get<int>() : eff.value("busy_poll_usecs", 0));
  }
  s["idle"] = eff.value("idle", matrix.idle);
  s["audit"] = eff.value("audit", true) ? "on" : "off";
  // The launcher's settings of a preload transport (EF_*, VMA_*, onload's
  // profile, libvma's thread core), each by its own name; a sitting that
  // predates their recording has none.
  const json launchers = eff.value("launchers", json::object());
  if (launchers.is_object() && launchers.contains(transport) && launchers[transport].is_object()) {
    const json& l = launchers[transport];
    const json env = l.value("env", json::object());
    for (const auto& [k, v] : env.items()) s[k] = v.is_string() ? v.get<std::string>() : v.dump();
    if (l.contains("profile")) s["onload profile"] = l["profile"].is_string() ? l["profile"].get<std::string>() : "";
    if (l.contains("vma_internal_thread_core"))
      s["vma thread core"] = l["vma_internal_thread_core"].is_number() ? l["vma_internal_thread_core"].dump() : "none";
  }
  return s;
}

const StoredResult* StoredSitting::find(const Cell& c) const {
  for (const auto& r : results)
    if (r.cell.id() == c.id()) return &r;
  return nullptr;
}

bool StoredSitting::runs_reference_matrix() const {
  if (sweep || matrix_name != kReferenceMatrix) return false;
  const json o = stamp.value("overrides", json::object());
  if (!o.is_object()) return true;
  for (const char* k : {"network", "busy_poll_usecs", "idle", "audit"})
    if (o.contains(k)) return false;
  return true;
}

std::map<std::string, int> StoredSitting::outcome() const {
  std::map<std::string, int> n;
  for (const auto& r : results) ++n[r.state == CellState::marked ? "marked" : r.word()];
  return n;
}

StoredSitting load_stored_sitting(const std::string& dir, const std::string& host) {
  StoredSitting s;
  s.dir = dir;
  s.name = fs::path(dir).filename().string();
  s.stamp = json::parse(read_text(dir + "/sitting.json"));
  s.host = host.empty() ? str(s.stamp, "machine") : host;
  s.start = str(s.stamp, "start");
  s.end = str(s.stamp, "end");
  s.epoch = str(s.stamp, "epoch");
  s.cpu_model = str(s.stamp, "cpu_model");
  s.cpu_text = cpu_text_of(s.stamp);
  const json m = s.stamp.value("method", json::object());
  s.method = method_of_record(m.is_object() ? str(m, "version") : "");
  try {
    s.matrix = parse_matrix(str(s.stamp, "matrix_file"), str(s.stamp, "matrix_source"));
  } catch (const std::exception&) {
    // A sitting whose matrix text is missing keeps the defaults; its name still tells it apart.
  }
  s.matrix_name = !s.matrix.name.empty() ? s.matrix.name : fs::path(str(s.stamp, "matrix_source")).stem().string();
  s.sweep = str(s.stamp, "kind") == "sweep";
  if (s.sweep) {
    s.matrix_name = "sweep";
    const json files = s.stamp.value("sweep", json::object()).value("files", json::object());
    for (const auto& [key, rel] : files.items()) {
      if (!rel.is_string()) continue;
      json doc = json::parse(read_text(dir + "/" + rel.get<std::string>()));
      doc["file"] = s.host + "/" + s.name + "/" + rel.get<std::string>();
      s.sweeps.push_back(std::move(doc));
    }
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json" && e.path().filename() != "sitting.json")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    StoredResult r;
    r.data = json::parse(read_text(f.string()));
    try {
      r.record = std::make_shared<const ResultRecord>(result_record_from_json(r.data));
    } catch (const ResultSchemaError& e) {
      throw ResultSchemaError(f.filename().string() + ": " + e.what());
    }
    CellOutcome o = outcome_from_json(r.data);
    r.cell = o.cell;
    r.state = o.state;
    r.marker = o.marker;
    r.verdict = o.state == CellState::measured ? o.verdict : "";
    r.reason = o.reason;
    r.file = s.host + "/" + s.name + "/" + f.filename().string();
    r.method = method_of_record(str(r.data, "method"));
    r.settings = s.settings_for(r.cell.transport, r.cell.model, r.cell.loop);
    r.binary = server_binary(r.data, s.stamp, r.cell.flavour);
    s.results.push_back(std::move(r));
  }
  return s;
}

std::vector<Host> load_results(const std::string& results_dir, std::vector<std::string>* warnings) {
  std::vector<Host> hosts;
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(results_dir, ec))
    if (e.is_directory() && e.path().filename() != "site") dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& hd : dirs) {
    Host h;
    h.name = hd.filename().string();
    std::vector<fs::path> sd;
    for (const auto& e : fs::directory_iterator(hd, ec))
      if (e.is_directory() && fs::exists(e.path() / "sitting.json")) sd.push_back(e.path());
    for (const auto& d : sd) {
      try {
        h.sittings.push_back(load_stored_sitting(d.string(), h.name));
      } catch (const std::exception& e) {
        if (warnings) warnings->push_back(d.string() + ": skipped, unreadable: " + e.what());
      }
    }
    if (h.sittings.empty()) continue;
    std::sort(h.sittings.begin(), h.sittings.end(),
              [](const StoredSitting& a, const StoredSitting& b) { return newer(b, a); });
    hosts.push_back(std::move(h));
  }
  return hosts;
}

std::vector<Era> eras_of(const Host& h) {
  std::vector<Era> eras;
  if (h.sittings.empty()) return eras;
  const std::string current_epoch = h.sittings.back().epoch;
  for (const auto& s : h.sittings) {
    auto it = std::find_if(eras.begin(), eras.end(),
                           [&](const Era& e) { return e.epoch == s.epoch && e.method == s.method; });
    if (it == eras.end()) {
      Era e;
      e.epoch = s.epoch;
      e.method = s.method;
      e.first = s.start;
      e.current = s.epoch == current_epoch && s.method == kMethodVersion;
      eras.push_back(e);
      it = eras.end() - 1;
    }
    it->sittings.push_back(&s);
    it->last = s.start;
    it->cpu_model = s.cpu_model;
    it->cpu_text = s.cpu_text;
  }
  return eras;
}

const ComposedCell* ComposedMatrix::at(const Cell& c) const {
  auto it = cells.find(c.id());
  return it == cells.end() ? nullptr : &it->second;
}

namespace {

// Rows and columns in the lab's order: transports as known_transports lists
// them, models single..shard; loops closed, open; flavours as first seen.
void lay_out(ComposedMatrix& m, const std::vector<const StoredResult*>& results) {
  std::vector<std::string> transports, models, loops, flavours;
  auto add = [](std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const auto* r : results) {
    add(transports, r->cell.transport);
    add(models, r->cell.model);
    add(loops, r->cell.loop);
    add(flavours, r->cell.member());  // a column per member: "cpp@file" when the store is paired
  }
  auto ordered = [&](const std::vector<std::string>& seen, const std::vector<std::string>& canon) {
    std::vector<std::string> out;
    for (const auto& c : canon)
      if (std::find(seen.begin(), seen.end(), c) != seen.end()) out.push_back(c);
    for (const auto& s : seen) add(out, s);
    return out;
  };
  std::vector<std::string> tcanon;
  for (const auto& t : known_transports()) tcanon.push_back(t.name);
  // cpp (Kite itself) first, the others in the order met.
  std::vector<std::string> fl = ordered(flavours, {"cpp"});
  for (const auto& t : ordered(transports, tcanon))
    for (const auto& mo : ordered(models, kModels)) m.rows.push_back(t + "/" + mo);
  for (const auto& l : ordered(loops, kLoops))
    for (const auto& f : fl) m.cols.emplace_back(l, f);
}

// Newest first: the newest measured result is shown, else the newest of any state.
void place(ComposedMatrix& m, const StoredSitting& s, const StoredResult& r) {
  ComposedCell& c = m.cells[r.cell.id()];
  if (!c.shown) {
    c.shown = &r;
    c.from = &s;
    return;
  }
  if (c.shown->measured() || !r.measured()) return;
  // An older measured result replaces a newer unmeasured one, which is kept to be named.
  if (c.shown->state == CellState::refused || c.shown->state == CellState::error ||
      c.shown->state == CellState::unbuilt || c.shown->state == CellState::check_failed) {
    if (!c.newer_unmeasured) {
      c.newer_unmeasured = c.shown;
      c.newer_from = c.from;
    }
    c.shown = &r;
    c.from = &s;
  }
}

void note_used(ComposedMatrix& m, const StoredSitting* s) {
  if (std::find(m.used.begin(), m.used.end(), s) == m.used.end()) m.used.push_back(s);
}

}  // namespace

ComposedMatrix compose_era(const Era& era) {
  ComposedMatrix m;
  for (auto it = era.sittings.rbegin(); it != era.sittings.rend() && !m.reference; ++it)
    if ((*it)->runs_reference_matrix()) m.reference = *it;
  for (auto it = era.sittings.rbegin(); it != era.sittings.rend() && !m.reference; ++it)
    if (!(*it)->sweep) m.reference = *it;
  if (!m.reference) return m;
  std::vector<const StoredResult*> taken;
  for (auto it = era.sittings.rbegin(); it != era.sittings.rend(); ++it) {
    const StoredSitting& s = **it;
    bool any = false, other = false;
    for (const auto& r : s.results) {
      const Settings ref = m.reference->settings_for(r.cell.transport, r.cell.model, r.cell.loop);
      if (r.settings != ref || r.method != era.method) {
        other = true;
        continue;
      }
      place(m, s, r);
      taken.push_back(&r);
      any = true;
    }
    if (!any && other) m.left_out.push_back(&s);
  }
  lay_out(m, taken);
  for (const auto& [id, c] : m.cells) note_used(m, c.from);
  std::sort(m.used.begin(), m.used.end(), [](const StoredSitting* a, const StoredSitting* b) { return newer(*b, *a); });
  std::reverse(m.left_out.begin(), m.left_out.end());
  return m;
}

ComposedMatrix compose_sitting(const StoredSitting& s) {
  ComposedMatrix m;
  m.reference = &s;
  std::vector<const StoredResult*> taken;
  for (const auto& r : s.results) {
    place(m, s, r);
    taken.push_back(&r);
  }
  lay_out(m, taken);
  if (!s.results.empty()) m.used.push_back(&s);
  return m;
}

BinaryInfo server_binary_of(const StoredSitting& s, const std::string& flavour) {
  BinaryInfo b;
  auto bins = s.stamp.find("binaries");
  if (bins == s.stamp.end() || !bins->is_object()) return b;
  for (const auto& [path, e] : bins->items()) {
    auto users = e.value("used_by", std::vector<std::string>{});
    if (std::find(users.begin(), users.end(), "server:" + flavour) == users.end()) continue;
    b.path = path;
    b.sha256 = str(e, "sha256");
    b.version = str(e, "version");
    json reported = e.value("reported_in_results", json::object());
    if (b.version.empty() || b.version.rfind("unavailable", 0) == 0) b.version = reported.dump();
    // bench_roundtrip answers: git=... compiler="..." build_flags="..."
    auto field = [&](const std::string& key) -> std::string {
      std::string v = str(e, "version");
      auto at = v.find(key + "=");
      if (at == std::string::npos) return "";
      at += key.size() + 1;
      if (at < v.size() && v[at] == '"') {
        auto close = v.find('"', at + 1);
        return v.substr(at + 1, close == std::string::npos ? std::string::npos : close - at - 1);
      }
      return v.substr(at, v.find(' ', at) - at);
    };
    b.git = field("git");
    if (b.git.empty()) b.git = str(reported, "git");
    b.flags = field("build_flags");
    if (b.flags.empty()) b.flags = field("flags");
    if (b.flags.empty()) b.flags = str(reported, "build_flags");
    break;
  }
  if (auto ins = s.stamp.find("installs"); ins != s.stamp.end() && ins->is_array())
    for (const auto& i : *ins) {
      auto users = i.value("used_by", std::vector<std::string>{});
      if (std::find(users.begin(), users.end(), "server:" + flavour) != users.end()) b.install = str(i, "name");
    }
  return b;
}

std::vector<std::string> settings_differences(const Settings& before, const Settings& now) {
  std::vector<std::string> out;
  std::vector<std::string> keys;
  for (const auto& [k, v] : before) keys.push_back(k);
  for (const auto& [k, v] : now)
    if (!before.count(k)) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) {
    auto a = before.find(k), b = now.find(k);
    std::string va = a == before.end() ? "-" : a->second, vb = b == now.end() ? "-" : b->second;
    if (va != vb) out.push_back(k + " " + va + " -> " + vb);
  }
  return out;
}

}  // namespace kite::lab
