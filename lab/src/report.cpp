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
    add_unique(flavours, o.cell.flavour);
  }
  std::vector<std::string> tcanon;
  for (const auto& t : known_transports()) tcanon.push_back(t.name);
  Grid g;
  for (const auto& t : ordered(transports, tcanon))
    for (const auto& m : ordered(models, kModels)) g.rows.push_back(t + "/" + m);
  for (const auto& l : ordered(loops, kLoops))
    for (const auto& f : flavours) g.cols.emplace_back(l, f);
  for (const auto& o : cells)
    g.at[o.cell.transport + "/" + o.cell.model + "|" + o.cell.loop + "|" + o.cell.flavour] = &o;
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
  const json& p = r->data.value("pairing", json::object());
  const json& x = p.value("ratio", json());
  if (!x.is_object()) return std::nullopt;
  return Ratio{x.value("median", 0.0), x.value("low", 0.0), x.value("high", 0.0), p.value("verdict", "")};
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
    if (c.reference.empty() && rb.data.contains("pairing"))
      c.reference = rb.data["pairing"].value("reference", std::string());
    std::string change = "-";
    if (now && before) change = now->low > before->high ? "up" : now->high < before->low ? "down" : "same";
    c.ratios.push_back({rb.cell.transport + "/" + rb.cell.model + "/" + rb.cell.loop, rb.cell.flavour,
                        ratio_text(before), ratio_text(now), change});
  }
}

}  // namespace

Comparison compare(const StoredSitting& a, const StoredSitting& b, const CompareOptions& o) {
  Comparison c;
  c.before = a.name;
  c.now = b.name;
  c.flavour = o.flavour;
  c.peer = o.peer;
  c.machine = b.stamp.value("machine", b.host);
  c.cpu_model = b.cpu_model;
  c.epoch = b.epoch;
  c.method = b.method;
  auto cpu = [](const StoredSitting& s) { return s.cpu_model + (s.cpu_text.empty() ? "" : ", " + s.cpu_text); };
  if (a.epoch != b.epoch) {
    c.refusal = "refused: " + a.name + " is hardware epoch " + a.epoch + " (" + cpu(a) + "), " + b.name + " is epoch " +
                b.epoch + " (" + cpu(b) + "); figures of two hardware epochs are never compared";
    return c;
  }
  if (a.method != b.method) {
    c.refusal = "refused: " + a.name + " was measured with method " + a.method + ", " + b.name + " with method " +
                b.method + "; figures of two method versions are never compared";
    return c;
  }
  std::vector<std::string> tcanon;
  for (const auto& t : known_transports()) tcanon.push_back(t.name);
  std::map<std::string, std::vector<std::string>> touched;  // difference -> rows
  std::size_t rows_total = 0;
  for (const auto& [loop, title, digits] :
       {std::tuple{std::string("closed"), std::string("Closed, p50 in us"), 2},
        std::tuple{std::string("open"), std::string("Open, service p50 in us"), 3}}) {
    Comparison::Table t{loop, title, {}};
    // Rows model-major as the seeds print them (every transport's single, then mono...).
    for (const auto& m : kModels)
      for (const auto& tr : tcanon) {
        const StoredResult* ra = a.find({o.flavour, tr, m, loop});
        const StoredResult* rb = b.find({o.flavour, tr, m, loop});
        if (!ra && !rb) continue;
        Comparison::Row row{tr + "/" + m,
                            figure_text(ra, digits),
                            figure_text(rb, digits),
                            figure_text(b.find({o.peer, tr, m, loop}), digits),
                            {}};
        if (ra && rb) row.differs = settings_differences(compared_settings(a, *ra), compared_settings(b, *rb));
        for (const auto& d : row.differs) touched[d].push_back(loop + " " + row.cell);
        t.rows.push_back(row);
        ++rows_total;
      }
    if (!t.rows.empty()) c.tables.push_back(t);
  }
  c.host_differences =
      provenance_differences(a.stamp.value("provenance", json()), b.stamp.value("provenance", json()));
  for (const auto& [d, rows] : touched)
    c.differences.push_back(d + ": " + (rows.size() == rows_total ? std::string("every row") : join(rows, ", ")));
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
  if (c.method == kMethodVersion) compare_ratios(a, b, c);
  c.ok = true;
  return c;
}

std::string comparison_markdown(const Comparison& c) {
  if (!c.ok) return "compare: " + c.refusal;
  std::ostringstream out;
  out << "# " << c.flavour << ": " << c.before << " (before) against " << c.now << " (now)\n\n";
  out << "Machine " << c.machine << ", " << c.cpu_model << " (epoch " << c.epoch << "), method " << c.method << "; the "
      << c.peer << " column is from the later sitting.\n";
  if (!c.differences.empty()) {
    out << "\nSettings that differ between the two sittings (before -> now), and the rows they touch:\n\n";
    for (const auto& d : c.differences) out << "- " << d << "\n";
  }
  if (!c.host_differences.empty()) {
    out << "\nThe host differs between the two sittings (before -> now):\n\n";
    for (const auto& d : c.host_differences) out << "- " << d << "\n";
  }
  for (const auto& t : c.tables) {
    bool differs = std::any_of(t.rows.begin(), t.rows.end(), [](const auto& r) { return !r.differs.empty(); });
    out << "\n## " << t.title << "\n\n| Cell | Before | Now | " << c.peer << " |"
        << (differs ? " Settings that differ |" : "") << "\n|---|---|---|---|" << (differs ? "---|" : "") << "\n";
    for (const auto& r : t.rows) {
      out << "| " << r.cell << " | " << r.before << " | " << r.now << " | " << r.peer << " |";
      if (differs) out << " " << join(r.differs, "; ") << " |";
      out << "\n";
    }
  }
  if (!c.ratios.empty()) {
    out << "\n## Ratios to " << c.reference << " (paired rounds)\n\n"
        << "Median of the per-round p50 ratios with its 95% interval and verdict. A change is `up` or `down` only "
           "when the two intervals do not overlap; `same` when they do.\n\n"
        << "| Group | Member | Before | Now | Change |\n|---|---|---|---|---|\n";
    for (const auto& r : c.ratios)
      out << "| " << r.group << " | " << r.member << " | " << r.before << " | " << r.now << " | " << r.change << " |\n";
  }
  out << "\n## Verdicts that changed\n\n";
  if (c.verdict_changes.empty()) out << "None.\n";
  for (const auto& l : c.verdict_changes) out << "- " << l << "\n";
  if (c.only_before || c.only_now)
    out << "\n" << c.only_now << " cells only in the later sitting, " << c.only_before << " only in the earlier one.\n";
  return out.str();
}

CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o) {
  CompareResult r;
  Comparison c;
  try {
    c = compare(load_stored_sitting(a), load_stored_sitting(b), o);
  } catch (const std::exception& e) {
    r.text = std::string("compare: ") + e.what();
    return r;
  }
  r.ok = c.ok;
  r.text = comparison_markdown(c);
  return r;
}

}  // namespace kite::lab
