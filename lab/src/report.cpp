#include "kite/lab/report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kite/lab/host.hpp"
#include "kite/lab/method.hpp"
#include "kite/lab/util.hpp"

#include "result_schema.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kite::lab {

namespace {

template <typename T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::vector<std::string> ordered(const std::vector<std::string>& seen, const std::vector<std::string>& canon) {
  std::vector<std::string> out;
  for (const auto& c : canon)
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) out.push_back(c);
  for (const auto& s : seen) add_unique(out, s);
  return out;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string cell_text(const CellOutcome& o) {
  if (o.state == CellState::marked) return o.marker;
  if (o.state == CellState::measured) return (o.p50 >= 0 ? fixed(o.p50, 2) + " " : "") + o.verdict;
  return to_string(o.state);  // refused (no figures published), unbuilt, error
}

struct Grid {
  std::vector<std::string> rows;                          // transport/model
  std::vector<std::pair<std::string, std::string>> cols;  // loop, flavour
  std::map<std::string, const CellOutcome*> at;           // "row|loop|flavour"
};

Grid make_grid(const std::vector<CellOutcome>& cells) {
  std::vector<std::string> transports, models, loops, flavours;
  for (const auto& o : cells) {
    add_unique(transports, o.cell.transport);
    add_unique(models, o.cell.model);
    add_unique(loops, o.cell.loop);
    add_unique(flavours, o.cell.member());
  }
  std::vector<std::string> tcanon;
  for (const auto& t : known_transports()) tcanon.push_back(t.name);
  Grid g;
  for (const auto& t : ordered(transports, tcanon))
    for (const auto& m : ordered(models, kModels)) g.rows.push_back(t + "/" + m);
  for (const auto& l : ordered(loops, kLoops))
    for (const auto& f : flavours) g.cols.emplace_back(l, f);
  for (const auto& o : cells)
    g.at[o.cell.transport + "/" + o.cell.model + "|" + o.cell.loop + "|" + o.cell.member()] = &o;
  return g;
}

}  // namespace

std::string matrix_table(const std::vector<CellOutcome>& cells) {
  Grid g = make_grid(cells);
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> head = {"transport/model"};
  for (const auto& [l, f] : g.cols) head.push_back(l + " " + f);
  t.push_back(head);
  for (const auto& r : g.rows) {
    std::vector<std::string> line = {r};
    for (const auto& [l, f] : g.cols) {
      auto it = g.at.find(r + "|" + l + "|" + f);
      line.push_back(it == g.at.end() ? "-" : cell_text(*it->second));
    }
    t.push_back(line);
  }
  std::vector<std::size_t> w(head.size(), 0);
  for (const auto& line : t)
    for (std::size_t i = 0; i < line.size(); ++i) w[i] = std::max(w[i], line[i].size());
  std::ostringstream out;
  out << "p50 in us (closed: service time; open: response time) and verdict, or the cell's marker\n";
  for (std::size_t k = 0; k < t.size(); ++k) {
    out << "|";
    for (std::size_t i = 0; i < t[k].size(); ++i)
      out << " " << t[k][i] << std::string(w[i] - t[k][i].size(), ' ') << " |";
    out << "\n";
    if (k == 0) {
      out << "|";
      for (std::size_t i = 0; i < w.size(); ++i) out << std::string(w[i] + 2, '-') << "|";
      out << "\n";
    }
  }
  return out.str();
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string figure_text(const StoredResult* r, int digits) {
  if (!r) return "-";
  if (!r->measured()) return r->word();
  double v = r->p50("service");
  return v < 0 ? r->word() : fixed(v, digits);
}

std::string verdict_word(const StoredResult* r) { return r ? r->word() : "absent"; }

// A row's settings as compare names them: the cell's effective settings, its server binary and build flags.
Settings compared_settings(const StoredSitting& s, const StoredResult& r) {
  Settings out = r.settings;
  BinaryInfo b = server_binary_of(s, r.cell.flavour);
  out["binary"] = r.binary.empty() ? b.sha256.substr(0, 12) : r.binary;
  if (out["binary"].empty()) out["binary"] = "unknown";
  out["build flags"] = b.flags.empty() ? "unknown" : b.flags;
  return out;
}

struct Ratio {
  double median = 0, low = 0, high = 0;
  std::string verdict;
};

// A v2 member's ratio to its group's reference; nullopt for the reference or a member without one.
std::optional<Ratio> ratio_of(const StoredResult* r) {
  if (!r || !r->measured()) return std::nullopt;
  const PairingRecord* p = pairing_of(*r);
  if (!p || !p->ratio) return std::nullopt;
  return Ratio{p->ratio->median, p->ratio->low, p->ratio->high, p->verdict.value_or("")};
}

std::string ratio_text(const std::optional<Ratio>& r) {
  if (!r) return "-";
  return fixed(r->median, 3) + " [" + fixed(r->low, 3) + ", " + fixed(r->high, 3) + "] " + r->verdict;
}

// Every member's ratio in both sittings, in the later sitting's order.
void compare_ratios(const StoredSitting& a, const StoredSitting& b, Comparison& c) {
  for (const auto& rb : b.results) {
    const auto now = ratio_of(&rb);
    const auto before = ratio_of(a.find(rb.cell));
    if (!now && !before) continue;
    if (const PairingRecord* p = pairing_of(rb); c.reference.empty() && p) c.reference = p->reference.value_or("");
    std::string change = "-";
    if (now && before) change = now->low > before->high ? "up" : now->high < before->low ? "down" : "same";
    c.ratios.push_back({rb.cell.transport + "/" + rb.cell.model + "/" + rb.cell.loop, rb.cell.member(),
                        ratio_text(before), ratio_text(now), change});
  }
}

}  // namespace

