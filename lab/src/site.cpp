// The results page: a static site under results/site/ built from every
// sitting. Plain HTML tables that read without scripts; the data the scripts
// need (CDFs, the comparison picker's figures) is written into the pages, so
// the site works opened from disk as well as served.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kite/lab/method.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/results.hpp"
#include "kite/lab/util.hpp"
#include "result_schema.hpp"
#include "site_assets.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

// JSON inside a <script> element: "</" would end the element.
std::string script_json(const json& j) {
  std::string s = j.dump();
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Latency figures: two decimals, three below 10 us (the seeds' open tables).
std::string us(double v) { return v < 0 ? "-" : fixed(v, v < 10 ? 3 : 2); }

std::string num(const json& j) {
  if (j.is_number_integer()) return std::to_string(j.get<long long>());
  if (j.is_number()) return fixed(j.get<double>(), 3);
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_null()) return "-";
  return j.dump();
}

const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json null;
  const json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return null;
    auto it = p->find(k);
    if (it == p->end()) return null;
    p = &*it;
  }
  return *p;
}

// A figure of a summary; -1 when the file lacks it.
double figure(const std::optional<double>& v) { return v.value_or(-1); }

std::string date_of(const std::string& iso) { return iso.size() >= 10 ? iso.substr(0, 10) : iso; }
std::string when(const std::string& iso) {
  if (iso.size() < 16) return iso;
  return iso.substr(0, 10) + " " + iso.substr(11, 5) + " UTC";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string cell_page_name(const Cell& c) {
  return c.member() + "_" + c.transport + "_" + c.model + "_" + c.loop + ".html";
}

std::string verdict_class(const StoredResult& r) {
  switch (r.state) {
    case CellState::measured: return "v-" + r.verdict;
    case CellState::refused: return "v-refused";
    case CellState::marked: return "w-marker";
    case CellState::unbuilt: return "w-unbuilt";
    default: return "w-error";
  }
}

std::string cpu_line(const std::string& model, const std::string& identity) {
  return model + (identity.empty() ? " (CPU identity not recorded: the sitting predates it)" : " (" + identity + ")");
}

// What a page needs to know about where it sits.
struct PageFrame {
  std::string title;
  std::string root;                                         // relative path to the site's root ("", "../", ...)
  std::vector<std::pair<std::string, std::string>> crumbs;  // label, href (relative to the page)
  std::string banner;                                       // HTML, shown before the content
  std::string kind;                                         // body class: matrix, cell, compare, host, index, sitting
  bool chart = false;                                       // the page draws charts
  std::vector<std::string> extra_scripts;                   // relative src
};

std::string page(const PageFrame& f, const std::string& body) {
  std::ostringstream h;
  h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>" << esc(f.title) << " - Kite latency lab</title>\n<link rel=\"icon\" href=\"data:,\">\n"
    << "<link rel=\"stylesheet\" href=\"" << f.root << "assets/site.css\">\n";
  if (f.chart) h << "<link rel=\"stylesheet\" href=\"" << f.root << "assets/uPlot.min.css\">\n";
  h << "</head><body class=\"" << f.kind << "\">\n<nav class=\"crumbs\"><a href=\"" << f.root
    << "index.html\">Kite latency lab</a>";
  for (const auto& [label, href] : f.crumbs)
    h << " &rsaquo; " << (href.empty() ? esc(label) : "<a href=\"" + href + "\">" + esc(label) + "</a>");
  h << "</nav>\n";
  if (!f.banner.empty()) h << "<div class=\"banner\" role=\"note\">" << f.banner << "</div>\n";
  h << "<main>\n<h1>" << esc(f.title) << "</h1>\n" << body << "</main>\n";
  if (f.chart && !site_asset("uPlot.iife.min.js").empty())
    h << "<script src=\"" << f.root << "assets/uPlot.iife.min.js\"></script>\n";
  for (const auto& s : f.extra_scripts) h << "<script src=\"" << s << "\"></script>\n";
  h << "<script src=\"" << f.root << "assets/site.js\"></script>\n</body></html>\n";
  return h.str();
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  write_text_atomic(p.string(), text);
}

// ---------------------------------------------------------------- matrices

// A view: a composed matrix with the folder its pages live in.
struct View {
  const Host* host = nullptr;
  const ComposedMatrix* m = nullptr;
  std::string dir;     // relative to the site root, ends with '/': "vm/", "vm/archive/x/", "vm/sitting/s/"
  std::string root;    // from dir back to the site root
  std::string title;   // "the current matrix", "archive ...", "sitting ..."
  std::string banner;  // archive banner (repeated on every cell page)
  std::map<const StoredSitting*, int> index;  // sitting -> its footnote number when composed from several
};

void number_sittings(View& v) {
  if (v.m->used.size() < 2) return;
  int n = 0;
  for (const auto* s : v.m->used) v.index[s] = ++n;
}

std::string legend_html() {
  return "<p class=\"legend\">Verdicts: <span class=\"v-ok\">ok</span> all runs complete, CVs under their "
         "limits; <span class=\"v-partial\">partial</span> complete, but a CV over its limit or a run repeated; "
         "<span class=\"v-saturated\">saturated</span> open loop could not keep its rate (or hit the in-flight "
         "cap, or response p50 over twice service p50); <span class=\"v-refused\">refused</span> the audit "
         "failed, no figures published. Markers and states, never figures: <span class=\"w-marker\">nopool</span> "
         "<span class=\"w-marker\">noshard</span> (the transport cannot), <span class=\"w-marker\">unmeasurable</span> "
         "(the host lacks it), <span class=\"w-marker\">unsupported</span> (the flavour lacks it), "
         "<span class=\"w-marker\">oversubscribed</span> (more workers than server cores), "
         "<span class=\"w-unbuilt\">unbuilt</span> (not built here), <span class=\"w-error\">error</span>, "
         "<span class=\"w-error\">check-failed</span>. In a paired sitting (method v2) a cell also shows its "
         "ratio to the reference (the median of per-round p50 ratios, its 95% interval and faster, slower or "
         "level); a cell's page ranks its group in a race.</p>\n";
}

// A paired member's ratio to its group's reference ("" for a result of sequential rounds).
std::string ratio_html(const StoredResult& r) {
  const PairingRecord* p = pairing_of(r);
  if (!p) return "";
  const std::string reference = p->reference.value_or("");
  if (reference == r.cell.member()) return " <span class=\"ratio r-reference\">reference</span>";
  if (!p->ratio) return "";
  const std::string verdict = p->verdict.value_or("");
  const RatioRecord& x = *p->ratio;
  return " <span class=\"ratio r-" + esc(verdict) + "\" title=\"median of the per-round p50 ratios to " +
         esc(reference) + ", 95% interval\">&times;" + fixed(x.median, 3) + " [" + fixed(x.low, 3) + ", " +
         fixed(x.high, 3) + "] " + esc(verdict) + "</span>";
}

// A matrix cell: p50 and verdict (tails and, paired, the ratio beside them), or what stands in their place.
std::string matrix_cell_html(const View& v, const Cell& cell) {
  const ComposedCell* c = v.m->at(cell);
  if (!c || !c->shown) return "<td class=\"absent\" data-cell=\"" + esc(cell.id()) + "\">-</td>";
  const StoredResult& r = *c->shown;
  const std::string& l = cell.loop;
  std::ostringstream h;
  std::string href = "cell/" + cell_page_name(cell);
  std::string sup;
  if (auto it = v.index.find(c->from); it != v.index.end())
    sup = "<sup class=\"from\" title=\"from sitting " + esc(c->from->name) + "\">" + std::to_string(it->second) +
          "</sup>";
  h << "<td class=\"" << verdict_class(r) << "\" data-cell=\"" << esc(cell.id()) << "\" data-state=\"" << esc(r.word())
    << "\"";
  if (r.measured()) {
    std::string view = l == "open" && r.p50("response") >= 0 ? "response" : "service";
    auto tail_of = [&](const std::string& v2) {
      const LatencyRecord* x = summary_of(r).view(v2);
      return "p99 " + us(x ? figure(x->p99) : -1) + ", max " + us(x ? figure(x->max) : -1);
    };
    std::string tail = view + " " + tail_of(view);
    h << " data-view=\"" << view << "\"";
    if (l == "open") {
      h << " data-response=\"" << us(r.p50("response")) << "\" data-service=\"" << us(r.p50("service"))
        << "\" data-tail-response=\"" << tail_of("response") << "\" data-tail-service=\"" << tail_of("service") << "\"";
    }
    h << " title=\"" << esc(tail) << "\"><a href=\"" << href << "\"><span class=\"p50\">" << us(r.p50(view))
      << "</span> <span class=\"verdict\">" << esc(r.verdict) << "</span>" << sup << ratio_html(r)
      << "<span class=\"tail\"> " << esc(tail.substr(view.size() + 1)) << "</span></a></td>";
  } else {
    h << " title=\"" << esc(r.reason) << "\"><a href=\"" << href << "\"><span class=\"verdict\">" << esc(r.word())
      << "</span>" << sup << "</a></td>";
  }
  return h.str();
}

std::string matrix_html(const View& v) {
  const ComposedMatrix& m = *v.m;
  std::ostringstream h;
  bool open = std::any_of(m.cols.begin(), m.cols.end(), [](const auto& c) { return c.first == "open"; });
  // A checkbox before the table shows p99 and max without scripts (CSS :checked ~ table).
  h << "<input type=\"checkbox\" id=\"show-tail\" class=\"show-tail\"><label for=\"show-tail\">show p99 and "
       "max</label>\n<div class=\"matrix-tools\" data-open=\""
    << (open ? "1" : "0") << "\"></div>\n";
  h << "<p class=\"view-note\">p50 in microseconds and the verdict. Closed cells: service time. Open cells: "
       "<span class=\"view-name\">response time</span> (from the scheduled slot)<span class=\"noscript-only\">; "
       "their service time is on each cell's page</span>.</p>\n";
  h << "<table class=\"matrix\"><thead><tr><th rowspan=\"2\">transport/model</th>";
  std::vector<std::pair<std::string, int>> groups;
  for (const auto& [l, f] : m.cols) {
    if (groups.empty() || groups.back().first != l) groups.emplace_back(l, 0);
    ++groups.back().second;
  }
  for (const auto& [l, n] : groups) h << "<th colspan=\"" << n << "\" class=\"loop\">" << esc(l) << "</th>";
  h << "</tr><tr>";
  for (const auto& [l, f] : m.cols) h << "<th class=\"flavour\">" << esc(f) << "</th>";
  h << "</tr></thead><tbody>\n";
  for (const auto& row : m.rows) {
    std::string t = row.substr(0, row.find('/')), mo = row.substr(row.find('/') + 1);
    h << "<tr><th class=\"row\">" << esc(row) << "</th>";
    for (const auto& [l, f] : m.cols) h << matrix_cell_html(v, member_cell(f, t, mo, l));
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  if (!v.index.empty()) {
    h << "<p class=\"sources\">Composed from " << v.index.size() << " sittings (the small number in a cell):";
    for (const auto* s : m.used)
      h << " <span>" << v.index.at(s) << " <a href=\"" << v.root << esc(v.host->name) << "/sitting/" << esc(s->name)
        << "/index.html\">" << esc(s->name) << "</a> (" << date_of(s->start) << ")</span>";
    h << "</p>\n";
  }
  return h.str();
}

std::string binary_text(const StoredSitting& s, const std::string& flavour, const std::string& sha12) {
  BinaryInfo b = server_binary_of(s, flavour);
  std::string name = b.path.empty() ? "?" : fs::path(b.path).filename().string();
  std::string hash = !sha12.empty() ? sha12.substr(0, 8) : b.sha256.substr(0, 8);
  std::string out = "<code>" + esc(name) + "</code> " + esc(hash.empty() ? "(hash unknown)" : hash);
  std::vector<std::string> more;
  if (!b.git.empty()) more.push_back("git " + b.git);
  more.push_back(b.install.empty() ? "build tree" : "install " + b.install);
  if (!b.flags.empty()) more.push_back("flags <code>" + esc(b.flags) + "</code>");
  return out + " (" + join(more, ", ") + ")";
}

// Provenance: per flavour, which sitting and binary each of its cells comes from.
std::string provenance_html(const View& v) {
  const ComposedMatrix& m = *v.m;
  std::ostringstream h;
  std::vector<std::string> flavours;
  for (const auto& [l, f] : m.cols)
    if (std::find(flavours.begin(), flavours.end(), f) == flavours.end()) flavours.push_back(f);
  h << "<section class=\"provenance\"><h2>Where each column comes from</h2>\n";
  for (const auto& f : flavours) {
    // (sitting, binary) -> cells
    std::map<std::pair<const StoredSitting*, std::string>, std::vector<std::string>> groups;
    std::map<std::string, std::set<const StoredSitting*>> sittings_of_loop;
    std::map<std::string, std::set<std::string>> binaries_of_loop;
    std::vector<std::string> not_control;
    for (const auto& row : m.rows)
      for (const auto& loop : kLoops) {
        std::string t = row.substr(0, row.find('/')), mo = row.substr(row.find('/') + 1);
        const ComposedCell* c = m.at({f, t, mo, loop});
        if (!c || !c->shown || c->shown->state == CellState::marked) continue;
        groups[{c->from, c->shown->binary}].push_back(loop + " " + row);
        sittings_of_loop[loop].insert(c->from);
        binaries_of_loop[loop].insert(c->shown->binary);
        if (f != "cpp" && c->shown->measured()) {
          const ComposedCell* k = m.at({"cpp", t, mo, loop});
          if (k && k->shown && k->shown->measured() && k->from != c->from) not_control.push_back(loop + " " + row);
        }
      }
    if (groups.empty()) continue;
    h << "<h3 id=\"prov-" << esc(f) << "\">" << esc(f) << "</h3>\n<table class=\"prov\" data-flavour=\"" << esc(f)
      << "\"><thead><tr><th>" << esc(f)
      << " cells</th><th>Measured</th><th>Sitting</th><th>Binary</th></tr></thead><tbody>\n";
    for (const auto& [key, cells] : groups) {
      const StoredSitting* s = key.first;
      h << "<tr><td>" << esc(join(cells, ", ")) << "</td><td>" << when(s->start)
        << "</td><td class=\"sitting\"><a href=\"" << v.root << esc(v.host->name) << "/sitting/" << esc(s->name)
        << "/index.html\">" << esc(s->name) << "</a></td><td>" << binary_text(*s, f, key.second) << "</td></tr>\n";
    }
    h << "</tbody></table>\n";
    for (const auto& loop : kLoops) {
      auto& ss = sittings_of_loop[loop];
      auto& bs = binaries_of_loop[loop];
      if (ss.size() > 1 || bs.size() > 1)
        h << "<p class=\"flag\">The " << loop << " " << esc(f) << " column comes from " << ss.size()
          << (ss.size() == 1 ? " sitting" : " sittings") << " and " << bs.size()
          << (bs.size() == 1 ? " binary" : " binaries") << ": its cells are not one measurement.</p>\n";
    }
    if (!not_control.empty())
      h << "<p class=\"flag not-control\">The " << esc(f) << " cells " << esc(join(not_control, ", "))
        << " were measured in another sitting than cpp's: not a same-sitting control.</p>\n";
  }
  h << "</section>\n";
  return h.str();
}

// ---------------------------------------------------------------- cell pages

std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows, const std::string& cls) {
  std::ostringstream h;
  h << "<table class=\"kv " << cls << "\"><tbody>\n";
  for (const auto& [k, v] : rows) h << "<tr><th>" << esc(k) << "</th><td>" << v << "</td></tr>\n";
  h << "</tbody></table>\n";
  return h.str();
}

std::string code(const std::string& s) { return "<code>" + esc(s) + "</code>"; }

// sitting.json's `provenance` (lab/src/host.cpp): its warnings first, then the
// kernel, isolation and NIC facts; "" for a sitting that predates it.
std::string provenance_html(const json& stamp) {
  const json p = stamp.value("provenance", json());
  if (!p.is_object()) return "";
  std::ostringstream h;
  const json warnings = p.value("warnings", json::array());
  if (!warnings.empty()) {
    h << "<ul class=\"host-warnings\">\n";
    for (const auto& w : warnings) h << "<li class=\"flag\">warning: " << esc(w.get<std::string>()) << "</li>\n";
    h << "</ul>\n";
  }
  const json k = p.value("kernel", json::object());
  const json i = p.value("isolation", json::object());
  auto str = [](const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string("-");
  };
  std::vector<std::pair<std::string, std::string>> rows = {
      {"running kernel", esc(str(k, "running"))},
      {"newest installed kernel", esc(str(k, "newest_installed")) +
                                      (k.value("newer_not_booted", false) ? " (installed, not booted)" : "")},
      {"isolcpus", esc(str(i, "isolcpus"))},
      {"nohz_full", esc(str(i, "nohz_full"))},
      {"measured cores", esc(str(i, "measured"))}};
  for (const auto& n : p.value("nics", json::array())) {
    std::string text = n.value("present", false)
                           ? "driver " + str(n, "driver") + " " + str(n, "version") + ", firmware " +
                                 str(n, "firmware") + " (" + str(n, "source") + ")"
                           : std::string("absent");
    rows.push_back({"NIC " + str(n, "interface") + " (" + str(n, "pair") + ", " + str(n, "role") + ")", esc(text)});
  }
  h << kv_table(rows, "host-provenance");
  return h.str();
}

// sitting.json's `wire` (lab/src/wire.cpp) in a line: each pair's ends in
// their namespaces, the offloads read there, and whether they were put back.
std::string wire_text(const json& w) {
  if (!w.is_object()) return "";
  std::vector<std::string> pairs;
  for (const auto& p : w.value("pairs", json::array())) {
    std::vector<std::string> ends;
    for (const char* role : {"server", "client"}) {
      const json e = p.value(role, json::object());
      ends.push_back(std::string(role) + " " + e.value("interface", std::string("?")) + " " +
                     e.value("address", std::string("?")) + " in " + e.value("netns", std::string("?")) + " (" +
                     e.value("offloads", std::string("offloads unread")) + ")");
    }
    pairs.push_back("pair " + p.value("name", std::string("?")) + ": " + join(ends, ", "));
  }
  std::string out = "the NIC pairs moved into two namespaces, traffic across the cable: " + join(pairs, "; ");
  const json r = w.value("restored", json());
  if (r.is_object())
    out += r.value("failed", json::array()).empty() ? "; put back at the end (" + num(r.value("done", json())) + ")"
                                                    : "; NOT all put back: " + num(r["failed"]);
  return out;
}

std::string argv_text(const json& a) {
  if (!a.is_array()) return num(a);
  std::vector<std::string> parts;
  for (const auto& x : a) parts.push_back(num(x));
  return join(parts, " ");
}

std::string env_text(const json& e) {
  if (!e.is_object() || e.empty()) return "(none)";
  std::vector<std::string> parts;
  for (const auto& [k, val] : e.items()) parts.push_back(k + "=" + num(val));
  return join(parts, " ");
}

json cdf_series(const StoredResult& r, const std::string& label, bool main) {
  json pts = json::array();
  const json& c = r.data.value("cdf", json::array());
  for (const auto& p : c)
    if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) pts.push_back(p);
  return {{"label", label}, {"main", main}, {"points", pts}};
}

