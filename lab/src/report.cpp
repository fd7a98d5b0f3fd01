#include "kite/lab/report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

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
    std::vector<std::string> rows;                        // transport/model
    std::vector<std::pair<std::string, std::string>> cols;  // loop, flavour
    std::map<std::string, const CellOutcome*> at;         // "row|loop|flavour"
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
    for (const auto& o : cells) g.at[o.cell.transport + "/" + o.cell.model + "|" + o.cell.loop + "|" + o.cell.flavour] = &o;
    return g;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
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
        for (std::size_t i = 0; i < t[k].size(); ++i) out << " " << t[k][i] << std::string(w[i] - t[k][i].size(), ' ') << " |";
        out << "\n";
        if (k == 0) {
            out << "|";
            for (std::size_t i = 0; i < w.size(); ++i) out << std::string(w[i] + 2, '-') << "|";
            out << "\n";
        }
    }
    return out.str();
}

CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o) {
    CompareResult r;
    json sa, sb;
    try {
        sa = json::parse(read_text(a + "/sitting.json"));
        sb = json::parse(read_text(b + "/sitting.json"));
    } catch (const std::exception& e) {
        r.text = std::string("compare: ") + e.what();
        return r;
    }
    std::string ea = sa.value("epoch", ""), eb = sb.value("epoch", "");
    if (ea != eb) {
        r.text = "compare: refused: " + a + " is hardware epoch " + ea + " (" + sa.value("cpu_model", "?") + "), " + b +
                 " is epoch " + eb + " (" + sb.value("cpu_model", "?") +
                 "); figures of two hardware epochs are never compared";
        return r;
    }
    std::vector<CellOutcome> ca = load_sitting_cells(a), cb = load_sitting_cells(b);
    auto find = [](const std::vector<CellOutcome>& v, const std::string& f, const std::string& t, const std::string& m,
                   const std::string& l) -> const CellOutcome* {
        for (const auto& c : v)
            if (c.cell.flavour == f && c.cell.transport == t && c.cell.model == m && c.cell.loop == l) return &c;
        return nullptr;
    };
    auto text = [](const CellOutcome* c, int digits) -> std::string {
        if (!c) return "-";
        if (c->state == CellState::marked) return c->marker;
        if (c->state != CellState::measured || c->service_p50 < 0) return to_string(c->state);
        return fixed(c->service_p50, digits);
    };
    std::vector<std::string> tcanon;
    for (const auto& t : known_transports()) tcanon.push_back(t.name);
    std::ostringstream out;
    out << "# " << o.flavour << ": " << sa.value("sitting", a) << " (before) against " << sb.value("sitting", b)
        << " (now)\n\n";
    out << "Machine " << sb.value("machine", "?") << ", " << sb.value("cpu_model", "?") << " (epoch " << eb
        << "); the " << o.peer << " column is from the later sitting.\n";
    for (const auto& [loop, title, digits] :
         {std::tuple{std::string("closed"), std::string("Closed, p50 in us"), 2},
          std::tuple{std::string("open"), std::string("Open, service p50 in us"), 3}}) {
        // Rows: model-major as the seeds print them (every transport's single, then mono...).
        std::vector<std::string> rows;
        for (const auto& m : kModels)
            for (const auto& t : tcanon)
                if (find(ca, o.flavour, t, m, loop) || find(cb, o.flavour, t, m, loop)) rows.push_back(t + "/" + m);
        if (rows.empty()) continue;
        out << "\n## " << title << "\n\n| Cell | Before | Now | " << o.peer << " |\n|---|---|---|---|\n";
        for (const auto& row : rows) {
            std::string t = row.substr(0, row.find('/')), m = row.substr(row.find('/') + 1);
            out << "| " << row << " | " << text(find(ca, o.flavour, t, m, loop), digits) << " | "
                << text(find(cb, o.flavour, t, m, loop), digits) << " | " << text(find(cb, o.peer, t, m, loop), digits)
                << " |\n";
        }
    }
    std::vector<std::string> changes;
    auto verdict_of = [](const CellOutcome* c) -> std::string {
        if (!c) return "absent";
        if (c->state == CellState::marked) return c->marker;
        if (c->state == CellState::measured) return c->verdict;
        return to_string(c->state);
    };
    std::size_t only_b = 0, only_a = 0;
    for (const auto& c : cb) {
        const CellOutcome* before = find(ca, c.cell.flavour, c.cell.transport, c.cell.model, c.cell.loop);
        if (!before) {
            ++only_b;
            continue;
        }
        std::string v0 = verdict_of(before), v1 = verdict_of(&c);
        if (v0 != v1) changes.push_back("- " + c.cell.id() + ": " + v0 + " to " + v1);
    }
    for (const auto& c : ca)
        if (!find(cb, c.cell.flavour, c.cell.transport, c.cell.model, c.cell.loop)) ++only_a;
    out << "\n## Verdicts that changed\n\n";
    if (changes.empty()) out << "None.\n";
    for (const auto& l : changes) out << l << "\n";
    if (only_a || only_b)
        out << "\n" << only_b << " cells only in the later sitting, " << only_a << " only in the earlier one.\n";
    r.ok = true;
    r.text = out.str();
    return r;
}