namespace {

std::string date_of(const StoredSitting& s) { return s.start.size() >= 10 ? s.start.substr(0, 10) : s.start; }

// The newest of `from` with a measured result for the cell, else the newest with any.
std::pair<const StoredResult*, const StoredSitting*> newest(const std::vector<const StoredSitting*>& from,
                                                            const Cell& cell) {
  std::pair<const StoredResult*, const StoredSitting*> any{nullptr, nullptr};
  for (const StoredSitting* s : from)  // newest first
    if (const StoredResult* r = s->find(cell)) {
      if (r->measured()) return {r, s};
      if (!any.first) any = {r, s};
    }
  return any;
}

// A service-time figure of the result's summary; -1 when it has none.
double figure(const StoredResult& r, std::optional<double> LatencyRecord::*key) {
  const LatencyRecord* x = summary_of(r).view("service");
  return x && (x->*key) ? *(x->*key) : -1;
}

Comparison::Side side_of(const StoredResult* r, const StoredSitting* s) {
  Comparison::Side d;
  if (!r) {
    d.word = "-";
    return d;
  }
  d.sitting = s->name;
  d.date = date_of(*s);
  const BinaryInfo b = server_binary_of(*s, r->cell.flavour);
  const std::string sha = r->binary.empty() ? b.sha256 : r->binary;
  d.binary = (b.path.empty() ? std::string("unknown binary") : fs::path(b.path).filename().string()) +
             (sha.empty() ? "" : " " + sha.substr(0, 8)) + (b.install.empty() ? "" : " (install " + b.install + ")");
  if (!r->measured() || figure(*r, &LatencyRecord::p50) < 0) {
    d.word = r->word();
    return d;
  }
  d.p50 = figure(*r, &LatencyRecord::p50);
  d.p99 = figure(*r, &LatencyRecord::p99);
  d.max = figure(*r, &LatencyRecord::max);
  return d;
}

std::string refusal_between(const StoredSitting& a, const StoredSitting& b) {
  auto cpu = [](const StoredSitting& s) { return s.cpu_model + (s.cpu_text.empty() ? "" : ", " + s.cpu_text); };
  if (a.epoch != b.epoch)
    return "refused: " + a.name + " is hardware epoch " + a.epoch + " (" + cpu(a) + "), " + b.name + " is epoch " +
           b.epoch + " (" + cpu(b) + "); figures of two hardware epochs are never compared";
  if (a.method != b.method)
    return "refused: " + a.name + " was measured with method " + a.method + ", " + b.name + " with method " +
           b.method + "; figures of two method versions are never compared";
  return "";
}

// Rows of one column grouped by the sitting and binary they come from, in row order.
void add_sources(Comparison& c, const std::string& column, const std::vector<std::pair<std::string, Comparison::Side>>& rows) {
  std::vector<Comparison::Source> out;
  for (const auto& [row, side] : rows) {
    if (side.sitting.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const Comparison::Source& x) {
      return x.sitting == side.sitting && x.binary == side.binary;
    });
    if (it == out.end()) {
      out.push_back({column, row, side.sitting, side.date, side.binary});
    } else {
      it->rows += ", " + row;
    }
  }
  c.sources.insert(c.sources.end(), out.begin(), out.end());
}

