#include "bots/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace loam::bots::html {

namespace {

// SVG geometry: the plot area, with room for tick labels left and the legend right.
constexpr double kWidth = 760, kHeight = 260;
constexpr double kLeft = 64, kRight = 590, kTop = 30, kBottom = 218;

std::string num(double v) {  // coordinates: 1 decimal is enough at this size
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool valid() const { return lo <= hi; }
};

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string formatNumber(double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[48];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (std::fabs(v) >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::vector<double> niceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  if (hi <= lo) hi = lo + 1;
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9 && ticks.size() < 50; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string renderSvg(const Plot& p) {
  std::string o;
  o.reserve(2048 + p.x.size() * 24 * (p.series.size() + 2));
  // No xmlns: inline SVG in HTML5 needs none, and the page references no URL at all.
  o += "<svg viewBox=\"0 0 " + num(kWidth) + " " + num(kHeight) +
       "\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) + "\" role=\"img\" aria-label=\"" +
       escape(p.title) + "\">\n";
  o += "<text x=\"" + num(kLeft) + "\" y=\"18\" class=\"title\">" + escape(p.title) + "</text>\n";

  // Ranges over everything drawn; y always includes 0 (rates, counts, times).
  Range xr, yr;
  yr.add(0);
  for (double x : p.x) xr.add(x);
  std::size_t points = 0;
  for (const Series& s : p.series)
    for (std::size_t i = 0; i < s.y.size() && i < p.x.size(); ++i)
      if (std::isfinite(s.y[i]) && std::isfinite(p.x[i])) {
        yr.add(s.y[i]);
        ++points;
      }
  if (p.band)
    for (std::size_t i = 0; i < p.x.size() && i < p.band->lo.size() && i < p.band->hi.size(); ++i) {
      yr.add(p.band->lo[i]);
      yr.add(p.band->hi[i]);
    }
  if (p.ref) yr.add(p.ref->y);

  const bool empty = !p.emptyNote.empty() || points == 0 || !xr.valid();
  if (empty) {
    o += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kRight - kLeft) + "\" height=\"" +
         num(kBottom - kTop) + "\" class=\"frame\"/>\n";
    o += "<text x=\"" + num((kLeft + kRight) / 2) + "\" y=\"" + num((kTop + kBottom) / 2) +
         "\" text-anchor=\"middle\" class=\"note\">" +
         escape(p.emptyNote.empty() ? std::string("no data") : p.emptyNote) + "</text>\n</svg>\n";
    return o;
  }

  const std::vector<double> yt = niceTicks(yr.lo, yr.hi * 1.05, 5);
  const double y0 = std::min(yr.lo, yt.empty() ? yr.lo : yt.front());
  // Headroom above the highest value so a line at the maximum (or the budget) stays visible.
  double y1 = std::max(yr.hi + (yr.hi - yr.lo) * 0.08, yt.empty() ? yr.hi : yt.back());
  if (y1 <= y0) y1 = y0 + 1;
  double x0 = std::min(0.0, xr.lo), x1 = xr.hi;  // time axes start at the run's start
  if (x1 <= x0) x1 = x0 + 1;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * (kRight - kLeft); };
  auto py = [&](double y) { return kBottom - (y - y0) / (y1 - y0) * (kBottom - kTop); };

  // Grid, ticks and labels.
  for (double t : yt) {
    const std::string y = num(py(t));
    o += "<line x1=\"" + num(kLeft) + "\" y1=\"" + y + "\" x2=\"" + num(kRight) + "\" y2=\"" + y +
         "\" class=\"grid\"/>\n<text x=\"" + num(kLeft - 6) + "\" y=\"" + y +
         "\" dy=\"4\" text-anchor=\"end\" class=\"tick\">" + escape(formatNumber(t)) + "</text>\n";
  }
  for (double t : niceTicks(x0, x1, 8)) {
    const std::string x = num(px(t));
    o += "<line x1=\"" + x + "\" y1=\"" + num(kBottom) + "\" x2=\"" + x + "\" y2=\"" + num(kBottom + 4) +
         "\" class=\"axis\"/>\n<text x=\"" + x + "\" y=\"" + num(kBottom + 16) +
         "\" text-anchor=\"middle\" class=\"tick\">" + escape(formatNumber(t)) + "</text>\n";
  }
  o += "<polyline points=\"" + num(kLeft) + "," + num(kTop) + " " + num(kLeft) + "," + num(kBottom) + " " +
       num(kRight) + "," + num(kBottom) + "\" class=\"axis\" fill=\"none\"/>\n";
  o += "<text x=\"" + num((kLeft + kRight) / 2) + "\" y=\"" + num(kHeight - 6) +
       "\" text-anchor=\"middle\" class=\"label\">" + escape(p.xLabel) + "</text>\n";
  o += "<text x=\"14\" y=\"" + num((kTop + kBottom) / 2) + "\" transform=\"rotate(-90 14 " +
       num((kTop + kBottom) / 2) + ")\" text-anchor=\"middle\" class=\"label\">" + escape(p.yLabel) + "</text>\n";

  // Legend entries, drawn right of the plot area as they come.
  std::string legend;
  double legendY = kTop + 6;
  auto legendEntry = [&](const std::string& name, const std::string& color, const std::string& style) {
    legend += "<line x1=\"" + num(kRight + 12) + "\" y1=\"" + num(legendY) + "\" x2=\"" + num(kRight + 32) +
              "\" y2=\"" + num(legendY) + "\" stroke=\"" + escape(color) + "\" " + style + "/>\n<text x=\"" +
              num(kRight + 38) + "\" y=\"" + num(legendY) + "\" dy=\"4\" class=\"legend\">" + escape(name) +
              "</text>\n";
    legendY += 18;
  };

  if (p.band) {  // one polygon per run of finite values: hi forwards, lo backwards
    const Band& b = *p.band;
    const std::size_t n = std::min({p.x.size(), b.lo.size(), b.hi.size()});
    std::size_t i = 0;
    while (i < n) {
      auto finite = [&](std::size_t k) {
        return std::isfinite(p.x[k]) && std::isfinite(b.lo[k]) && std::isfinite(b.hi[k]);
      };
      if (!finite(i)) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < n && finite(j)) ++j;
      o += "<polygon points=\"";
      for (std::size_t k = i; k < j; ++k) o += num(px(p.x[k])) + "," + num(py(b.hi[k])) + " ";
      for (std::size_t k = j; k-- > i;) o += num(px(p.x[k])) + "," + num(py(b.lo[k])) + (k > i ? " " : "");
      o += "\" fill=\"" + escape(b.color) + "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
      i = j;
    }
    legendEntry(b.name, b.color, "stroke-width=\"8\" stroke-opacity=\"0.18\"");
  }
  if (p.ref) {
    const std::string y = num(py(p.ref->y));
    o += "<line x1=\"" + num(kLeft) + "\" y1=\"" + y + "\" x2=\"" + num(kRight) + "\" y2=\"" + y + "\" stroke=\"" +
         escape(p.ref->color) + "\" stroke-dasharray=\"6 4\" stroke-width=\"1.5\"/>\n";
    legendEntry(p.ref->name, p.ref->color, "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"");
  }
  for (const Series& s : p.series) {
    std::string pts;
    for (std::size_t i = 0; i < s.y.size() && i < p.x.size(); ++i)
      if (std::isfinite(s.y[i]) && std::isfinite(p.x[i])) {
        if (!pts.empty()) pts += ' ';
        pts += num(px(p.x[i])) + "," + num(py(s.y[i]));
      }
    const std::string style = std::string("stroke-width=\"1.8\"") + (s.dashed ? " stroke-dasharray=\"4 3\"" : "");
    if (!pts.empty())
      o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + escape(s.color) + "\" " + style + "/>\n";
    legendEntry(s.name, s.color, style);
  }
  o += legend;
  o += "</svg>\n";
  return o;
}

std::string renderPage(const Page& page) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + escape(page.title) +
       "</title>\n<style>\n"
       "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
       "h1{font-size:1.4em;margin-bottom:4px}h2{font-size:1.1em;margin-top:28px}\n"
       "dl.settings{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0 18px}\n"
       "dl.settings dt{font-weight:bold}dl.settings dd{margin:0}\n"
       "table{border-collapse:collapse;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\n"
       "th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}\n"
       "svg{display:block;margin:6px 0 18px;background:#fff}\n"
       "svg .title{font-size:14px;font-weight:bold}svg .tick,svg .legend{font-size:11px}\n"
       "svg .label{font-size:12px}svg .note{font-size:14px;fill:#888}\n"
       "svg .grid{stroke:#e4e4e4}svg .axis{stroke:#444}svg .frame{fill:#fafafa;stroke:#ccc}\n"
       "</style>\n</head>\n<body>\n<h1>" +
       escape(page.title) + "</h1>\n";
  if (!page.settings.empty()) {
    o += "<dl class=\"settings\">\n";
    for (const auto& [k, v] : page.settings) o += "<dt>" + escape(k) + "</dt><dd>" + escape(v) + "</dd>\n";
    o += "</dl>\n";
  }
  if (!page.tableHeader.empty()) {
    if (!page.tableTitle.empty()) o += "<h2>" + escape(page.tableTitle) + "</h2>\n";
    o += "<table>\n<thead><tr>";
    for (const std::string& h : page.tableHeader) o += "<th>" + escape(h) + "</th>";
    o += "</tr></thead>\n<tbody>\n";
    for (const auto& row : page.tableRows) {
      o += "<tr>";
      for (const std::string& c : row) o += "<td>" + escape(c) + "</td>";
      o += "</tr>\n";
    }
    o += "</tbody>\n</table>\n";
    if (!page.tableNote.empty()) o += "<p>" + escape(page.tableNote) + "</p>\n";
  }
  if (!page.plots.empty()) o += "<h2>Over time</h2>\n";
  for (const Plot& p : page.plots) o += renderSvg(p);
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace loam::bots::html
