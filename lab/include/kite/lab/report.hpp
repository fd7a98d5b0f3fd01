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
  std::string peer = "quickfix";  ///< the peer column, from the Now sittings or `peer_from`
  /// Sitting folders the peer column is taken from (newest measured result per
  /// cell); empty: the Now sittings (compare_sittings only).
  std::vector<std::string> peer_from;
  std::string format = "md";  ///< md (Markdown, as the seeds print) or text (aligned, for a terminal)
};

/// Two sittings side by side, as the seeds' tables: closed p50 and open service p50.
struct Comparison {
  bool ok = false;
  std::string refusal;  ///< why two sittings are not compared (two epochs, two methods)
  std::string before, now, flavour, peer;
  std::string machine, cpu_model, epoch, method;
  /// One side of a row: a sitting's result's figures (service time, us).
  struct Side {
    std::string word;                   ///< marker or state when not measured; "-" when absent
    double p50 = -1, p99 = -1, max = -1;  ///< -1 when not measured
    std::string sitting, date;          ///< the sitting it comes from and its start date (YYYY-MM-DD)
    std::string binary;                 ///< the server binary: file name and sha256 (8 hex digits)
  };
  struct Row {
    std::string cell;                  ///< transport/model
    std::string before, now, peer;     ///< p50 figure, marker or state; "-" when absent
    std::vector<std::string> differs;  ///< settings of this row that differ ("network loopback -> netns")
    Side b, n, p;                      ///< Before, Now, peer: p50, p99 and max with their sitting
  };
  struct Table {
    std::string loop, title;  ///< title: "Closed," or "Open, service", before the figure's name
    std::vector<Row> rows;
  };
  std::vector<Table> tables;
  std::vector<std::string> verdict_changes;  ///< "cpp/kernel/mono/closed: ok to partial"
  /// "Where the <column> column comes from": per column (Now, the peer), the
  /// rows grouped by the sitting and server binary that measured them.
  struct Source {
    std::string column;  ///< "Now" or the peer's name
    std::string rows;    ///< "closed kernel/single, open kernel/mono"
    std::string sitting, date, binary;
  };
  std::vector<Source> sources;
  std::vector<std::string> now_sittings;  ///< the sittings the Now column is composed from, newest first
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
/// Compares sitting A (before) with a Now column composed from `now` (per
/// row, the newest sitting with a measured result for it, else the newest
/// with any) and a peer column composed likewise from `peer_from`. Every
/// sitting must share A's hardware epoch and method version.
Comparison compare(const StoredSitting& a, const std::vector<const StoredSitting*>& now,
                   const std::vector<const StoredSitting*>& peer_from, const CompareOptions& o);
/// The comparison as Markdown (what `bench-run compare` prints).
std::string comparison_markdown(const Comparison& c);
/// The comparison as `--format` says: "md" (comparison_markdown) or "text"
/// (the same tables aligned for a terminal). Throws ConfigError for another format.
std::string comparison_text(const Comparison& c, const std::string& format);

struct CompareResult {
  bool ok = false;
  std::string text;  ///< Markdown, or the refusal
};

/// Compares sitting folder A (before) with B (now). Refuses two hardware epochs or method versions.
CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o);
/// The same with a Now column composed from several sitting folders and the
/// peer column from o.peer_from (else from `now`), in o.format.
CompareResult compare_sittings(const std::string& a, const std::vector<std::string>& now, const CompareOptions& o);

/// Builds the results page under <results_dir>/site/ from every sitting of
/// every host (docs/lab.md, "The results page"); returns the path of its index.html.
std::string build_site(const std::string& results_dir);

/// Serves <results_dir> over HTTP on 127.0.0.1:port until SIGINT or SIGTERM
/// (the page at /site/index.html). Returns 0, or 1 when the port cannot be bound.
int serve_results(const std::string& results_dir, int port);

}  // namespace kite::lab