// The two sides' names and the machine, CPU, epoch and method of the newest Now sitting.
void name_sides(const StoredSitting& a, const std::vector<const StoredSitting*>& now, const CompareOptions& o,
                Comparison& c) {
  const StoredSitting& b = *now.front();
  c.before = a.name;
  c.now = b.name;
  for (const StoredSitting* s : now) c.now_sittings.push_back(s->name);
  c.flavour = o.flavour;
  c.peer = o.peer;
  c.machine = b.stamp.value("machine", b.host);
  c.cpu_model = b.cpu_model;
  c.epoch = b.epoch;
  c.method = b.method;
}

// The host provenance that differs between A and each Now sitting that gave a row.
void add_host_differences(const StoredSitting& a, const std::vector<const StoredSitting*>& now_used, Comparison& c) {
  for (const StoredSitting* s : now_used)
    for (const auto& d :
         provenance_differences(a.stamp.value("provenance", json()), s->stamp.value("provenance", json())))
      c.host_differences.push_back(now_used.size() > 1 ? s->name + ": " + d : d);
}

// Verdicts that changed from A to B, and the cells only one of them has.
void add_verdict_changes(const StoredSitting& a, const StoredSitting& b, Comparison& c) {
  for (const auto& r : b.results) {
    const StoredResult* before = a.find(r.cell);
    if (!before) {
      ++c.only_now;
      continue;
    }
    std::string v0 = verdict_word(before), v1 = verdict_word(&r);
    if (v0 != v1) c.verdict_changes.push_back(r.cell.id() + ": " + v0 + " to " + v1);
  }
  for (const auto& r : a.results)
    if (!b.find(r.cell)) ++c.only_before;
}

std::vector<const StoredSitting*> newest_first(std::vector<const StoredSitting*> v) {
  std::stable_sort(v.begin(), v.end(), [](const StoredSitting* x, const StoredSitting* y) {
    return x->start != y->start ? x->start > y->start : x->name > y->name;
  });
  return v;
}

}  // namespace

Comparison compare(const StoredSitting& a, const StoredSitting& b, const CompareOptions& o) {
  return compare(a, std::vector<const StoredSitting*>{&b}, std::vector<const StoredSitting*>{&b}, o);
}

