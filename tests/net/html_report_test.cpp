// The HTML report renderer (bots/html_report.h) on synthetic series: a well-formed
// self-contained page (doctype, one <svg> per plot, no script, no URL, text
// escaped, polylines with one point per finite sample), plus the helpers behind
// it: the per-second run series and the Prometheus histogram quantiles.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "bots/html_report.h"
#include "bots/run_series.h"
#include "bots/server_metrics.h"
#include "tests/support/process_util.h"

namespace {

using namespace loam::bots;
using loam::test::countOf;

// The number of "x,y" pairs in the points attribute of the n-th polyline carrying stroke=color.
std::size_t polylinePoints(const std::string& svg, const std::string& color) {
  const std::string marker = "stroke=\"" + color + "\"";
  for (std::size_t at = svg.find("<polyline points=\""); at != std::string::npos;
       at = svg.find("<polyline points=\"", at + 1)) {
    const std::size_t end = svg.find("/>", at);
    const std::string tag = svg.substr(at, end - at);
    if (tag.find(marker) == std::string::npos) continue;
    const std::size_t begin = tag.find('"') + 1;
    const std::string pts = tag.substr(begin, tag.find('"', begin) - begin);
    return countOf(pts, ",");
  }
  return 0;
}

html::Page samplePage() {
  html::Page page;
  page.title = "run <A&B> \"quoted\"";
  page.settings = {{"server", "127.0.0.1:7777"}, {"note", "<script>alert(1)</script>"}};
  page.tableHeader = {"bot", "bytes"};
  page.tableRows = {{"bot1 <x>", "1200"}, {"bot2", "900"}};
  html::Plot a;
  a.title = "step <time>";
  a.yLabel = "ms";
  for (int i = 0; i < 10; ++i) a.x.push_back(i);
  html::Series s{"p50", {}, "#111111", false};
  for (int i = 0; i < 10; ++i) s.y.push_back(i == 4 ? std::numeric_limits<double>::quiet_NaN() : 1.5 * i);
  a.series.push_back(s);
  a.ref = html::RefLine{"budget", 16.7, "#d62728"};
  html::Plot b;
  b.title = "bytes";
  b.x = {0, 1, 2};
  b.series.push_back({"mean", {5, 6, 7}, "#222222", false});
  b.band = html::Band{"min-max", {4, 5, 6}, {6, 8, 9}, "#222222"};
  html::Plot c;
  c.title = "empty";
  c.emptyNote = "no server metrics (pass --server-metrics)";
  page.plots = {a, b, c};
  return page;
}

}  // namespace

TEST_CASE("renderPage: a self-contained, escaped page with one svg per plot") {
  const std::string page = html::renderPage(samplePage());
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  CHECK(countOf(page, "<svg") == 3);
  CHECK(countOf(page, "</svg>") == 3);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("run &lt;A&amp;B&gt; &quot;quoted&quot;") != std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find("bot1 &lt;x&gt;") != std::string::npos);
  CHECK(page.find("step &lt;time&gt;") != std::string::npos);
  CHECK(page.find("no server metrics (pass --server-metrics)") != std::string::npos);
  // 10 samples, one NaN gap: 9 points; the band is one polygon.
  CHECK(polylinePoints(page, "#111111") == 9);
  CHECK(polylinePoints(page, "#222222") == 3);
  CHECK(countOf(page, "<polygon") == 1);
  // The budget line and the legend entries.
  CHECK(page.find("stroke-dasharray=\"6 4\"") != std::string::npos);
  CHECK(page.find(">budget</text>") != std::string::npos);
  CHECK(page.find(">min-max</text>") != std::string::npos);
}

TEST_CASE("renderSvg: an empty plot shows its note and no lines") {
  html::Plot p;
  p.title = "players";
  const std::string svg = html::renderSvg(p);
  CHECK(svg.find("no data") != std::string::npos);
  CHECK(svg.find("<polyline") == std::string::npos);
}