std::string latency_table(const StoredResult& r) {
  std::ostringstream h;
  h << "<table class=\"figures\"><thead><tr><th></th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th>"
       "<th>mean of run maxima</th></tr></thead><tbody>\n";
  for (const char* view : {"response", "service"}) {
    const LatencyRecord* s = summary_of(r).view(view);
    if (!s) continue;
    h << "<tr><th>" << view << "</th>";
    for (const auto& k : {s->p50, s->p90, s->p99, s->p999, s->max, s->mean_max})
      h << "<td>" << (k ? us(*k) : "-") << "</td>";
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  return h.str();
}

std::string runs_table(const json& runs) {
  if (!runs.is_array() || runs.empty()) return "<p>No runs.</p>\n";
  bool open = runs[0].contains("response");
  std::ostringstream h;
  h << "<table class=\"runs\"><thead><tr><th>run</th><th>count</th><th>errors</th><th>achieved rate /s</th>"
       "<th>most in flight</th><th>cap hits</th><th>complete</th><th>service p50</th><th>service p99</th>"
       "<th>service max</th>";
  if (open) h << "<th>response p50</th><th>response p99</th><th>response max</th>";
  h << "</tr></thead><tbody>\n";
  int i = 0;
  for (const auto& run : runs) {
    h << "<tr><td>" << ++i << "</td><td>" << num(run.value("count", json())) << "</td><td>"
      << num(run.value("errors", json())) << "</td><td>" << fixed(run.value("achieved_rate", 0.0), 0) << "</td><td>"
      << num(run.value("max_in_flight", json())) << "</td><td>" << num(run.value("cap_hits", json())) << "</td><td>"
      << (run.value("complete", false) ? "yes" : "no") << "</td>";
    for (const char* v : open ? std::vector<const char*>{"service", "response"} : std::vector<const char*>{"service"})
      for (const char* k : {"p50", "p99", "max"}) {
        const json& x = at(run, {v, k});
        h << "<td>" << (x.is_number() ? us(x.get<double>()) : "-") << "</td>";
      }
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  return h.str();
}

// An optional figure as num() prints a JSON one: integers whole, other numbers to three places, "-" when absent.
std::string num(const std::optional<double>& v) { return v ? fixed(*v, 3) : "-"; }
std::string num(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "-"; }

std::string judged_html(const StoredResult& r) {
  const SummaryRecord& s = summary_of(r);
  const json& t = r.data.value("thresholds", json::object());
  std::vector<std::pair<std::string, std::string>> rows;
  std::string base = r.cell.loop == "open" ? "response" : "service";
  auto limit = [&](const char* key) { return t.contains(key) ? num(t[key]) : std::string("-"); };
  rows.push_back({"CV of p50 (" + base + ", across runs)", num(s.cv_p50) + " (limit " + limit("cv_p50") + ")"});
  rows.push_back({"CV of p99 (" + base + ", across runs)", num(s.cv_p99) + " (limit " + limit("cv_p99") + ")"});
  const std::string achieved = fixed(s.achieved_rate.value_or(0.0), 0) + " /s";
  if (r.cell.loop == "open") {
    double rate = r.data.value("rate", 0.0);
    rows.push_back({"achieved rate",
                    achieved + " (target " + fixed(rate, 0) + ", at least " + limit("rate_fraction") + " of it)"});
    const LatencyRecord *service = s.view("service"), *response = s.view("response");
    const bool over = service && service->p50 && *service->p50 > 0 && response && response->p50;
    rows.push_back(
        {"response p50 over service p50", (over ? fixed(*response->p50 / *service->p50, 3) : std::string("-")) +
                                              " (limit " + limit("response_over_service") + ")"});
    rows.push_back({"in-flight cap hits", num(s.cap_hits)});
  } else {
    rows.push_back({"achieved rate", achieved});
  }
  rows.push_back({"most orders in flight", num(s.max_in_flight)});
  rows.push_back({"orders measured", num(s.count) + ", errors " + num(s.errors)});
  return kv_table(rows, "judged");
}

std::string audit_html(const json& a) {
  if (!a.is_object()) return "<p>No audit recorded.</p>\n";
  std::ostringstream h;
  h << kv_table(
      {{"enabled", num(a.value("enabled", json()))},
       {"passed", num(a.value("passed", json()))},
       {"reason", esc(a.value("reason", std::string()))},
       {"samples", num(a.value("samples", json())) + " (violating " + num(a.value("violating_samples", json())) +
                       ", inconclusive retries " + num(a.value("inconclusive_retries", json())) + ")"}},
      "audit");
  const json& th = a.value("threads", json::object());
  if (th.is_object() && !th.empty()) {
    h << "<table class=\"threads\"><thead><tr><th>thread</th><th>cores it ran on</th></tr></thead><tbody>\n";
    for (const auto& [k, val] : th.items()) h << "<tr><td>" << esc(k) << "</td><td>" << esc(num(val)) << "</td></tr>\n";
    h << "</tbody></table>\n";
  }
  const json& vs = a.value("violations", json::array());
  if (vs.is_array() && !vs.empty()) {
    h << "<h3>Violations</h3><ul class=\"violations\">\n";
    for (const auto& x : vs) h << "<li>" << esc(x.is_string() ? x.get<std::string>() : x.dump()) << "</li>\n";
    h << "</ul>\n";
  }
  return h.str();
}

std::string effective_html(const StoredResult& r) {
  const json& e = at(r.data, {"stamp", "effective"});
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& [k, v] : r.settings) rows.push_back({k, esc(v)});
  if (e.is_object()) {
    rows.push_back({"server command", code(argv_text(e.value("server_argv", json())))});
    rows.push_back({"server environment", code(env_text(e.value("server_env", json())))});
    rows.push_back({"client command", code(argv_text(e.value("client_argv", json())))});
    rows.push_back({"client environment", code(env_text(e.value("client_env", json())))});
    rows.push_back({"cores", code(num(e.value("cores", json())))});
    rows.push_back({"transport", code(num(e.value("transport", json())))});
    for (const char* k : {"bind", "server_netns", "client_netns", "offloads", "wire", "launcher", "workers", "cannot",
                          "server_build", "client_build", "attempt"})
      if (e.contains(k) && !e[k].is_null()) rows.push_back({k, code(num(e[k]))});
  }
  return kv_table(rows, "effective");
}

std::string stamp_html(const StoredResult& r, const StoredSitting& s) {
  std::vector<std::pair<std::string, std::string>> rows;
  const json& c = at(r.data, {"stamp", "client"});
  if (c.is_object()) rows.push_back({"client build", code(num(c))});
  rows.push_back({"server binary", binary_text(s, r.cell.flavour, r.binary)});
  rows.push_back(
      {"sitting", esc(s.name) + ", " + when(s.start) + " to " + (s.end.empty() ? "(unfinished)" : when(s.end))});
  rows.push_back(
      {"host, kernel", esc(s.stamp.value("host", std::string())) + ", " + esc(s.stamp.value("kernel", std::string()))});
  rows.push_back({"CPU", esc(cpu_line(s.cpu_model, s.cpu_text))});
  rows.push_back({"hardware epoch", esc(s.epoch)});
  for (const auto& w : s.stamp.value("provenance", json::object()).value("warnings", json::array()))
    rows.push_back({"host warning", "<span class=\"flag\">" + esc(w.get<std::string>()) + "</span>"});
  rows.push_back({"method", esc(r.method)});
  const json& g = s.stamp.value("git", json::object());
  rows.push_back({"git", esc(g.value("revision", std::string("?"))) + (g.value("dirty", false) ? " (dirty)" : "")});
  rows.push_back({"clock", code(num(r.data.value("clock", json())))});
  return kv_table(rows, "stamp");
}

struct CellContext {
  const View* view;
  const StoredResult* r;
  const StoredSitting* s;
  const ComposedCell* composed;
};

// The members of a paired result's group, from the same sitting (the same rounds).
std::vector<const StoredResult*> group_of(const StoredResult& r, const StoredSitting& s) {
  std::vector<const StoredResult*> out;
  const PairingRecord* p = pairing_of(r);
  if (!p || !p->members) return out;
  for (const auto& name : *p->members)
    if (const StoredResult* m = s.find(member_cell(name, r.cell.transport, r.cell.model, r.cell.loop));
        m && m->measured())
      out.push_back(m);
  return out;
}

// The race: a paired group's members by their ratio to the reference, each
// with its interval as a bar. `level` is said in words and drawn in grey.
std::string race_html(const StoredResult& r, const StoredSitting& s) {
  struct Entry {
    std::string name, verdict;
    double median = 1, low = 1, high = 1;
    bool reference = false;
  };
  std::vector<Entry> es;
  std::string reference;
  for (const StoredResult* m : group_of(r, s)) {
    const PairingRecord* p = pairing_of(*m);
    if (!p) continue;  // a member of another kind of sitting: no ratio to draw
    reference = p->reference.value_or("");
    Entry e{m->cell.member(), p->verdict.value_or("")};
    e.reference = m->cell.member() == reference;
    if (p->ratio) {
      e.median = p->ratio->median;
      e.low = p->ratio->low;
      e.high = p->ratio->high;
    } else if (!e.reference) {
      continue;  // no round beside a measured reference
    }
    es.push_back(e);
  }
  if (es.size() < 2) return "";
  std::stable_sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.median < b.median; });
  double lo = 1, hi = 1;
  for (const auto& e : es) lo = std::min(lo, e.low), hi = std::max(hi, e.high);
  lo *= 0.97;
  hi *= 1.03;
  const double w = 300;
  auto x = [&](double v) { return fixed(10 + w * (v - lo) / (hi - lo), 1); };
  const PairingRecord& p = *pairing_of(r);  // group_of found the members through it
  std::ostringstream h;
  h << "<h2>Race</h2>\n<p>The members of group " << esc(p.group.value_or("")) << " by the median of their per-round "
    << "p50 ratios to " << esc(reference) << ", with 95% intervals, over "
    << (p.rounds ? std::to_string(*p.rounds) : "-") << " rounds (stopped: " << esc(p.stop.value_or(""))
    << ", widest interval +-" << fixed(100 * p.width_reached.value_or(0.0), 1)
    << "%). A member whose interval reaches within " << fixed(100 * p.resolution.value_or(0.0), 0)
    << "% of 1 is level with " << esc(reference)
    << ": no order among level members is claimed.</p>\n<table class=\"race\"><thead><tr><th>member</th>"
       "<th>ratio [95% interval]</th><th>against "
    << esc(reference) << "</th><th></th></tr></thead><tbody>\n";
  for (const auto& e : es) {
    std::string words = e.reference ? "the reference"
                        : e.verdict == "level"
                            ? "level with " + reference
                            : e.verdict + " than " + reference + " by " + fixed(100 * std::abs(e.median - 1), 1) + "%";
    std::string cls = e.reference ? "reference" : e.verdict;
    h << "<tr class=\"race-" << esc(cls) << "\"" << (e.name == r.cell.member() ? " aria-current=\"true\"" : "")
      << "><th>" << esc(e.name) << "</th><td>"
      << (e.reference ? std::string("1") : fixed(e.median, 3) + " [" + fixed(e.low, 3) + ", " + fixed(e.high, 3) + "]")
      << "</td><td>" << esc(words) << "</td><td><svg class=\"race-bar\" width=\"320\" height=\"16\" role=\"img\" "
      << "aria-label=\"" << esc(words) << "\"><line class=\"one\" x1=\"" << x(1) << "\" x2=\"" << x(1)
      << "\" y1=\"0\" y2=\"16\"/><rect x=\"" << x(e.low) << "\" y=\"5\" width=\""
      << fixed(std::max(1.0, w * (e.high - e.low) / (hi - lo)), 1) << "\" height=\"6\"/><line class=\"median\" x1=\""
      << x(e.median) << "\" x2=\"" << x(e.median) << "\" y1=\"2\" y2=\"14\"/></svg></td></tr>\n";
  }
  h << "</tbody></table>\n";
  return h.str();
}

