// SPDX-License-Identifier: Apache-2.0
#pragma once
// The campaign's tables as data, rendered as text, Markdown or HTML by the reports.

#include <string>
#include <vector>

#include "cerulion/bench/report.hpp"

namespace cerulion::bench::detail {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// Headline: lane, median at the headline size with its p99 and both workers' CPU, ratio to the fastest.
Table headline_table(const CampaignResult& r);
/// Every measured value: lane x size medians with p99 beside them.
Table values_table(const CampaignResult& r);
/// Skipped slots, achieved rates, CPU % of both workers per lane x size.
Table details_table(const CampaignResult& r);
/// Machine and build, as label/value rows.
Table machine_table(const CampaignResult& r, const Machine& m, const Build& b);

/// Lines said above or below the tables: a busy machine, cells that fell back, an interrupted run.
std::vector<std::string> notes(const CampaignResult& r, const Machine& m);

/// A time in µs as shown: "4.07 µs", "108.0 µs", "1.25 ms".
std::string time_text(double us);
/// A cell's median as shown ("4.07 µs", "9.10 µs @20 Hz" when it fell back), or why there is none.
std::string median_text(const Cell& c);
/// A measured cell's pooled p99 as shown, "-" when too few samples lie beyond it to quote it.
std::string p99_text(const Cell& c);
/// A measured cell's CPU of both workers: "1.5 / 0.7 %".
std::string cpu_text(const Cell& c);
const Cell* find_cell(const CampaignResult& r, const std::string& lane, std::uint64_t size);
/// The cell's lane as the result lists it.
const Lane* find_lane(const CampaignResult& r, const std::string& name);

}  // namespace cerulion::bench::detail
