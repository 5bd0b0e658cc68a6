// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subcommands of `cerulion flashback`, one file each concern: start (the keeper), and the
// tools that work on a store with or without its keeper (dump, status, stop).

#include <string>

#include <CLI/CLI.hpp>

namespace cerulion::cli {

void add_flashback_start(CLI::App& flashback);
void add_flashback_dump(CLI::App& flashback);
void add_flashback_status(CLI::App& flashback);
void add_flashback_stop(CLI::App& flashback);

/// --name NAME (default "default"), checked as a keeper name.
CLI::Option* add_keeper_name_option(CLI::App& cmd, std::string& name);
/// Where dumps go: `dir`, else $CERULION_FLASHBACK_DIR, else the current directory.
std::string dump_directory(const std::string& dir);

}  // namespace cerulion::cli
