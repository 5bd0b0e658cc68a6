// SPDX-License-Identifier: Apache-2.0
// `cerulion help [COMMAND...]`: the --help of the program or of a command, as git and ros2 users
// type it.

#include <fmt/core.h>

#include "command.hpp"
#include "suggest.hpp"

namespace cerulion::cli {

void add_help_command(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("help", "Show the help of cerulion or of a command (cerulion help topic hz)");
  cmd->footer(
      "Examples:\n"
      "  cerulion help\n"
      "  cerulion help record\n"
      "  cerulion help topic hz");
  cmd->add_option("command", *words, "A command, and a subcommand of it where it has some");
  cmd->callback([&app, words] {
    const CLI::App* target = &app;
    std::string path = "cerulion";
    for (const auto& word : *words) {
      const auto found = target->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
      if (found.empty()) {
        const std::string hint = did_you_mean(word, subcommand_names(*target));
        throw Exit{kExitUsage, fmt::format("no {}command '{}'{}{} (see '{} --help')",
                                           target == &app ? "" : target->get_name() + " ", word,
                                           hint.empty() ? "" : ": ", hint, path)};
      }
      target = found.front();
      path += " " + target->get_name();
    }
    // Not target->help(): that shows the help of whichever subcommand was parsed, this one.
    fmt::print("{}", target->get_formatter()->make_help(target, path, CLI::AppFormatMode::Normal));
  });
}

}  // namespace cerulion::cli