TEST_CASE("renderPage output parses with python3's html.parser, tags balanced") {
  if (std::system("python3 -c 'import html.parser' >/dev/null 2>&1") != 0) {
    MESSAGE("python3 not available: parse check skipped");
    return;
  }
  loam::test::TempDir dir("loam_html_report_test_");
  const auto file = dir.path / "page.html";
  std::ofstream(file) << html::renderPage(samplePage());
  const auto script = dir.path / "check.py";
  std::ofstream(script) << "import sys, html.parser\n"
                           "VOID={'meta','br','img','input','link','hr'}\n"
                           "class P(html.parser.HTMLParser):\n"
                           "  def __init__(s):\n    super().__init__(); s.stack=[]; s.bad=0\n"
                           "  def handle_starttag(s,t,a):\n    if t not in VOID: s.stack.append(t)\n"
                           "  def handle_startendtag(s,t,a): pass\n"
                           "  def handle_endtag(s,t):\n    if not s.stack or s.stack.pop()!=t: s.bad+=1\n"
                           "p=P(); p.feed(open(sys.argv[1]).read()); p.close()\n"
                           "sys.exit(0 if p.bad==0 and not p.stack else 1)\n";
  const std::string cmd = "python3 " + script.string() + " " + file.string();
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("niceTicks and formatNumber") {
  const auto t = html::niceTicks(0, 17.3, 5);
  REQUIRE(t.size() >= 3);
  CHECK(t.front() == 0);
  CHECK(t.back() <= 17.3);
  CHECK(t[1] - t[0] == doctest::Approx(5.0));
  CHECK(html::formatNumber(3) == "3");
  CHECK(html::formatNumber(0.25) == "0.25");
  CHECK(html::formatNumber(std::numeric_limits<double>::quiet_NaN()) == "n/a");
}

TEST_CASE("RunSeries: per-bot rates from deltas, mean/min/max over playing bots") {
  RunSeries rs(2);
  rs.sample(0.0, {{0, 0, 10, 0, 0, true}, {0, 0, 30, 0, 0, true}});
  CHECK(rs.samples().empty());  // the baseline
  rs.sample(2.0, {{2000, 400, 10, 1, 0, true}, {6000, 800, 30, 2, 1, true}});
  REQUIRE(rs.samples().size() == 1);
  const RunSample& s = rs.samples()[0];
  CHECK(s.playing == 2);
  CHECK(s.inMin == doctest::Approx(1000));
  CHECK(s.inMax == doctest::Approx(3000));
  CHECK(s.inMean == doctest::Approx(2000));
  CHECK(s.outMean == doctest::Approx(300));
  CHECK(s.rttMean == doctest::Approx(20));
  CHECK(s.rttMax == doctest::Approx(30));
  CHECK(s.corrections == 3);
  CHECK(s.desyncs == 1);
  rs.sample(3.0, {{2000, 400, 10, 1, 0, false}, {6000, 800, 30, 2, 1, false}});
  CHECK(std::isnan(rs.samples()[1].inMean));  // nobody playing: a gap, not a zero
}

TEST_CASE("parseMetrics and intervalQuantile: step-time percentiles from bucket deltas") {
  const std::string before =
      "# TYPE loam_step_seconds histogram\n"
      "loam_players 3\n"
      "loam_step_seconds_bucket{le=\"0.001\"} 10\n"
      "loam_step_seconds_bucket{le=\"0.002\"} 10\n"
      "loam_step_seconds_bucket{le=\"0.004\"} 10\n"
      "loam_step_seconds_bucket{le=\"+Inf\"} 10\n"
      "loam_peers 9\n";
  const std::string after =
      "loam_players 5\n"
      "loam_step_seconds_bucket{le=\"0.001\"} 10\n"
      "loam_step_seconds_bucket{le=\"0.002\"} 60\n"
      "loam_step_seconds_bucket{le=\"0.004\"} 109\n"
      "loam_step_seconds_bucket{le=\"+Inf\"} 110\n";
  const MetricsScrape a = parseMetrics(before), b = parseMetrics(after);
  CHECK(a.players == 3);
  CHECK(b.players == 5);
  REQUIRE(b.stepBuckets.size() == 4);
  CHECK(std::isinf(b.stepBuckets.rbegin()->first));
  // 100 ticks in the interval: 50 in (1,2] ms, 49 in (2,4] ms, 1 above 4 ms.
  CHECK(intervalQuantile(a.stepBuckets, b.stepBuckets, 0.5) == doctest::Approx(0.002));
  CHECK(intervalQuantile(a.stepBuckets, b.stepBuckets, 0.25) == doctest::Approx(0.0015));
  CHECK(intervalQuantile(a.stepBuckets, b.stepBuckets, 0.995) == doctest::Approx(0.004));
  CHECK(std::isnan(intervalQuantile(b.stepBuckets, b.stepBuckets, 0.5)));  // no tick in between
  CHECK(!ServerMetricsScraper::create("127.0.0.1:80/metrics"));
  CHECK(!ServerMetricsScraper::create("http://127.0.0.1/metrics"));
  CHECK(ServerMetricsScraper::create("http://127.0.0.1:9100/metrics"));
}
