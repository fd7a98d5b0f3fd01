// The page's scripts, styles and chart library, compiled into the lab when
// it is built (lab/site/embed.cmake), so that every bench-run writes a whole site.
#pragma once

#include <string_view>

namespace kite::lab {

/// The text of an asset of the page (site.css, site.js, uPlot.iife.min.js,
/// uPlot.min.css); empty when the build had none (the chart library without npm).
std::string_view site_asset(std::string_view name);

}  // namespace kite::lab