// What the lab says of the cell: its state, why, its attempts, its flavour's check and its workers.
std::string lab_html(const StoredResult& r) {
  const json& lab = r.data.value("lab", json::object());
  std::vector<std::pair<std::string, std::string>> labrows = {{"state", esc(num(lab.value("state", json())))},
                                                              {"reason", esc(num(lab.value("reason", json())))}};
  if (lab.contains("attempts")) labrows.push_back({"attempts", esc(num(lab["attempts"]))});
  if (lab.contains("failed_attempts") && !lab["failed_attempts"].empty())
    labrows.push_back({"failed attempts", esc(argv_text(lab["failed_attempts"]))});
  if (lab.contains("check")) labrows.push_back({"check-flavour", code(num(lab["check"]))});
  if (lab.contains("workers")) labrows.push_back({"workers", code(num(lab["workers"]))});
  return kv_table(labrows, "lab");
}

// The CDF of a measured cell with the other flavours of its transport, model and loop laid over it.
std::string cdf_html(const View& v, const StoredResult& r, const StoredSitting& s) {
  std::ostringstream h;
  json series = json::array();
  series.push_back(cdf_series(r, r.cell.member(), true));
  std::vector<std::string> peers;
  const std::vector<const StoredResult*> group = group_of(r, s);
  if (!group.empty()) {  // paired: only the members measured in the same rounds
    for (const StoredResult* m : group) {
      if (m == &r) continue;
      series.push_back(cdf_series(*m, m->cell.member(), false));
      peers.push_back(m->cell.member());
    }
  } else {
    for (const auto& [l, fl] : v.m->cols) {
      if (l != r.cell.loop || fl == r.cell.member()) continue;
      const ComposedCell* p = v.m->at(member_cell(fl, r.cell.transport, r.cell.model, l));
      if (!p || !p->shown || !p->shown->measured() || pairing_of(*p->shown)) continue;
      series.push_back(cdf_series(*p->shown, fl, false));
      peers.push_back(fl + " (sitting " + p->from->name + ")");
    }
  }
  std::string view = r.cell.loop == "open" ? "response" : "service";
  h << "<h2>CDF of " << view << " time</h2>\n<p>Cumulative fraction of orders against latency (log axis) from "
    << "the raw samples of every run";
  if (!peers.empty())
    h << ", with " << esc(join(peers, ", ")) << " laid over it"
      << (group.empty() ? "" : " (the same rounds of this sitting; each round weighs the same)");
  h << ".</p>\n<div class=\"cdf\" id=\"cdf\" data-view=\"" << view << "\"></div>\n"
    << "<script type=\"application/json\" id=\"cdf-data\">" << script_json({{"view", view}, {"series", series}})
    << "</script>\n<noscript><p>The chart needs scripts; its points are in the result file.</p></noscript>\n";
  if (site_asset("uPlot.iife.min.js").empty())
    h << "<p class=\"flag\">This bench-run was built without the chart library (lab/site, npm ci): no chart.</p>\n";
  return h.str();
}