std::string build_site(const std::string& results_dir) {
    std::string site = results_dir + "/site";
    fs::create_directories(site);
    std::ostringstream h;
    h << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kite latency lab</title>\n"
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}th{background:#eee}"
         "td.ok{background:#e6f4e6}td.partial{background:#fff4d6}td.saturated{background:#fde2c8}"
         "td.refused,td.error{background:#f8d0d0}td.marker{color:#888}</style></head><body>\n"
         "<h1>Kite latency lab</h1>\n<p>Placeholder page: each host's latest sitting, p50 in microseconds "
         "(closed: service time; open: response time) with its verdict. Cells refused by the audit publish no "
         "figures. The JSON files hold everything else.</p>\n";
    std::error_code ec;
    std::vector<fs::path> hosts;
    for (const auto& e : fs::directory_iterator(results_dir, ec))
        if (e.is_directory() && e.path().filename() != "site") hosts.push_back(e.path());
    std::sort(hosts.begin(), hosts.end());
    for (const auto& host : hosts) {
        std::vector<fs::path> sittings;
        for (const auto& e : fs::directory_iterator(host, ec))
            if (e.is_directory() && fs::exists(e.path() / "sitting.json")) sittings.push_back(e.path());
        if (sittings.empty()) continue;
        std::sort(sittings.begin(), sittings.end(), [](const fs::path& x, const fs::path& y) {
            return fs::last_write_time(x / "sitting.json") < fs::last_write_time(y / "sitting.json");
        });
        const fs::path& latest = sittings.back();
        std::string hname = host.filename().string(), sname = latest.filename().string();
        std::string base = "../" + hname + "/" + sname + "/";
        json st;
        try {
            st = json::parse(read_text((latest / "sitting.json").string()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench-run: %s: unreadable, so the page shows no stamp for it: %s\n",
                         (latest / "sitting.json").c_str(), e.what());
        }
        h << "<h2>" << html_escape(hname) << ": sitting " << html_escape(sname) << "</h2>\n<p>"
          << html_escape(st.value("cpu_model", "")) << ", kernel " << html_escape(st.value("kernel", "")) << ", git "
          << html_escape(st.contains("git") ? st["git"].value("revision", "").substr(0, 12) : "") << ", "
          << html_escape(st.value("start", "")) << " to " << html_escape(st["end"].is_string() ? st["end"].get<std::string>() : "(running)")
          << ". <a href=\"" << base << "sitting.json\">sitting.json</a></p>\n";
        std::vector<CellOutcome> cells = load_sitting_cells(latest.string());
        Grid g = make_grid(cells);
        h << "<table><tr><th>transport/model</th>";
        for (const auto& [l, f] : g.cols) h << "<th>" << html_escape(l + " " + f) << "</th>";
        h << "</tr>\n";
        for (const auto& r : g.rows) {
            h << "<tr><th>" << html_escape(r) << "</th>";
            for (const auto& [l, f] : g.cols) {
                auto it = g.at.find(r + "|" + l + "|" + f);
                if (it == g.at.end()) {
                    h << "<td></td>";
                    continue;
                }
                const CellOutcome& o = *it->second;
                std::string cls = o.state == CellState::marked || o.state == CellState::unbuilt ? "marker"
                                  : o.state == CellState::measured                              ? o.verdict
                                                                                                : to_string(o.state);
                h << "<td class=\"" << html_escape(cls) << "\" title=\"" << html_escape(o.reason) << "\"><a href=\""
                  << base << html_escape(o.cell.file_name()) << "\">" << html_escape(cell_text(o)) << "</a></td>";
            }
            h << "</tr>\n";
        }
        h << "</table>\n";
        if (sittings.size() > 1) {
            h << "<p>Earlier sittings:";
            for (std::size_t i = 0; i + 1 < sittings.size(); ++i) {
                std::string n = sittings[i].filename().string();
                h << " <a href=\"../" << html_escape(hname) << "/" << html_escape(n) << "/sitting.json\">" << html_escape(n)
                  << "</a>";
            }
            h << "</p>\n";
        }
    }
    h << "</body></html>\n";
    std::string path = site + "/index.html";
    write_text_atomic(path, h.str());
    return path;
}

}  // namespace kite::lab
