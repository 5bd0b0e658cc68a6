// SPDX-License-Identifier: Apache-2.0
// The tables for a terminal and as Markdown.

#include <fmt/core.h>

#include "cerulion/bench/report.hpp"
#include "tables.hpp"

namespace cerulion::bench {

namespace {

using detail::Table;

// Columns are aligned by characters, not bytes ("µ" is two bytes).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string render_text(const Table& t) {
  std::vector<std::size_t> w(t.header.size(), 0);
  for (std::size_t i = 0; i < t.header.size(); ++i) w[i] = width(t.header[i]);
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (std::size_t i = 0; i < cells.size() && i < w.size(); ++i) {
      out += " " + cells[i] + std::string(w[i] - width(cells[i]), ' ') + " ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = t.title + "\n";
  bool has_header = false;
  for (const auto& h : t.header) has_header = has_header || !h.empty();
  if (has_header) out += line(t.header);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string escape_markdown(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

std::string render_markdown(const Table& t) {
  std::string out = "### " + t.title + "\n\n";
  out += "|";
  for (const auto& h : t.header) out += " " + escape_markdown(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + escape_markdown(cell) + " |";
    out += "\n";
  }
  return out + "\n";
}

}  // namespace

std::string text_report(const CampaignResult& r, const Machine& m, const Build& b) {
  std::string out;
  for (const auto& table : {detail::headline_table(r), detail::values_table(r), detail::details_table(r),
                            detail::machine_table(r, m, b)}) {
    out += render_text(table) + "\n";
  }
  for (const auto& lane : r.lanes) {
    if (!lane.available) out += fmt::format("{}: unavailable: {}\n", lane.name, lane.reason);
  }
  for (const auto& note : detail::notes(r, m)) out += note + "\n";
  return out;
}

std::string markdown_report(const CampaignResult& r, const Machine& m, const Build& b) {
  std::string out = "## cerulion bench\n\n";
  for (const auto& note : detail::notes(r, m)) out += "> " + escape_markdown(note) + "\n\n";
  for (const auto& table : {detail::headline_table(r), detail::values_table(r), detail::details_table(r),
                            detail::machine_table(r, m, b)}) {
    out += render_markdown(table);
  }
  return out;
}

}  // namespace cerulion::bench
