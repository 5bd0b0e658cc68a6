// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a campaign gives a person and a program: the method's two tables on a terminal, every
// cell as JSON, the tables as Markdown, and one self-contained HTML page with the charts (inline
// SVG, no scripts, no external assets). The JSON is also read back (read_json_report), so a
// saved campaign can be rendered again or compared with another without measuring.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cerulion/bench/campaign.hpp"
#include "cerulion/bench/machine_load.hpp"

namespace cerulion::bench {

/// The machine a campaign ran on.
struct Machine {
  std::string cpu_model;
  unsigned cores = 0;
  std::string kernel;
  std::string governor;   ///< "" when not readable (VMs often have none)
  std::string hostname;
  MachineLoad load;       ///< how busy it was (check_machine_load); not checked by describe_machine
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

/// A campaign read back from json_report's output.
struct SavedReport {
  CampaignResult result;
  Machine machine;
  Build build;
};
/// Reads a bench JSON back; what json_report writes reads back the same. InvalidArgument saying
/// why `text` is not one (not JSON, no "format": "cerulion-bench/1", a cell without lane or size).
[[nodiscard]] Result<SavedReport> read_json_report(std::string_view text);

}  // namespace cerulion::bench
