// SPDX-License-Identifier: Apache-2.0
#include "status_report.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"

namespace cerulion::cli {

void add_status_command(CLI::App& parent, const StatusCommand& command, std::function<StatusReport()> read) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = parent.add_subcommand("status", command.description);
  cmd->footer(command.footer);
  cmd->add_flag("--json", *json,
                fmt::format("Print one JSON object (docs/json.md): {{domain, {}: [...], problems: [...]}}", command.key));
  cmd->callback([json, command, &parent, read = std::move(read)] {
    // The parser hands options `status` does not know to its parent (how --domain may follow a
    // subcommand): one of the parent's own would be taken and silently do nothing here.
    for (const CLI::Option* o : parent.get_options()) {
      if (o->count() > 0 && o->get_name() != "--help") {
        throw Exit{kExitUsage, fmt::format("{} is an option of '{} ...', not of '{} status'", o->get_name(),
                                           parent.get_name(), parent.get_name())};
      }
    }
    const StatusReport report = read();
    for (const auto& problem : report.problems) fmt::print(stderr, "cerulion: warning: {}\n", problem);
    if (*json) {
      std::string list;
      for (std::size_t i = 0; i < report.objects.size(); ++i) list += (i ? "," : "") + report.objects[i];
      fmt::print("{{\"domain\":{},\"{}\":[{}],\"problems\":{}}}\n", nlohmann::json(globals().domain).dump(),
                 command.key, list,
                 nlohmann::json(report.problems).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    if (report.objects.empty()) {
      throw Exit{kExitFailure, fmt::format("no {} is running in domain '{}'", command.noun, globals().domain)};
    }
    if (*json) return;
    for (const auto& lines : report.lines)
      for (const auto& line : lines) fmt::print("{}\n", line);
  });
}

}  // namespace cerulion::cli
