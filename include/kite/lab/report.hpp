// What the lab shows: the matrix in the terminal, `compare` tables, the page.
#pragma once

#include <string>
#include <vector>

#include "kite/lab/results.hpp"
#include "kite/lab/sitting.hpp"

namespace kite::lab {

/// Rows transport/model; columns loop x flavour; p50 (us) and verdict, or a marker.
std::string matrix_table(const std::vector<CellOutcome>& cells);

struct CompareOptions {
  std::string flavour = "cpp";    ///< Before/Now columns
  std::string peer = "quickfix";  ///< the peer column, from B
};

/// Two sittings side by side, as the seeds' tables: closed p50 and open service p50.
struct Comparison {
  bool ok = false;
  std::string refusal;  ///< why two sittings are not compared (two epochs, two methods)
  std::string before, now, flavour, peer;
  std::string machine, cpu_model, epoch, method;
  struct Row {
    std::string cell;                  ///< transport/model
    std::string before, now, peer;     ///< figure, marker or state; "-" when absent
    std::vector<std::string> differs;  ///< settings of this row that differ ("network loopback -> netns")
  };
  struct Table {
    std::string loop, title;
    std::vector<Row> rows;
  };
  std::vector<Table> tables;
  std::vector<std::string> verdict_changes;  ///< "cpp/kernel/mono/closed: ok to partial"
  /// Every setting that differs in some row, with the rows it touches ("network loopback -> netns: every row").
  std::vector<std::string> differences;
  /// Host provenance that differs (host.hpp's provenance_differences): kernel,
  /// a newer kernel installed but not booted, isolcpus, nohz_full, NIC drivers and firmware.
  std::vector<std::string> host_differences;
  std::size_t only_before = 0, only_now = 0;
  /// Two v2 (paired) sittings: each member's ratio to the reference in both,
  /// with their intervals. A change is named only when the two intervals do
  /// not overlap; otherwise the two sittings agree within their intervals.
  struct RatioRow {
    std::string group;        ///< transport/model/loop
    std::string member;       ///< the flavour divided by the reference
    std::string before, now;  ///< "1.112 [1.050, 1.180] slower", or "-" when absent
    std::string change;       ///< "up", "down", "same" (intervals overlap) or "-" (one side missing)
  };
  std::string reference;  ///< the reference both v2 sittings divided by
  std::vector<RatioRow> ratios;
};

/// Compares sitting A (before) with B (now): refuses two hardware epochs or two method versions.
Comparison compare(const StoredSitting& a, const StoredSitting& b, const CompareOptions& o);
/// The comparison as Markdown (what `bench-run compare` prints).
std::string comparison_markdown(const Comparison& c);

struct CompareResult {
  bool ok = false;
  std::string text;  ///< Markdown, or the refusal
};

/// Compares sitting folder A (before) with B (now). Refuses two hardware epochs or method versions.
CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o);

/// Builds the results page under <results_dir>/site/ from every sitting of
/// every host (docs/lab.md, "The results page"); returns the path of its index.html.
std::string build_site(const std::string& results_dir);

/// Serves <results_dir> over HTTP on 127.0.0.1:port until SIGINT or SIGTERM
/// (the page at /site/index.html). Returns 0, or 1 when the port cannot be bound.
int serve_results(const std::string& results_dir, int port);

}  // namespace kite::lab
