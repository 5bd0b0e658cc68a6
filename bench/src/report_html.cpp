// SPDX-License-Identifier: Apache-2.0
// One self-contained page: the seed page's log-scale chart at the headline size, median against
// payload size per lane, and the tables. Inline SVG and CSS only: no scripts, no external assets.

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "cerulion/bench/report.hpp"
#include "tables.hpp"

namespace cerulion::bench {

namespace {

using detail::Table;

const char* const kPalette[] = {"#1f77b4", "#2ca02c", "#17becf", "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string time_label(double us) {
  if (us >= 1e6) return fmt::format("{:g} s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:g} ms", us / 1e3);
  return fmt::format("{:g} µs", us);
}

std::string color_of(const CampaignResult& r, const std::string& lane) {
  for (std::size_t i = 0; i < r.lanes.size(); ++i) {
    if (r.lanes[i].name == lane) return kPalette[i % (sizeof kPalette / sizeof *kPalette)];
  }
  return "#777";
}

// Decades [lo, hi] (powers of ten, in µs) covering every measured median.
std::pair<double, double> decades(const CampaignResult& r, bool headline_only) {
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (const auto& c : r.cells) {
    if (c.status != CellStatus::Ok || c.median_us <= 0) continue;
    if (headline_only && c.size != r.settings.headline_size) continue;
    lo = std::min(lo, c.median_us);
    hi = std::max(hi, c.median_us);
  }
  if (hi == 0) return {1, 10};
  double a = std::pow(10.0, std::floor(std::log10(lo)));
  double b = std::pow(10.0, std::ceil(std::log10(hi)));
  if (b <= a) b = a * 10;
  return {a, b};
}

std::string headline_chart(const CampaignResult& r) {
  const auto [lo, hi] = decades(r, true);
  const int label_w = 190, plot_w = 520, bar_h = 26, gap = 10, top = 30;
  const int rows = static_cast<int>(r.lanes.size());
  const int height = top + rows * (bar_h + gap) + 30;
  auto x_of = [&](double us) {
    return label_w + plot_w * (std::log10(us) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"Median round trip at {} per lane, log scale\">\n",
      label_w + plot_w + 90, height, esc(size_label(r.settings.headline_size)));
  for (double g = lo; g <= hi * 1.0001; g *= 10) {
    const double x = x_of(g);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>\n", x, top - 8,
                       height - 24);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n", x, height - 8,
                       esc(time_label(g)));
  }
  int y = top;
  for (const auto& lane : r.lanes) {
    const Cell* c = detail::find_cell(r, lane.name, r.settings.headline_size);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lane\" text-anchor=\"end\">{}</text>\n", label_w - 8,
                       y + bar_h / 2 + 5, esc(lane.name));
    if (c && c->status == CellStatus::Ok && c->median_us > 0) {
      const double x = x_of(c->median_us);
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", label_w, y,
                         std::max(1.0, x - label_w), bar_h, color_of(r, lane.name));
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"value\">{}</text>\n", x + 6, y + bar_h / 2 + 5,
                         esc(detail::median_text(*c)));
    } else {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"missing\">{}</text>\n", label_w + 6, y + bar_h / 2 + 5,
                         esc(c ? detail::median_text(*c) : "not measured"));
    }
    y += bar_h + gap;
  }
  return svg + "</svg>\n";
}

std::string size_chart(const CampaignResult& r) {
  const auto [lo, hi] = decades(r, false);
  const int left = 70, plot_w = 600, plot_h = 300, top = 20, bottom = 50;
  const std::size_t n = r.settings.sizes.size();
  auto x_of = [&](std::size_t i) { return left + (n <= 1 ? plot_w / 2.0 : plot_w * static_cast<double>(i) / (n - 1)); };
  auto y_of = [&](double us) {
    return top + plot_h * (1 - (std::log10(us) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)));
  };
  const int legend_w = 200;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"Median round trip against payload size per lane, log scale\">\n",
      left + plot_w + 30 + legend_w, top + plot_h + bottom);
  for (double g = lo; g <= hi * 1.0001; g *= 10) {
    const double y = y_of(g);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>\n", left, y,
                       left + plot_w, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"axis\" text-anchor=\"end\">{}</text>\n", left - 6, y + 4,
                       esc(time_label(g)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       top + plot_h + 20, esc(size_label(r.settings.sizes[i])));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">payload</text>\n",
                     left + plot_w / 2, top + plot_h + 42);
  int legend_y = top + 10;
  for (const auto& lane : r.lanes) {
    const std::string color = color_of(r, lane.name);
    std::string points;
    for (std::size_t i = 0; i < n; ++i) {
      const Cell* c = detail::find_cell(r, lane.name, r.settings.sizes[i]);
      if (!c || c->status != CellStatus::Ok || c->median_us <= 0) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(c->median_us));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>\n", x_of(i), y_of(c->median_us),
                         color);
    }
    if (!points.empty()) {
      svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", points, color);
    }
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", left + plot_w + 30,
                       legend_y - 10, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lane\">{}{}</text>\n", left + plot_w + 48, legend_y,
                       esc(lane.name), lane.available ? "" : " (unavailable)");
    legend_y += 20;
  }
  return svg + "</svg>\n";
}

std::string render_html(const Table& t) {
  std::string out = "<h3>" + esc(t.title) + "</h3>\n<table>\n<tr>";
  for (const auto& h : t.header) out += "<th>" + esc(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + esc(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string html_report(const CampaignResult& r, const Machine& m, const Build& b) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>cerulion bench</title>\n<style>\n"
      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#222;max-width:980px}\n"
      "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}h3{font-size:1em;margin-top:1.5em}\n"
      "table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}\n"
      "th{background:#f3f3f3}svg text{font-family:inherit;font-size:12px;fill:#222}\n"
      "svg .grid{stroke:#ddd;stroke-width:1}svg .axis{fill:#666}svg .missing{fill:#999;font-style:italic}\n"
      "</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>cerulion bench: round-trip latency on {}</h1>\n", esc(m.hostname.empty() ? "this machine" : m.hostname));
  out += fmt::format("<p>Median round trip at {} per lane (log scale: each gridline is 10x).</p>\n",
                     esc(size_label(r.settings.headline_size)));
  out += headline_chart(r);
  out += "<h2>Median against payload size</h2>\n";
  out += size_chart(r);
  out += "<h2>Tables</h2>\n";
  for (const auto& table : {detail::headline_table(r), detail::values_table(r), detail::details_table(r),
                            detail::machine_table(r, m, b)}) {
    out += render_html(table);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace cerulion::bench
