// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a campaign gives a person and a program: the method's two tables on a terminal, every
// cell as JSON, the tables as Markdown, and one self-contained HTML page with the charts (inline
// SVG, no scripts, no external assets).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cerulion/bench/campaign.hpp"

namespace cerulion::bench {

/// The machine a campaign ran on.
struct Machine {
  std::string cpu_model;
  unsigned cores = 0;
  std::string kernel;
  std::string governor;   ///< "" when not readable (VMs often have none)
  std::string hostname;
};
Machine describe_machine();

/// The build that measured.
struct Build {
  std::string version;
  std::string commit;   ///< "" when unknown
};

/// The two tables (headline at the headline size, then every value), skipped slots, achieved
/// rates, CPU, the machine and the build.
std::string text_report(const CampaignResult& result, const Machine& machine, const Build& build);
/// Every cell with its repetition medians and pooled percentiles; keys documented in cerulion-bench(1).
nlohmann::ordered_json json_report(const CampaignResult& result, const Machine& machine, const Build& build);
std::string markdown_report(const CampaignResult& result, const Machine& machine, const Build& build);
std::string html_report(const CampaignResult& result, const Machine& machine, const Build& build);

/// Identifies a bench JSON document.
inline constexpr const char* kJsonFormat = "cerulion-bench/1";

}  // namespace cerulion::bench
