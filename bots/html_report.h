// A self-contained HTML page for load-test reports: inline CSS and inline SVG line
// plots (axes with ticks and labels, several series, a min-max band, a horizontal
// reference line, a legend), no scripts and nothing fetched, so the file can be
// mailed or archived and opened anywhere.
//
// Pure functions of their input: no I/O, no clocks. Thread: any.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loam::bots::html {

/// One line of a plot: y per x of the plot; non-finite values are gaps (skipped).
struct Series {
  std::string name;
  std::vector<double> y;
  std::string color = "#1f77b4";
  bool dashed = false;
};

/// A shaded area between lo and hi (e.g. min..max across bots).
struct Band {
  std::string name;
  std::vector<double> lo, hi;
  std::string color = "#1f77b4";
};

/// A horizontal reference line (e.g. the 16.7 ms step budget).
struct RefLine {
  std::string name;
  double y = 0;
  std::string color = "#d62728";
};

struct Plot {
  std::string title;
  std::string xLabel = "seconds";
  std::string yLabel;
  std::vector<double> x;
  std::vector<Series> series;
  std::optional<Band> band;
  std::optional<RefLine> ref;
  /// Shown instead of the lines when set, or when there is no point to draw.
  std::string emptyNote;
};

struct Page {
  std::string title;
  std::vector<std::pair<std::string, std::string>> settings;  ///< key, value under the title
  std::string tableTitle;
  std::vector<std::string> tableHeader;
  std::vector<std::vector<std::string>> tableRows;
  std::string tableNote;  ///< under the table (e.g. "first 200 bots shown")
  std::vector<Plot> plots;
};

/// Text escaped for HTML element content and attribute values (& < > " ').
std::string escape(std::string_view text);

/// A number for display: integers without decimals, others with up to 3 significant
/// decimals; non-finite as "n/a".
std::string formatNumber(double v);

/// "Nice" tick values (1, 2, 5 x 10^k steps) covering lo..hi, about `target` of them.
std::vector<double> niceTicks(double lo, double hi, int target = 5);

/// One plot as an <svg> element (fixed 760x260 viewBox). Cost: O(points).
std::string renderSvg(const Plot& plot);

/// The whole document, starting with <!DOCTYPE html>. Cost: O(points + rows).
std::string renderPage(const Page& page);

}  // namespace loam::bots::html
