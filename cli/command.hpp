// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared plumbing of the subcommands. Exceptions are the CLI boundary's way of ending: a
// subcommand throws Exit (errors.hpp) or CLI11's errors and main() turns it into an exit code, once.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cerulion/core/status.hpp"
#include "errors.hpp"
#include "numbers.hpp"

namespace cerulion::cli {

/// Settings every subcommand shares (filled by main from global flags / environment).
struct GlobalOptions {
  std::string domain;
};
GlobalOptions& globals();

/// Set by SIGINT/SIGTERM/SIGHUP; every wait in core is given this as its cancel flag.
const std::atomic<bool>* stop_flag();
bool stop_requested();
/// The signal that set the stop flag (SIGINT, SIGTERM, SIGHUP), 0 if none.
int stop_signal();
/// Installs SIGINT/SIGTERM/SIGHUP handlers that set stop_flag() (no SA_RESTART: blocked calls
/// return), so a closed terminal or a supervisor's stop ends a command as cleanly as Ctrl-C.
void install_stop_handlers();

/// "64", "4KiB", "1MiB", "16MiB", "1.5MB", "2G", "1TiB" -> bytes (KiB=1024, kB=1000, K=1024).
std::optional<std::uint64_t> parse_size(std::string_view text);
/// A CLI11 validator/transformer accepting parse_size() syntax, any size that fits 64 bits.
CLI::Validator size_validator();
/// A CLI11 validator accepting the name of an existing group (for --group).
CLI::Validator group_validator();
/// "1 topic", "2 topics": a count with its noun, singular for exactly one. `plural_noun` where
/// adding "s" is wrong ("1 entry", "2 entries").
std::string counted(std::uint64_t count, std::string_view noun, std::string_view plural_noun = {});
/// Bytes as "1.5 MiB".
std::string format_bytes(double bytes);

/// The commands, each defined in its own file: adds it, its options and its callback to `app`.
/// main.cpp lists them in one table, in the order --help shows them.
void add_pub_command(CLI::App& app);
void add_echo_command(CLI::App& app);
void add_topic_command(CLI::App& app);
void add_clean_command(CLI::App& app);
void add_ping_command(CLI::App& app);
void add_pong_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_record_command(CLI::App& app);
void add_play_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_recover_command(CLI::App& app);
void add_flashback_command(CLI::App& app);
void add_bridge_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_view_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_completion_command(CLI::App& app);
void add_help_command(CLI::App& app);

/// Gives `cmd` a positional "command": the words after the first `--`, which main() takes off
/// the command line before CLI11 parses the rest, so they reach `command` untouched (none of the
/// command's own options is read as `cmd`'s), and a list option just before `--` ends there
/// (`--input /a /b -- node`) instead of taking the `--`. A word before `--` that no option takes
/// is a usage error naming it.
void add_command_after_dashes(CLI::App& cmd, std::vector<std::string>& command, const std::string& help);

}  // namespace cerulion::cli
