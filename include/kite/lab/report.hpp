// What the lab shows: the matrix in the terminal, `compare` tables, the page.
#pragma once

#include <string>
#include <vector>

#include "kite/lab/sitting.hpp"

namespace kite::lab {

/// Rows transport/model; columns loop x flavour; p50 (us) and verdict, or a marker.
std::string matrix_table(const std::vector<CellOutcome>& cells);

struct CompareOptions {
    std::string flavour = "cpp";   ///< Before/Now columns
    std::string peer = "quickfix"; ///< the peer column, from B
};

struct CompareResult {
    bool ok = false;
    std::string text;  ///< Markdown, or the refusal
};

/// Compares sitting folder A (before) with B (now). Refuses two hardware epochs.
CompareResult compare_sittings(const std::string& a, const std::string& b, const CompareOptions& o);

/// Builds <results_dir>/site/index.html: the latest sitting's matrix per host, links to the JSON.
std::string build_site(const std::string& results_dir);

}  // namespace kite::lab
