// SPDX-License-Identifier: Apache-2.0
// One self-contained page: a log-scale chart at the headline size, median against
// payload size per lane, and the tables. Inline SVG and CSS only: no scripts, no external assets.

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/core.h>

#include "cerulion/bench/report.hpp"
#include "cerulion/core/detail/markup.hpp"
#include "tables.hpp"

namespace cerulion::bench {

namespace {

using detail::Table;

const char* const kPalette[] = {"#1f77b4", "#2ca02c", "#17becf", "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

using cerulion::detail::markup_escaped;

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
      label_w + plot_w + 340, height, markup_escaped(size_label(r.settings.headline_size)));
  for (double g = lo; g <= hi * 1.0001; g *= 10) {
    const double x = x_of(g);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>\n", x, top - 8,
                       height - 24);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n", x, height - 8,
                       markup_escaped(time_label(g)));
  }
  int y = top;
  for (const auto& lane : r.lanes) {
    const Cell* c = detail::find_cell(r, lane.name, r.settings.headline_size);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lane\" text-anchor=\"end\">{}</text>\n", label_w - 8,
                       y + bar_h / 2 + 5, markup_escaped(lane.name));
    if (c && c->status == CellStatus::Ok && c->median_us > 0) {
      const double x = x_of(c->median_us);
      // A cell measured at a lower rate than asked is drawn pale, its rate in its label.
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}/>\n", label_w, y,
                         std::max(1.0, x - label_w), bar_h, color_of(r, lane.name),
                         c->fell_back ? fmt::format(" fill-opacity=\"0.35\" stroke=\"{}\"", color_of(r, lane.name)) : "");
      // The p99 where it is quotable, and what the lane's two workers cost in CPU.
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"value\">{}</text>\n", x + 6, y + bar_h / 2 + 5,
                         markup_escaped(detail::median_text(*c) +
                                        (c->p99_quotable ? ", p99 " + detail::p99_text(*c) : "") + ", CPU " +
                                        detail::cpu_text(*c)));
    } else {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"missing\">{}</text>\n", label_w + 6, y + bar_h / 2 + 5,
                         markup_escaped(!c ? "not measured"
                                        : c->status == CellStatus::Failed && !c->reason.empty()
                                            ? "failed: " + c->reason
                                            : detail::median_text(*c)));
    }
    y += bar_h + gap;
  }
  return svg + "</svg>\n";
}

// Octaves [a, b] (powers of two, in bytes) covering every payload, with a tick every `step` octaves.
struct OctaveAxis {
  double a = 0, b = 1;
  int step = 1;
};
OctaveAxis octaves(const std::vector<std::uint64_t>& sizes) {
  OctaveAxis axis;
  double lo = std::numeric_limits<double>::max(), hi = 0;
  bool any = false;
  for (auto size : sizes) {
    if (size == 0) continue;
    any = true;
    lo = std::min(lo, std::log2(static_cast<double>(size)));
    hi = std::max(hi, std::log2(static_cast<double>(size)));
  }
  if (!any) return axis;
  axis.a = std::floor(lo);
  axis.b = std::ceil(hi);
  if (axis.b - axis.a < 2) {
    axis.a -= 1;
    axis.b += 1;
  }
  while ((axis.b - axis.a) / axis.step > 9) axis.step *= 2;
  axis.a = std::floor(axis.a / axis.step) * axis.step;
  axis.b = std::ceil(axis.b / axis.step) * axis.step;
  return axis;
}

// Which sizes of a lane failed, as a phrase for the legend ("" when none did).
std::string failed_sizes(const CampaignResult& r, const Lane& lane) {
  std::vector<std::string> failed;
  std::size_t cells = 0;
  for (auto size : r.settings.sizes) {
    const Cell* c = detail::find_cell(r, lane.name, size);
    if (!c) continue;
    ++cells;
    if (c->status == CellStatus::Failed) failed.push_back(size_label(size));
  }
  if (failed.empty()) return "";
  if (failed.size() == cells) return "failed at every size";
  std::string out = "failed at ";
  for (std::size_t i = 0; i < failed.size(); ++i) out += (i ? ", " : "") + failed[i];
  return out;
}

