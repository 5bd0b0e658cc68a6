// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `cerulion completion` knows of the command line, taken from the parser: every command, its
// options and positionals and what their values are. One generator per shell turns it into a
// script (completion_bash.cpp, completion_zsh.cpp, completion_fish.cpp).

#include <string>
#include <vector>

#include "command.hpp"

namespace cerulion::cli::completion {

/// What a value (of an option or a positional) is, so the shells can offer the right words.
enum class ValueKind {
  None,             ///< free text: nothing to offer
  Choices,          ///< one of `choices`
  File,             ///< a path
  Recording,        ///< an MCAP file: *.mcap files (and directories, to get to them)
  Directory,        ///< a directory
  Topic,            ///< a live topic of the domain
  Keeper,           ///< the name of a flashback store of the domain
  RecordingTopic,   ///< a topic of the recording named by the command's file positional
  Command,          ///< a command path (`help topic hz`)
};

struct OptionSpec {
  std::vector<std::string> names;  ///< "-s", "--size"
  std::string description;
  bool takes_value = false;
  bool many = false;  ///< takes every following word up to the next option (`play --topics /a /b`)
  ValueKind kind = ValueKind::None;
  std::vector<std::string> choices;
};

struct PositionalSpec {
  std::string name;
  ValueKind kind = ValueKind::None;
  bool many = false;  ///< takes the remaining words
  std::vector<std::string> choices;
};

struct CommandSpec {
  std::string path;  ///< "ping", "topic list"; "" for the top level
  std::string description;
  bool hidden = false;  ///< not offered (`completion`), yet its arguments complete
  std::vector<OptionSpec> options;
  std::vector<std::string> children;         ///< visible subcommands
  std::vector<std::string> hidden_children;  ///< recognized, never offered
  std::vector<PositionalSpec> positionals;
};

/// Every command under `app` (itself as `path`), depth first.
void collect(const CLI::App* app, const std::string& path, bool hidden, std::vector<CommandSpec>& out);
const CommandSpec* find_spec(const std::vector<CommandSpec>& specs, const std::string& path);
/// The options a command accepts: its own, then those of the commands above it that it does not
/// redefine (the parser falls through to them: `cerulion topic list --domain x`).
std::vector<OptionSpec> accepted_options(const std::vector<CommandSpec>& specs, const CommandSpec& c);
std::string join(const std::vector<std::string>& v, const std::string& sep = " ");
/// `s` inside single quotes of a shell word.
std::string escape_single(const std::string& s);
/// Index of the command's first recording positional (the file play reads), -1 if none.
int file_positional(const CommandSpec& c);

/// The scripts; `tops` are the visible top-level commands.
std::string bash_script(const std::vector<CommandSpec>& specs, const std::vector<std::string>& tops);
std::string zsh_script(const std::vector<CommandSpec>& specs, const std::vector<std::string>& tops);
std::string fish_script(const std::vector<CommandSpec>& specs);

}  // namespace cerulion::cli::completion