Comparison compare(const StoredSitting& a, const std::vector<const StoredSitting*>& now_in,
                   const std::vector<const StoredSitting*>& peer_in, const CompareOptions& o) {
  Comparison c;
  const std::vector<const StoredSitting*> now = newest_first(now_in);
  const std::vector<const StoredSitting*> peer_from = newest_first(peer_in.empty() ? now_in : peer_in);
  if (now.empty()) {
    c.refusal = "refused: no sitting for the Now column";
    return c;
  }
  const StoredSitting& b = *now.front();
  name_sides(a, now, o, c);
  for (const StoredSitting* s : now)
    if (c.refusal = refusal_between(a, *s); !c.refusal.empty()) return c;
  for (const StoredSitting* s : peer_from)
    if (c.refusal = refusal_between(a, *s); !c.refusal.empty()) return c;
  std::vector<std::string> tcanon;
  for (const auto& t : known_transports()) tcanon.push_back(t.name);
  std::map<std::string, std::vector<std::string>> touched;  // difference -> rows
  std::size_t rows_total = 0;
  std::vector<std::pair<std::string, Comparison::Side>> now_rows, peer_rows;
  std::vector<const StoredSitting*> now_used;
  for (const auto& [loop, title, digits] :
       {std::tuple{std::string("closed"), std::string("Closed,"), 2},
        std::tuple{std::string("open"), std::string("Open, service"), 3}}) {
    Comparison::Table t{loop, title, {}};
    // Rows model-major as the seeds print them (every transport's single, then mono...).
    for (const auto& m : kModels)
      for (const auto& tr : tcanon) {
        const Cell cell{o.flavour, tr, m, loop};
        const StoredResult* ra = a.find(cell);
        const auto [rb, sb] = newest(now, cell);
        if (!ra && !rb) continue;
        const auto [rp, sp] = newest(peer_from, {o.peer, tr, m, loop});
        Comparison::Row row{tr + "/" + m,       figure_text(ra, digits), figure_text(rb, digits),
                            figure_text(rp, digits), {}, side_of(ra, &a), side_of(rb, sb), side_of(rp, sp)};
        if (ra && rb) row.differs = settings_differences(compared_settings(a, *ra), compared_settings(*sb, *rb));
        for (const auto& d : row.differs) touched[d].push_back(loop + " " + row.cell);
        if (sb) add_unique(now_used, sb);
        now_rows.push_back({loop + " " + row.cell, row.n});
        peer_rows.push_back({loop + " " + row.cell, row.p});
        t.rows.push_back(row);
        ++rows_total;
      }
    if (!t.rows.empty()) c.tables.push_back(t);
  }
  add_sources(c, "Now (" + o.flavour + ")", now_rows);
  add_sources(c, o.peer, peer_rows);
  add_host_differences(a, now_used, c);
  for (const auto& [d, rows] : touched)
    c.differences.push_back(d + ": " + (rows.size() == rows_total ? std::string("every row") : join(rows, ", ")));
  add_verdict_changes(a, b, c);
  if (c.method == kMethodVersion) compare_ratios(a, b, c);
  c.ok = true;
  return c;
}

namespace {

// A table as Markdown, or aligned for a terminal.
void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& t, bool md) {
  std::vector<std::size_t> w(t.front().size(), 3);
  if (!md)
    for (const auto& line : t)
      for (std::size_t i = 0; i < line.size(); ++i) w[i] = std::max(w[i], line[i].size());
  for (std::size_t k = 0; k < t.size(); ++k) {
    out << "|";
    for (std::size_t i = 0; i < t[k].size(); ++i)
      out << " " << t[k][i] << (md ? "" : std::string(w[i] - t[k][i].size(), ' ')) << " |";
    out << "\n";
    if (k == 0) {
      out << "|";
      for (std::size_t i = 0; i < w.size(); ++i) out << (md ? "---" : std::string(w[i] + 2, '-')) << "|";
      out << "\n";
    }
  }
}

double side_value(const Comparison::Side& s, int f) { return f == 0 ? s.p50 : f == 1 ? s.p99 : s.max; }

std::string side_text(const Comparison::Side& s, int f, int digits) {
  const double v = side_value(s, f);
  return v < 0 ? (s.word.empty() ? "-" : s.word) : fixed(v, digits);
}

std::string change_text(const Comparison::Side& b, const Comparison::Side& n, int f) {
  const double x = side_value(b, f), y = side_value(n, f);
  if (x <= 0 || y < 0) return "-";
  const double pct = (y - x) / x * 100.0;
  return (pct > 0 ? "+" : "") + fixed(pct, 1) + "%";
}