std::string size_chart(const CampaignResult& r) {
  const auto [lo, hi] = decades(r, false);
  const auto axis = octaves(r.settings.sizes);
  const int left = 90, plot_w = 600, plot_h = 300, top = 20, axis_h = 50, legend_row = 20;
  const int legend_top = top + plot_h + axis_h + 10;
  const int height = legend_top + legend_row * (static_cast<int>(r.lanes.size()) + 1) + 10;
  auto x_of = [&](std::uint64_t size) {
    return left + plot_w * (std::log2(static_cast<double>(size)) - axis.a) / (axis.b - axis.a);
  };
  auto y_of = [&](double us) {
    return top + plot_h * (1 - (std::log10(us) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)));
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"Median round trip against payload size per lane, both axes log scale\">\n",
      left + plot_w + 40, height);
  for (double g = lo; g <= hi * 1.0001; g *= 10) {
    const double y = y_of(g);
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>\n", left, y,
                       left + plot_w, y);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"axis\" text-anchor=\"end\">{}</text>\n", left - 6, y + 4,
                       markup_escaped(time_label(g)));
  }
  for (double k = axis.a; k <= axis.b + 0.001; k += axis.step) {
    const auto size = static_cast<std::uint64_t>(std::llround(std::exp2(k)));
    const double x = x_of(size);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>\n", x, top,
                       top + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text>\n", x,
                       top + plot_h + 18, markup_escaped(size_label(size)));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"title\" text-anchor=\"middle\">payload (log scale)</text>\n",
                     left + plot_w / 2, top + plot_h + 40);
  svg += fmt::format(
      "<text x=\"{0}\" y=\"{1}\" class=\"title\" text-anchor=\"middle\" transform=\"rotate(-90 {0} {1})\">median round "
      "trip (log scale)</text>\n",
      18, top + plot_h / 2);
  bool any_fallback = false;
  int legend_y = legend_top + 10;
  // Every line first, then every point over them, so no line hides a point.
  std::string marks, legend;
  for (const auto& lane : r.lanes) {
    const std::string color = color_of(r, lane.name);
    std::string points;
    bool measured = false;
    for (auto size : r.settings.sizes) {
      const Cell* c = detail::find_cell(r, lane.name, size);
      if (!c || c->status != CellStatus::Ok || c->median_us <= 0) continue;
      measured = true;
      const double x = x_of(size), y = y_of(c->median_us);
      points += fmt::format("{:.1f},{:.1f} ", x, y);
      const std::string tip = fmt::format("{} {}: {} at {:g} Hz", lane.name, size_label(size),
                                          detail::time_text(c->median_us), c->rate_hz);
      if (c->fell_back) {
        // Hollow, with its rate beside it: not a point of the asked rate.
        any_fallback = true;
        marks += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title>"
            "</circle>\n<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"rate\">{:g} Hz</text>\n",
            x, y, color, markup_escaped(tip), x + 7, y - 6, c->rate_hz);
      } else {
        marks += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>\n", x, y,
                             color, markup_escaped(tip));
      }
    }
    if (!points.empty()) {
      svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", points, color);
    }
    std::string label = lane.name;
    if (!lane.available) {
      label += " (unavailable: " + lane.reason + ")";
    } else if (const std::string failed = failed_sizes(r, lane); !failed.empty()) {
      label += " (" + failed + ")";
    }
    if (measured) {
      legend += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", left, legend_y - 10, color);
    } else {
      legend += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"11\" height=\"11\" fill=\"none\" stroke=\"#999\"/>\n", left,
                            legend_y - 10);
    }
    legend += fmt::format("<text x=\"{}\" y=\"{}\" class=\"{}\">{}</text>\n", left + 18, legend_y,
                       measured ? "lane" : "missing", markup_escaped(label));
    legend_y += legend_row;
  }
  svg += marks + legend;
  if (any_fallback) {
    svg += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"#fff\" stroke=\"#555\" stroke-width=\"2\"/>\n<text x=\"{}\" y=\"{}\" "
        "class=\"lane\">measured at a lower rate than {:g} Hz (the rate beside it): the lane could not keep {:g} Hz</text>\n",
        left + 6, legend_y - 4, left + 18, legend_y, r.settings.rate_hz, r.settings.rate_hz);
  }
  return svg + "</svg>\n";
}

std::string render_html(const Table& t) {
  std::string out = "<h3>" + markup_escaped(t.title) + "</h3>\n<table>\n";
  // A label/value table (the machine's) has no header to show.
  if (std::any_of(t.header.begin(), t.header.end(), [](const std::string& h) { return !h.empty(); })) {
    out += "<tr>";
    for (const auto& h : t.header) out += "<th>" + markup_escaped(h) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + markup_escaped(cell) + "</td>";
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
      "svg .title{fill:#444;font-size:13px}svg .rate{fill:#444;font-size:10px}\n"
      ".note{border-left:4px solid #d62728;background:#fdf0f0;padding:.5em .8em}\n"
      "</style>\n</head>\n<body>\n";
  // A host name alone ("vm") reads as a word of the title: it is said to be one.
  out += fmt::format("<h1>cerulion bench: round-trip latency on {}</h1>\n",
                     markup_escaped(m.hostname.empty() ? "this machine" : "host " + m.hostname));
  for (const auto& note : detail::notes(r, m)) out += "<p class=\"note\">" + markup_escaped(note) + "</p>\n";
  out += fmt::format("<p>Median round trip at {} per lane (log scale: each gridline is 10x).</p>\n",
                     markup_escaped(size_label(r.settings.headline_size)));
  out += headline_chart(r);
  out += "<h2>Median against payload size</h2>\n";
  out += fmt::format("<p>Both axes log scale. Filled points were measured at {:g} Hz; a hollow point is a cell that "
                     "could not keep that rate, with the rate it was measured at beside it.</p>\n",
                     r.settings.rate_hz);
  out += size_chart(r);
  out += "<h2>Tables</h2>\n";
  for (const auto& table : {detail::headline_table(r), detail::values_table(r), detail::details_table(r),
                            detail::machine_table(r, m, b)}) {
    out += render_html(table);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace cerulion::bench