void write_cell_page(const fs::path& site, const CellContext& cc) {
  const View& v = *cc.view;
  const StoredResult& r = *cc.r;
  std::string root = v.root + "../";
  PageFrame f;
  f.title = r.cell.id();
  f.root = root;
  f.kind = "cell";
  f.banner = v.banner;
  f.crumbs = {{v.host->name, root + v.host->name + "/index.html"}, {v.title, "../index.html"}, {r.cell.id(), ""}};
  std::ostringstream h;
  h << "<p class=\"cell-verdict " << verdict_class(r) << "\">";
  if (r.measured()) {
    h << "Verdict <strong class=\"verdict\">" << esc(r.verdict) << "</strong>";
    auto reasons = r.data.value("verdict_reasons", std::vector<std::string>{});
    if (!reasons.empty())
      h << ": " << esc(join(reasons, "; "));
    else
      h << ": every run complete, every CV under its limit";
  } else if (r.state == CellState::refused) {
    h << "<strong class=\"verdict\">refused</strong> by the audit: " << esc(r.reason)
      << ". No figures are published for this cell.";
  } else {
    h << "<strong class=\"verdict\">" << esc(r.word()) << "</strong>: " << esc(r.reason);
  }
  h << "</p>\n";
  if (cc.composed && cc.composed->newer_unmeasured)
    h << "<p class=\"flag\">The newest attempt at this cell, in sitting " << esc(cc.composed->newer_from->name) << " ("
      << date_of(cc.composed->newer_from->start) << "), was " << esc(cc.composed->newer_unmeasured->word()) << ": "
      << esc(cc.composed->newer_unmeasured->reason) << ". The figures below are the newest measured ones.</p>\n";
  h << "<p>From sitting <a href=\"" << root << esc(v.host->name) << "/sitting/" << esc(cc.s->name) << "/index.html\">"
    << esc(cc.s->name) << "</a> (" << when(cc.s->start) << "), method " << esc(r.method)
    << ". The result file: <a href=\"" << root << "../" << esc(r.file) << "\">"
    << esc(fs::path(r.file).filename().string()) << "</a>.</p>\n";
  if (r.measured()) {
    h << "<h2>Figures (us)</h2>\n" << latency_table(r) << race_html(r, *cc.s);
    h << cdf_html(v, r, *cc.s);
    h << "<h2>Judged against</h2>\n" << judged_html(r);
    h << "<h2>Runs</h2>\n" << runs_table(r.data.value("runs", json::array()));
  }
  h << "<h2>Effective settings</h2>\n" << effective_html(r);
  h << "<h2>Stamp</h2>\n" << stamp_html(r, *cc.s);
  h << "<h2>Audit</h2>\n" << audit_html(r.data.value("audit", json()));
  h << "<h2>Lab</h2>\n" << lab_html(r);
  f.chart = r.measured();
  write_file(site / v.dir / "cell" / cell_page_name(r.cell), page(f, h.str()));
}

void write_cell_pages(const fs::path& site, const View& v) {
  for (const auto& [id, c] : v.m->cells)
    if (c.shown) write_cell_page(site, {&v, c.shown, c.from, &c});
}

// ---------------------------------------------------------------- host pages