std::string comparison_render(const Comparison& c, bool md) {
  if (!c.ok) return "compare: " + c.refusal;
  std::ostringstream out;
  out << "# " << c.flavour << ": " << c.before << " (before) against " << join(c.now_sittings, ", ") << " (now)\n\n";
  out << "Machine " << c.machine << ", " << c.cpu_model << " (epoch " << c.epoch << "), method " << c.method
      << ". Figures are service time in us; Change is Now against Before. A Now figure measured on another day than "
      << c.now << " carries its date.\n";
  if (!c.differences.empty()) {
    out << "\nSettings that differ between the two sittings (before -> now), and the rows they touch:\n\n";
    for (const auto& d : c.differences) out << "- " << d << "\n";
  }
  if (!c.host_differences.empty()) {
    out << "\nThe host differs between the two sittings (before -> now):\n\n";
    for (const auto& d : c.host_differences) out << "- " << d << "\n";
  }
  std::string main_date;  // the newest Now sitting's: other dates are printed beside their figures
  for (const auto& t : c.tables)
    for (const auto& r : t.rows)
      if (r.n.sitting == c.now) main_date = r.n.date;
  const char* names[] = {"p50", "p99", "max"};
  for (const auto& t : c.tables) {
    const int digits = t.loop == "open" ? 3 : 2;
    const bool differs = std::any_of(t.rows.begin(), t.rows.end(), [](const auto& r) { return !r.differs.empty(); });
    for (int f = 0; f < 3; ++f) {
      out << "\n## " << t.title << " " << names[f] << " in us\n\n";
      std::vector<std::vector<std::string>> rows = {{"Cell", "Before", "Now", "Change", c.peer}};
      if (differs) rows.front().push_back("Settings that differ");
      for (const auto& r : t.rows) {
        std::string now = side_text(r.n, f, digits);
        if (!r.n.date.empty() && r.n.date != main_date) now += " (" + r.n.date + ")";
        rows.push_back({r.cell, side_text(r.b, f, digits), now, change_text(r.b, r.n, f), side_text(r.p, f, digits)});
        if (differs) rows.back().push_back(join(r.differs, "; "));
      }
      write_table(out, rows, md);
    }
  }
  for (const std::string& column : {std::string("Now (") + c.flavour + ")", c.peer}) {
    std::vector<std::vector<std::string>> rows = {{column + " rows", "Sitting", "Measured", "Binary"}};
    for (const auto& s : c.sources)
      if (s.column == column) rows.push_back({s.rows, s.sitting, s.date, s.binary});
    if (rows.size() == 1) continue;
    out << "\n## Where the " << column << " column comes from\n\n";
    write_table(out, rows, md);
  }
  if (!c.ratios.empty()) {
    out << "\n## Ratios to " << c.reference << " (paired rounds)\n\n"
        << "Median of the per-round p50 ratios with its 95% interval and verdict. A change is `up` or `down` only "
           "when the two intervals do not overlap; `same` when they do.\n\n";
    std::vector<std::vector<std::string>> rows = {{"Group", "Member", "Before", "Now", "Change"}};
    for (const auto& r : c.ratios) rows.push_back({r.group, r.member, r.before, r.now, r.change});
    write_table(out, rows, md);
  }
  out << "\n## Verdicts that changed\n\n";
  if (c.verdict_changes.empty()) out << "None.\n";
  for (const auto& l : c.verdict_changes) out << "- " << l << "\n";
  if (c.only_before || c.only_now)
    out << "\n" << c.only_now << " cells only in the later sitting, " << c.only_before << " only in the earlier one.\n";
  return out.str();
}

}  // namespace

std::string comparison_markdown(const Comparison& c) { return comparison_render(c, true); }

std::string comparison_text(const Comparison& c, const std::string& format) {
  if (format == "md") return comparison_render(c, true);
  if (format == "text") return comparison_render(c, false);
  throw ConfigError("compare --format: must be md or text, not '" + format + "'");
}

CompareResult compare_sittings(const std::string& a, const std::vector<std::string>& now, const CompareOptions& o) {
  CompareResult r;
  Comparison c;
  const std::string format = o.format;
  try {
    const StoredSitting before = load_stored_sitting(a);
    std::vector<StoredSitting> loaded;
    loaded.reserve(now.size() + o.peer_from.size());
    for (const auto& d : now) loaded.push_back(load_stored_sitting(d));
    for (const auto& d : o.peer_from) loaded.push_back(load_stored_sitting(d));
    std::vector<const StoredSitting*> n, p;
    for (std::size_t i = 0; i < loaded.size(); ++i) (i < now.size() ? n : p).push_back(&loaded[i]);
    c = compare(before, n, p, o);
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    r.text = std::string("compare: ") + e.what();
    return r;
  }
  r.ok = c.ok;
  r.text = comparison_text(c, format);
  return r;
}

CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o) {
  return compare_sittings(a, std::vector<std::string>{b}, o);
}

}  // namespace kite::lab
