// SPDX-License-Identifier: Apache-2.0
#pragma once
// `status [--json]` under a command whose running processes keep status files (`bridge status`,
// `view status`): what the command reads differs, what it prints is said once here.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cerulion::cli {

/// The running processes of a domain, as the report shows them.
struct StatusReport {
  std::vector<std::string> objects;             ///< each one's status as a JSON object
  std::vector<std::vector<std::string>> lines;  ///< each one's text lines
  std::vector<std::string> problems;            ///< what stood in place of a status file
};

/// Each status of `found` (a listing's) as to_json and `lines` show it.
template <class S, class Lines>
StatusReport status_report(const std::vector<S>& found, std::vector<std::string> problems, Lines lines) {
  StatusReport report{{}, {}, std::move(problems)};
  for (const auto& s : found) {
    report.objects.push_back(to_json(s));
    report.lines.push_back(lines(s));
  }
  return report;
}

struct StatusCommand {
  std::string noun;         ///< "bridge": "no bridge is running in domain 'x'"
  std::string key;          ///< "bridges": the JSON object's list
  std::string description;  ///< the --help line
  std::string footer;
};

/// Adds `status [--json]` under `parent`. `read` gives the domain's report (or throws Exit). The
/// problems go to stderr as warnings; with --json one object {domain, <key>: [...], problems},
/// printed with none running too (docs/json.md); none running is exit 1, as in text.
void add_status_command(CLI::App& parent, const StatusCommand& command, std::function<StatusReport()> read);

}  // namespace cerulion::cli