std::string sittings_table(const Host& h, const std::string& root, const std::vector<Era>& eras) {
  std::ostringstream o;
  o << "<table class=\"sittings\"><thead><tr><th>Sitting</th><th>Started</th><th>Matrix</th><th>Method</th>"
       "<th>Epoch</th><th>Outcome</th></tr></thead><tbody>\n";
  for (auto it = h.sittings.rbegin(); it != h.sittings.rend(); ++it) {
    const StoredSitting& s = *it;
    std::vector<std::string> counts;
    for (const auto& [k, n] : s.outcome()) counts.push_back(std::to_string(n) + " " + k);
    bool current = std::any_of(eras.begin(), eras.end(),
                               [&](const Era& e) { return e.current && e.epoch == s.epoch && e.method == s.method; });
    const std::string href = s.sweep ? root + esc(h.name) + "/sweep/" + esc(s.name) + ".html"
                                     : root + esc(h.name) + "/sitting/" + esc(s.name) + "/index.html";
    o << "<tr data-sitting=\"" << esc(s.name) << "\"><td><a href=\"" << href << "\">" << esc(s.name) << "</a></td><td>"
      << when(s.start) << "</td><td>" << esc(s.matrix_name) << "</td><td>" << esc(s.method) << "</td><td>"
      << esc(s.epoch) << (current ? "" : " (archive)") << "</td><td>" << esc(join(counts, ", ")) << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string era_label(const Era& e) { return "epoch " + e.epoch + ", method " + e.method; }

std::string archive_banner(const Era& e, const Era* current, const std::string& host, const std::string& current_href,
                           const std::vector<Era>& eras) {
  std::ostringstream b;
  if (current && e.epoch != current->epoch) {
    // The boundary: the first sitting of the epoch after this one.
    std::string boundary = current->first;
    for (const auto& x : eras)
      if (x.epoch != e.epoch && x.first > e.last && (boundary.empty() || x.first < boundary)) boundary = x.first;
    b << "<strong>Hardware epoch boundary (" << date_of(boundary) << ").</strong> This is the archived "
      << esc(e.cpu_model) << " matrix of " << esc(host) << " (" << esc(cpu_line(e.cpu_model, e.cpu_text)) << "; epoch "
      << esc(e.epoch) << ", " << date_of(e.first) << " to " << date_of(e.last) << "). " << esc(host) << " now runs "
      << esc(cpu_line(current->cpu_model, current->cpu_text)) << " (epoch " << esc(current->epoch)
      << "). No figure below is comparable with the current results, and none of them appears there. "
      << "<a href=\"" << current_href << "\">Open the current matrix.</a>";
  } else {
    b << "<strong>Historical method " << esc(e.method) << " archive&mdash;not the current results.</strong> "
      << "The current method is " << kMethodVersion << ": " << esc(method_summary()) << ". Figures of two method "
      << "versions are never compared. <a href=\"" << current_href << "\">Open the current method " << kMethodVersion
      << " matrix.</a>";
  }
  return b.str();
}

std::string settings_summary(const ComposedMatrix& m) {
  if (!m.reference) return "";
  const StoredSitting& s = *m.reference;
  std::ostringstream o;
  std::vector<std::string> sessions;
  for (const auto& mo : kModels)
    if (auto it = s.matrix.sessions.find(mo); it != s.matrix.sessions.end())
      sessions.push_back(mo + " " + std::to_string(it->second));
  const json eff = s.stamp.value("effective", json::object());
  o << "Settings: matrix <code>" << esc(s.matrix_name) << "</code> as sitting " << esc(s.name) << " ran it: sessions "
    << esc(join(sessions, ", ")) << "; open rate " << s.matrix.rate << " orders/s; closed think " << s.matrix.think_us
    << " us; " << s.matrix.runs << " runs of " << fixed(s.matrix.duration_s, 1) << " s after "
    << fixed(s.matrix.warmup_s, 1) << " s warm-up; network " << esc(eff.value("network", std::string("loopback")))
    << "; kernel busy poll " << eff.value("busy_poll_usecs", 0) << " us; idle " << esc(eff.value("idle", s.matrix.idle))
    << "; audit " << (eff.value("audit", true) ? "on" : "off") << ".";
  return o.str();
}

std::string era_body(const View& v, const Era& e, const std::string& intro) {
  std::ostringstream h;
  h << "<p class=\"era\">" << esc(cpu_line(e.cpu_model, e.cpu_text)) << "; hardware epoch <code>" << esc(e.epoch)
    << "</code>; method <code>" << esc(e.method) << "</code>.</p>\n";
  if (!intro.empty()) h << intro;
  h << "<p class=\"settings\">" << settings_summary(*v.m) << "</p>\n";
  h << matrix_html(v) << legend_html() << provenance_html(v);
  if (!v.m->left_out.empty()) {
    h << "<section class=\"other-settings\"><h2>Sittings with other settings</h2>\n<p>Measured in this epoch and "
         "method with settings other than the reference's, so listed with their own matrices and never mixed "
         "into this one:</p><ul>\n";
    for (const auto* s : v.m->left_out) {
      std::vector<std::string> diffs;
      // The settings of the first of its cells, against the reference's for the same cell.
      if (!s->results.empty()) {
        const Cell& c = s->results.front().cell;
        diffs = settings_differences(v.m->reference->settings_for(c.transport, c.model, c.loop),
                                     s->results.front().settings);
      }
      h << "<li><a href=\"" << v.root << esc(v.host->name) << "/sitting/" << esc(s->name) << "/index.html\">"
        << esc(s->name) << "</a> (" << date_of(s->start) << ", matrix " << esc(s->matrix_name) << ")"
        << (diffs.empty() ? "" : ": " + esc(join(diffs, "; "))) << "</li>\n";
    }
    h << "</ul></section>\n";
  }
  return h.str();
}

// The host's load sweeps, newest first, each with its flavours and knees.
std::string sweeps_list(const Host& host) {
  std::ostringstream o;
  int n = 0;
  for (auto it = host.sittings.rbegin(); it != host.sittings.rend(); ++it) {
    if (!it->sweep) continue;
    std::vector<std::string> knees;
    for (const auto& doc : it->sweeps) {
      const SweepRecord d = sweep_record_from_json(doc);
      knees.push_back(d.flavour + " " + d.series + " knee " +
                      (d.knee ? std::to_string(d.knee->x) + (d.by_rate() ? "/s" : " sessions") : "none"));
    }
    o << "<li><a href=\"sweep/" << esc(it->name) << ".html\">" << esc(it->name) << "</a> (" << when(it->start)
      << "): " << esc(join(knees, "; ")) << "</li>\n";
    ++n;
  }
  if (!n) return "";
  return "<section id=\"sweeps\"><h2>Load sweeps</h2>\n<ul class=\"sweeps\">\n" + o.str() + "</ul></section>\n";
}

// A host's place in its eras: every era, and the current one (null when none is).
struct HostEras {
  const Host* host = nullptr;
  std::vector<Era> eras;
  const Era* current = nullptr;
};

// Each archived matrix's page and cell pages; returns the list that links them ("" without archives).
std::string write_archives(const fs::path& site, const HostEras& he) {
  const std::string hn = he.host->name;
  std::ostringstream archives;
  int n_archives = 0;
  for (const auto& e : he.eras) {
    if (e.current) continue;
    ++n_archives;
    const ComposedMatrix m = compose_era(e);
    View v;
    v.host = he.host;
    v.m = &m;
    v.dir = hn + "/archive/" + e.id() + "/";
    v.root = "../../../";
    v.title = "archive " + e.id();
    v.banner = archive_banner(e, he.current, hn, v.root + hn + "/index.html", he.eras);
    number_sittings(v);
    PageFrame f;
    f.title = hn + ": archived matrix, " + era_label(e);
    f.root = v.root;
    f.kind = "matrix archive";
    f.banner = v.banner;
    f.crumbs = {{hn, "../../index.html"}, {"archive " + e.id(), ""}};
    write_file(site / v.dir / "index.html", page(f, era_body(v, e, "")));
    write_cell_pages(site, v);
    archives << "<li><a href=\"archive/" << esc(e.id()) << "/index.html\">" << esc(era_label(e))
             << "</a>: " << esc(cpu_line(e.cpu_model, e.cpu_text)) << ", " << date_of(e.first) << " to "
             << date_of(e.last) << ", " << e.sittings.size() << (e.sittings.size() == 1 ? " sitting" : " sittings")
             << "</li>\n";
  }
  if (!n_archives) return "";
  return "<section id=\"archives\"><h2>Archives</h2>\n<ul>\n" + archives.str() + "</ul></section>\n";
}

// The host's index.html: its current matrix (composed and returned, with its cell pages), archives, sweeps, sittings.
ComposedMatrix write_current(const fs::path& site, const HostEras& he, const std::string& archives) {
  const Host& host = *he.host;
  const std::string hn = host.name;
  std::ostringstream body;
  body << "<p class=\"links\"><a href=\"host.html\">The host</a> &middot; <a href=\"compare.html\">Compare two "
          "sittings</a> &middot; <a href=\"#sittings\">Every sitting</a>"
       << (he.eras.size() > 1 ? " &middot; <a href=\"#archives\">Archives</a>" : "") << "</p>\n";
  ComposedMatrix cm;
  if (he.current) {
    cm = compose_era(*he.current);
    View v;
    v.host = &host;
    v.m = &cm;
    v.dir = hn + "/";
    v.root = "../";
    v.title = "current matrix";
    number_sittings(v);
    std::string intro;
    if (!cm.reference || !cm.reference->runs_reference_matrix())
      intro = "<p class=\"flag\">No sitting of the reference matrix (" + std::string(kReferenceMatrix) +
              ") in this epoch and method yet: this matrix takes the newest sitting's settings.</p>\n";
    body << era_body(v, *he.current, intro);
    write_cell_pages(site, v);
  } else {
    body << "<p class=\"flag\">No sitting of this host was measured with the current method (" << kMethodVersion
         << ") on its current hardware: every matrix of it is an archive.</p>\n";
  }
  body << archives << sweeps_list(host);
  body << "<section id=\"sittings\"><h2>Every sitting</h2>\n" << sittings_table(host, "../", he.eras) << "</section>\n";
  PageFrame f;
  f.title = hn + ": the current matrix";
  f.root = "../";
  f.kind = "matrix current";
  f.crumbs = {{hn, ""}};
  write_file(site / hn / "index.html", page(f, body.str()));
  return cm;
}

// A sitting's stamp as its page shows it.
std::string sitting_stamp_html(const StoredSitting& s) {
  return kv_table(
      {{"started", when(s.start)},
       {"ended", s.end.empty() ? "(unfinished or interrupted)" : when(s.end)},
       {"matrix", esc(s.matrix_name)},
       {"method", esc(s.method)},
       {"CPU", esc(cpu_line(s.cpu_model, s.cpu_text))},
       {"hardware epoch", esc(s.epoch)},
       {"kernel", esc(s.stamp.value("kernel", std::string()))},
       {"git", esc(s.stamp.value("git", json::object()).value("revision", std::string("?")))},
       {"command", code(s.stamp.value("command_line", std::string()))},
       {"overrides", code(num(s.stamp.value("overrides", json::object())))},
       {"effective", code(num(s.stamp.value("effective", json::object())))},
       {"network", esc(s.stamp.value("effective", json::object()).value("network", std::string("loopback"))) +
                       (s.stamp.contains("wire") ? ": " + esc(wire_text(s.stamp["wire"])) : "")},
       {"libvma's thread", esc(s.stamp.value("vma_internal_thread", json()).is_object()
                                   ? s.stamp["vma_internal_thread"].value("env", std::string())
                                   : std::string("not placed (no [transports.vma] internal_thread_core)"))}},
      "sitting-stamp");
}

// Why a sitting of the current era gives no cell to the current matrix `cm` ("" when it gives some).
std::string not_in_current_html(const StoredSitting& s, const Era* era, const HostEras& he, const ComposedMatrix& cm) {
  if (!era || !era->current || !he.current || cm.used.empty()) return "";
  const bool in_current = std::find(cm.used.begin(), cm.used.end(), &s) != cm.used.end();
  if (in_current || !cm.reference || s.results.empty()) return "";
  const Cell& c = s.results.front().cell;
  auto d = settings_differences(cm.reference->settings_for(c.transport, c.model, c.loop), s.results.front().settings);
  return std::string("<p class=\"flag\">No cell of this sitting is in the current matrix") +
         (d.empty() ? ": newer results replace them."
                    : ": its settings differ from the reference's (" + esc(join(d, "; ")) + ").") +
         "</p>\n";
}

// A sitting's own matrix page and its cell pages.
void write_sitting_page(const fs::path& site, const HostEras& he, const StoredSitting& s, const ComposedMatrix& cm) {
  const std::string hn = he.host->name;
  ComposedMatrix sm = compose_sitting(s);
  View v;
  v.host = he.host;
  v.m = &sm;
  v.dir = hn + "/sitting/" + s.name + "/";
  v.root = "../../../";
  v.title = "sitting " + s.name;
  const Era* era = nullptr;
  for (const auto& e : he.eras)
    if (e.epoch == s.epoch && e.method == s.method) era = &e;
  if (era && !era->current) v.banner = archive_banner(*era, he.current, hn, v.root + hn + "/index.html", he.eras);
  std::ostringstream b;
  b << sitting_stamp_html(s) << provenance_html(s.stamp) << not_in_current_html(s, era, he, cm);
  b << "<p>The stamp: <a href=\"" << v.root << "../" << esc(hn) << "/" << esc(s.name)
    << "/sitting.json\">sitting.json</a>.</p>\n";
  b << matrix_html(v) << legend_html();
  PageFrame pf;
  pf.title = hn + ": sitting " + s.name;
  pf.root = v.root;
  pf.kind = "matrix sitting";
  pf.banner = v.banner;
  pf.crumbs = {{hn, "../../index.html"}, {"sitting " + s.name, ""}};
  write_file(site / v.dir / "index.html", page(pf, b.str()));
  write_cell_pages(site, v);
}

void write_host(const fs::path& site, const Host& host, std::vector<std::string>& index_lines) {
  HostEras he{&host, eras_of(host), nullptr};
  for (const auto& e : he.eras)
    if (e.current) he.current = &e;
  // Archives first (the current page links to them).
  const std::string archives = write_archives(site, he);
  const ComposedMatrix cm = write_current(site, he, archives);
  // Every sitting's own matrix (a sweep has its own page instead).
  for (const auto& s : host.sittings)
    if (!s.sweep) write_sitting_page(site, he, s, cm);
  const long n_archives = std::count_if(he.eras.begin(), he.eras.end(), [](const Era& e) { return !e.current; });
  const std::string hn = host.name;
  std::string cpu = he.current ? cpu_line(he.current->cpu_model, he.current->cpu_text)
                               : cpu_line(host.sittings.back().cpu_model, host.sittings.back().cpu_text);
  index_lines.push_back("<tr><td><a href=\"" + esc(hn) + "/index.html\">" + esc(hn) + "</a></td><td>" + esc(cpu) +
                        "</td><td>" + std::to_string(host.sittings.size()) + "</td><td>" +
                        when(host.sittings.back().start) + "</td><td>" + std::to_string(n_archives) + "</td></tr>");
}

// ---------------------------------------------------------------- the host page

std::string core_map_html(const std::string& machine_text, const std::string& online_text) {
  Machine m;
  std::string why;
  try {
    // The recorded file, checked as a file of another host: its cores need not exist here.
    std::string text = machine_text;
    for (auto at = text.find("local = true"); at != std::string::npos; at = text.find("local = true"))
      text.replace(at, 12, "local = false");
    m = parse_machine(text, "sitting.json machine_file");
  } catch (const std::exception& e) {
    return "<p class=\"flag\">The machine file cannot be read: " + esc(e.what()) + "</p>\n";
  }
  CoreSet online;
  try {
    online = parse_core_list(online_text);
  } catch (const std::exception&) {}
  std::map<int, std::string> role;
  for (int c : m.housekeeping) role[c] = "housekeeping";
  if (m.coordinator) role[*m.coordinator] = "coordinator";
  for (int c : m.server) role[c] = "server";
  for (int c : m.reserved) role[c] = "reserved";
  for (int c : m.client) role[c] = "client";
  for (int c : online) role.emplace(c, "other");
  std::ostringstream h;
  h << "<div class=\"coremap\" role=\"img\" aria-label=\"core map\">";
  for (const auto& [c, r] : role)
    h << "<div class=\"core core-" << r << "\" title=\"core " << c << ": " << r << "\"><span class=\"n\">" << c
      << "</span><span class=\"r\">" << r << "</span></div>";
  h << "</div>\n<p class=\"legend\">Housekeeping " << esc(format_core_list(m.housekeeping)) << "; coordinator "
    << (m.coordinator ? std::to_string(*m.coordinator)
                      : std::string("none (the pool's front door shares the first server core)"))
    << "; server " << esc(format_core_list(m.server)) << "; reserved " << esc(format_core_list(m.reserved))
    << "; client " << esc(format_core_list(m.client)) << ".</p>\n";
  h << "<h2>Network</h2>\n<p>Path <code>" << esc(m.network) << "</code>";
  if (m.network == "netns")
    h << ": namespaces joined by a veth pair, server " << esc(m.netns_server_addr) << ", client "
      << esc(m.netns_client_addr) << "/" << m.netns_prefix;
  if (m.network == "nic")
    h << ": the wire. Each pair's two ports are moved into two network namespaces with the addresses below, the "
         "server run in one and the client in the other, so the traffic crosses the cable; they are put back with "
         "their own addresses at the end";
  if (m.vma_internal_thread_core)
    h << ". libvma's thread: core " << *m.vma_internal_thread_core << " (VMA_INTERNAL_THREAD_AFFINITY)";
  h << ". Transports: " << esc(join(m.transports, ", ")) << "; kernel busy poll " << m.kernel_busy_poll_usecs
    << " us.</p>\n";
  if (!m.nics.empty()) {
    h << "<table "
         "class=\"nics\"><thead><tr><th>pair</th><th>server</th><th>client</th><th>transports</th></tr></"
         "thead><tbody>\n";
    for (const auto& n : m.nics)
      h << "<tr><td>" << esc(n.name) << "</td><td>"
        << esc(n.server_if + " " + n.server_addr + "/" + std::to_string(n.prefix)) << "</td><td>"
        << esc(n.client_if + " " + n.client_addr + "/" + std::to_string(n.prefix)) << "</td><td>"
        << esc(join(n.transports, ", ")) << "</td></tr>\n";
    h << "</tbody></table>\n";
  }
  return h.str();
}

// ---------------------------------------------------------------- sweeps

std::string sweep_figure(const std::optional<LatencyRecord>& l, std::optional<double> LatencyRecord::*k) {
  return l && (*l).*k ? us(*((*l).*k)) : "-";
}

// A step's row: its load, its figures and its verdict.
std::string sweep_step_row(const SweepStepRecord& st, bool is_knee) {
  using L = LatencyRecord;
  auto n = [](const std::optional<double>& v, int digits) { return v ? fixed(*v, digits) : std::string("-"); };
  std::string verdict = st.measured() ? st.verdict.value_or("?") : (st.state.empty() ? "?" : st.state);
  if (st.limit) verdict += " (" + *st.limit + ")";
  const std::optional<double> rss = st.server_rss_kb();
  std::ostringstream h;
  h << "<tr" << (is_knee ? " class=\"knee\"" : "") << "><td>" << st.step << "</td><td>" << st.rate << "</td><td>"
    << st.sessions << "</td><td>" << n(st.achieved_rate, 0) << "</td>";
  for (const auto* view : {&st.response, &st.service})
    for (const auto k : {&L::p50, &L::p99, &L::p999, &L::max}) h << "<td>" << sweep_figure(*view, k) << "</td>";
  h << "<td>" << (st.max_in_flight ? std::to_string(*st.max_in_flight) : "-") << "</td><td>"
    << sweep_figure(st.lateness, &L::p50) << "</td><td>" << n(st.server_cpu_us_per_order(), 2) << "</td><td>"
    << (rss ? fixed(*rss / 1024, 1) : std::string("-")) << "</td><td class=\"verdict\">" << esc(verdict)
    << (is_knee ? " &middot; <strong>knee</strong>" : "") << "</td></tr>\n";
  return h.str();
}

// A series' steps as a table that reads without scripts.
std::string sweep_steps_table(const SweepRecord& d) {
  std::ostringstream h;
  h << "<table class=\"sweep-steps\" data-flavour=\"" << esc(d.flavour) << "\" data-series=\"" << esc(d.series)
    << "\"><thead><tr><th>Step</th><th>Rate/s</th><th>Sessions</th><th>Achieved/s</th>"
    << "<th>Response p50</th><th>p99</th><th>p99.9</th><th>max</th><th>Service p50</th><th>p99</th><th>p99.9</th>"
    << "<th>max</th><th>In flight</th><th>Client late p50</th><th>Server CPU/order (us)</th><th>Server RSS (MB)</th>"
    << "<th>Verdict</th></tr></thead><tbody>\n";
  // Rows by rate or sessions; the step number keeps the order they ran in.
  std::vector<SweepStepRecord> steps = d.steps;
  std::stable_sort(steps.begin(), steps.end(),
                   [&](const SweepStepRecord& a, const SweepStepRecord& b) { return a.x(d.series) < b.x(d.series); });
  for (const auto& st : steps) h << sweep_step_row(st, d.knee && d.knee->step == st.step);
  h << "</tbody></table>\n";
  return h.str();
}

std::string knee_text(const SweepRecord& d) {
  const char* unit = d.by_rate() ? "/s" : " sessions";
  std::string t = "Knee: ";
  t += d.knee ? std::to_string(d.knee->x) + unit + " (the highest step not saturated)"
              : std::string("none (no step unsaturated)");
  if (d.saturated_from) {
    t += "; saturated from " + std::to_string(d.saturated_from->x) + unit;
    if (d.saturated_from->limit == "client")
      t += ": the client could not keep its schedule there, so the server's knee is at least the knee shown";
    else if (d.saturated_from->limit == "server")
      t += ": the server was the limit";
  }
  if (d.memory_per_session_bytes)
    t += ". Server memory per session: " + fixed(*d.memory_per_session_bytes, 0) +
         " bytes (the slope of its resident memory over the session counts)";
  return t + ".";
}

// A series' points for the chart: its measured steps' figures.
json sweep_line(const SweepRecord& d) {
  json points = json::array();
  for (const auto& st : d.steps)
    if (st.measured())
      points.push_back({{"x", st.x(d.series)},
                        {"response", st.response ? to_json(*st.response) : json()},
                        {"service", st.service ? to_json(*st.service) : json()},
                        {"verdict", st.verdict ? json(*st.verdict) : json()}});
  return {{"flavour", d.flavour}, {"points", points}, {"knee", d.knee ? json(d.knee->x) : json()}};
}

void write_sweep_page(const fs::path& site, const Host& host, const StoredSitting& s) {
  const json sw = s.stamp.value("sweep", json::object());
  PageFrame f;
  f.title = host.name + ": sweep " + s.name;
  f.root = "../../";
  f.kind = "sweep";
  f.chart = true;
  f.crumbs = {{host.name, "../index.html"}, {"sweep " + s.name, ""}};
  std::ostringstream b;
  b << kv_table({{"started", when(s.start)},
                 {"ended", s.end.empty() ? "(unfinished or interrupted)" : when(s.end)},
                 {"flavours", esc(join(sw.value("flavours", std::vector<std::string>{}), ", "))},
                 {"settings", code(num(sw.value("settings", json::object())))},
                 {"method", esc(s.method)},
                 {"CPU", esc(cpu_line(s.cpu_model, s.cpu_text))},
                 {"git", esc(s.stamp.value("git", json::object()).value("revision", std::string("?")))},
                 {"command", code(s.stamp.value("command_line", std::string()))}},
                "sitting-stamp");
  for (const auto& n : sw.value("notes", std::vector<std::string>{})) b << "<p class=\"flag\">" << esc(n) << "</p>\n";
  b << "<p>Each step is an open-loop cell of a few short runs, judged by the sitting's rules; the knee of a series is "
       "its highest step whose verdict is not saturated (achieved rate, in-flight cap, response over service). "
       "The stamp: <a href=\"../../../"
    << esc(host.name) << "/" << esc(s.name) << "/sitting.json\">sitting.json</a>.</p>\n";
  for (const auto& [series, title] : std::vector<std::pair<std::string, std::string>>{
           {"rate", "Latency against offered rate"}, {"sessions", "Latency against sessions"}}) {
    json lines = json::array();
    std::ostringstream tables;
    for (const auto& doc : s.sweeps) {
      const SweepRecord d = sweep_record_from_json(doc);
      if (d.series != series) continue;
      lines.push_back(sweep_line(d));
      tables << "<h3>" << esc(d.flavour) << "</h3>\n<p class=\"knee-text\">" << esc(knee_text(d))
             << " The file: <a href=\"../../../" << esc(d.file.value_or("")) << "\">sweep.json</a>.</p>\n"
             << sweep_steps_table(d);
    }
    if (lines.empty()) continue;
    b << "<section class=\"sweep-series\" id=\"series-" << series << "\"><h2>" << title << "</h2>\n"
      << "<p>"
      << (series == "rate" ? "Aggregate open-loop rate offered (log axis)"
                           : "Sessions on the server (log axis), at one rate")
      << " against latency in us (log axis), one line per flavour; the ring marks each flavour's knee.</p>\n"
      << "<div class=\"sweep-chart\" id=\"sweep-" << series << "\" data-series=\"" << series << "\"></div>\n"
      << "<script type=\"application/json\" id=\"sweep-" << series << "-data\">"
      << script_json({{"series", series}, {"lines", lines}}) << "</script>\n"
      << "<noscript><p>The chart needs scripts; its figures are in the tables below.</p></noscript>\n"
      << tables.str() << "</section>\n";
  }
  if (site_asset("uPlot.iife.min.js").empty())
    b << "<p class=\"flag\">This bench-run was built without the chart library (lab/site, npm ci): no chart.</p>\n";
  write_file(site / host.name / "sweep" / (s.name + ".html"), page(f, b.str()));
}

void write_sweep_pages(const fs::path& site, const Host& host) {
  for (const auto& s : host.sittings)
    if (s.sweep) write_sweep_page(site, host, s);
}

void write_host_page(const fs::path& site, const Host& host) {
  const StoredSitting& s = host.sittings.back();
  const std::vector<Era> eras = eras_of(host);
  std::ostringstream h;
  h << "<p>As its newest sitting, " << esc(s.name) << " (" << when(s.start) << "), recorded it.</p>\n";
  h << kv_table({{"CPU", esc(cpu_line(s.cpu_model, s.cpu_text))},
                 {"hardware epoch", esc(s.epoch)},
                 {"kernel", esc(s.stamp.value("kernel", std::string()))},
                 {"online cores", esc(s.stamp.value("online_cores", std::string()))},
                 {"machine file", esc(s.stamp.value("machine_source", std::string()))}},
                "host-facts");
  if (std::string prov = provenance_html(s.stamp); !prov.empty()) h << "<h2>Host provenance</h2>\n" << prov;
  h << "<h2>Core map</h2>\n"
    << core_map_html(s.stamp.value("machine_file", std::string()), s.stamp.value("online_cores", std::string()));
  h << "<h2>Sysctls</h2>\n";
  std::vector<std::pair<std::string, std::string>> rows;
  const json sysctls = s.stamp.value("sysctls", json::object());
  for (const auto& [k, v] : sysctls.items()) rows.push_back({k, esc(num(v))});
  h << kv_table(rows, "sysctls");
  const json notes = s.stamp.value("machine_notes", json::array());
  if (notes.is_array() && !notes.empty()) {
    h << "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : notes) h << "<li>" << esc(num(n)) << "</li>\n";
    h << "</ul>\n";
  }
  h << "<h2>The machine file</h2>\n<pre class=\"machine-file\">" << esc(s.stamp.value("machine_file", std::string()))
    << "</pre>\n";
  h << "<h2>Epochs and methods</h2>\n<table "
       "class=\"eras\"><thead><tr><th>epoch</th><th>method</th><th>CPU</th><th>first</th>"
       "<th>last</th><th>sittings</th><th>page</th></tr></thead><tbody>\n";
  for (const auto& e : eras)
    h << "<tr><td>" << esc(e.epoch) << "</td><td>" << esc(e.method) << "</td><td>"
      << esc(cpu_line(e.cpu_model, e.cpu_text)) << "</td><td>" << date_of(e.first) << "</td><td>" << date_of(e.last)
      << "</td><td>" << e.sittings.size() << "</td><td><a href=\""
      << (e.current ? std::string("index.html") : "archive/" + esc(e.id()) + "/index.html") << "\">"
      << (e.current ? "current" : "archive") << "</a></td></tr>\n";
  h << "</tbody></table>\n<h2>Sittings</h2>\n" << sittings_table(host, "../", eras);
  PageFrame f;
  f.title = host.name + ": the host";
  f.root = "../";
  f.kind = "host";
  f.crumbs = {{host.name, "index.html"}, {"host", ""}};
  write_file(site / host.name / "host.html", page(f, h.str()));
}

// ---------------------------------------------------------------- compare

// Every sitting of a host as the comparison picker reads it.
json compare_data(const Host& host) {
  json out = json::array();
  for (const auto& s : host.sittings) {
    json cells = json::object();
    for (const auto& r : s.results) {
      json settings = json::object();
      for (const auto& [k, v] : r.settings) settings[k] = v;
      BinaryInfo b = server_binary_of(s, r.cell.flavour);
      settings["binary"] = r.binary.empty() ? (b.sha256.empty() ? "unknown" : b.sha256.substr(0, 12)) : r.binary;
      settings["build flags"] = b.flags.empty() ? "unknown" : b.flags;
      double p = r.p50("service");
      int digits = r.cell.loop == "open" ? 3 : 2;
      cells[r.cell.id()] = {
          {"fig", r.measured() && p >= 0 ? fixed(p, digits) : r.word()}, {"word", r.word()}, {"settings", settings}};
    }
    out.push_back({{"name", s.name},
                   {"start", s.start},
                   {"epoch", s.epoch},
                   {"cpu", s.cpu_model + (s.cpu_text.empty() ? "" : ", " + s.cpu_text)},
                   {"cpu_model", s.cpu_model},
                   {"method", s.method},
                   {"matrix", s.matrix_name},
                   {"machine", s.stamp.value("machine", host.name)},
                   {"cells", cells}});
  }
  return out;
}

std::string comparison_html(const Comparison& c) {
  std::ostringstream h;
  if (!c.ok) {
    h << "<p class=\"refusal\">" << esc(c.refusal) << "</p>\n";
    return h.str();
  }
  h << "<p class=\"cmp-head\">" << esc(c.flavour) << ": <strong>" << esc(c.before)
    << "</strong> (before) against <strong>" << esc(c.now) << "</strong> (now). Machine " << esc(c.machine) << ", "
    << esc(c.cpu_model) << " (epoch " << esc(c.epoch) << "), method " << esc(c.method) << "; the " << esc(c.peer)
    << " column is from the later sitting.</p>\n";
  if (!c.differences.empty()) {
    h << "<div class=\"differences\"><p>Settings that differ between the two sittings (before -&gt; now), and the "
         "rows they touch:</p><ul>\n";
    for (const auto& d : c.differences) h << "<li>" << esc(d) << "</li>\n";
    h << "</ul></div>\n";
  }
  if (!c.host_differences.empty()) {
    h << "<div class=\"host-differences\"><p>The host differs between the two sittings (before -&gt; now):</p><ul>\n";
    for (const auto& d : c.host_differences) h << "<li>" << esc(d) << "</li>\n";
    h << "</ul></div>\n";
  }
  for (const auto& t : c.tables) {
    h << "<h2>" << esc(t.title) << " p50 in us</h2>\n<table class=\"compare\" data-loop=\"" << t.loop
      << "\"><thead><tr><th>Cell</th><th>Before</th><th>Now</th><th>" << esc(c.peer)
      << "</th><th>Settings that differ</th></tr></thead><tbody>\n";
    for (const auto& r : t.rows)
      h << "<tr><td>" << esc(r.cell) << "</td><td>" << esc(r.before) << "</td><td>" << esc(r.now) << "</td><td>"
        << esc(r.peer) << "</td><td class=\"differs\">" << esc(join(r.differs, "; ")) << "</td></tr>\n";
    h << "</tbody></table>\n";
  }
  h << "<h2>Verdicts that changed</h2>\n<ul class=\"changes\">\n";
  if (c.verdict_changes.empty()) h << "<li>None.</li>\n";
  for (const auto& v : c.verdict_changes) h << "<li>" << esc(v) << "</li>\n";
  h << "</ul>\n";
  if (c.only_before || c.only_now)
    h << "<p>" << c.only_now << " cells only in the later sitting, " << c.only_before
      << " only in the earlier one.</p>\n";
  return h.str();
}

void write_compare_page(const fs::path& site, const Host& host) {
  const std::vector<Era> eras = eras_of(host);
  // Without scripts: the two newest sittings of the current era's reference matrix, else the two newest.
  const StoredSitting *a = nullptr, *b = nullptr;
  for (const auto& e : eras)
    if (e.current) {
      std::vector<const StoredSitting*> ref;
      for (const auto* s : e.sittings)
        if (s->runs_reference_matrix()) ref.push_back(s);
      if (ref.size() < 2) ref = e.sittings;
      if (ref.size() >= 2) {
        a = ref[ref.size() - 2];
        b = ref.back();
      }
    }
  if (!a && host.sittings.size() >= 2) {
    a = &host.sittings[host.sittings.size() - 2];
    b = &host.sittings.back();
  }
  std::ostringstream h;
  h << "<form class=\"picker\" id=\"picker\" method=\"get\"><label>Before <select name=\"a\" id=\"pick-a\">";
  auto options = [&](const StoredSitting* sel) {
    std::ostringstream o;
    for (auto it = host.sittings.rbegin(); it != host.sittings.rend(); ++it)
      o << "<option value=\"" << esc(it->name) << "\"" << (&*it == sel ? " selected" : "") << ">" << esc(it->name)
        << " (" << date_of(it->start) << ", " << esc(it->matrix_name) << ")</option>";
    return o.str();
  };
  h << options(a) << "</select></label> <label>Now <select name=\"b\" id=\"pick-b\">" << options(b)
    << "</select></label> <label>Flavour <input name=\"flavour\" id=\"pick-flavour\" value=\"cpp\" "
       "size=\"10\"></label> "
       "<label>Peer <input name=\"peer\" id=\"pick-peer\" value=\"quickfix\" size=\"10\"></label> "
       "<button type=\"submit\">Compare</button></form>\n"
       "<noscript><p>Choosing two sittings needs scripts; below, the two newest sittings of the reference matrix. "
       "<code>bench-run compare A B</code> prints any pair.</p></noscript>\n<div id=\"comparison\">";
  if (a && b)
    h << comparison_html(compare(*a, *b, {}));
  else
    h << "<p>This host has a single sitting: nothing to compare yet.</p>";
  h << "</div>\n";
  write_file(site / host.name / "compare-data.js", "window.KITE_COMPARE = " + script_json(compare_data(host)) + ";\n");
  PageFrame f;
  f.title = host.name + ": compare two sittings";
  f.root = "../";
  f.kind = "compare";
  f.crumbs = {{host.name, "index.html"}, {"compare", ""}};
  f.extra_scripts = {"compare-data.js"};
  write_file(site / host.name / "compare.html", page(f, h.str()));
}

}  // namespace

std::string build_site(const std::string& results_dir) {
  std::vector<std::string> warnings;
  std::vector<Host> hosts = load_results(results_dir, &warnings);
  for (const auto& w : warnings) std::fprintf(stderr, "bench-run site: %s\n", w.c_str());
  const fs::path site = fs::path(results_dir) / "site";
  // Pages of sittings that no longer exist must not linger: the site is rebuilt whole.
  std::error_code ec;
  fs::remove_all(site, ec);
  fs::create_directories(site / "assets");
  for (const char* name : {"site.css", "site.js", "uPlot.iife.min.js", "uPlot.min.css"}) {
    std::string_view text = site_asset(name);
    if (!text.empty()) write_file(site / "assets" / name, std::string(text));
  }
  std::vector<std::string> lines;
  for (const auto& h : hosts) {
    write_host(site, h, lines);
    write_host_page(site, h);
    write_compare_page(site, h);
    write_sweep_pages(site, h);
  }
  std::ostringstream body;
  body << "<p>Latency of Kite's FIX engine and its peers, measured by <code>bench-run</code>: each host's current "
          "matrix (its current hardware epoch and method "
       << kMethodVersion
       << ", the reference matrix's settings), "
          "where every figure comes from, archives, CDFs and comparisons. Method "
       << kMethodVersion << ": " << esc(method_summary()) << ".</p>\n";
  if (hosts.empty())
    body << "<p>No sitting yet: <code>bench-run</code> runs one and writes this page at its end.</p>\n";
  else
    body << "<table class=\"hosts\"><thead><tr><th>Host</th><th>CPU</th><th>Sittings</th><th>Newest</th>"
            "<th>Archives</th></tr></thead><tbody>\n"
         << join(lines, "\n") << "\n</tbody></table>\n";
  PageFrame f;
  f.title = "Kite latency lab";
  f.root = "";
  f.kind = "index";
  std::string path = (site / "index.html").string();
  write_file(path, page(f, body.str()));
  return path;
}

}  // namespace kite::lab
