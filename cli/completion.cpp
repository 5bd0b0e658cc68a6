// SPDX-License-Identifier: Apache-2.0
// `cerulion completion bash|zsh|fish`: shell completion scripts generated from the very option
// definitions the parser uses, so they cannot drift from the program. The files in completions/
// are this command's output (a test compares them). What a word means (a flag, an option and its
// value, a positional) comes from the parser, per command: `record --force` is a flag,
// `clean --force TOPIC` takes a topic. `cerulion completion --topics-in FILE` (hidden) prints the
// topics of a recording, one a line, for `play FILE --topics <TAB>`.

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>

#ifdef CERULION_HAVE_RECORDER
#include "cerulion/recorder/reader.hpp"
#endif
#include "command.hpp"
#include "completion_spec.hpp"

namespace cerulion::cli {
using namespace completion;

void add_completion_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  cmd->footer(
      "The scripts are generated from the parser itself; completions/ in the source tree holds them.\n"
      "Examples:\n"
      "  cerulion completion bash > ~/.local/share/bash-completion/completions/cerulion\n"
      "  cerulion completion zsh > ~/.zfunc/_cerulion\n"
      "  cerulion completion fish > ~/.config/fish/completions/cerulion.fish");
  auto shell = std::make_shared<std::string>();
  auto topics_in = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash, zsh or fish")->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->add_option("--topics-in", *topics_in, "Print the topics of this recording, one a line (for the scripts)")
      ->group("");
  cmd->callback([&app, shell, topics_in] {
    if (!topics_in->empty()) {
#ifdef CERULION_HAVE_RECORDER
      auto reader = recorder::Reader::open(*topics_in);
      check(reader.status());
      std::set<std::string> topics;
      for (const auto& [id, channel] : reader->summary().channels) topics.insert(channel.topic);
      for (const auto& topic : topics) fmt::print("{}\n", topic);
      return;
#else
      throw Exit{kExitFailure, "this cerulion was built without the recorder"};
#endif
    }
    if (shell->empty()) throw Exit{kExitUsage, "completion needs a shell: bash, zsh or fish"};
    std::vector<CommandSpec> specs;
    collect(&app, "", false, specs);
    std::vector<std::string> tops;
    for (const auto& c : specs)
      if (!c.hidden && !c.path.empty() && c.path.find(' ') == std::string::npos) tops.push_back(c.path);
    if (*shell == "bash") fmt::print("{}", bash_script(specs, tops));
    else if (*shell == "zsh") fmt::print("{}", zsh_script(specs, tops));
    else fmt::print("{}", fish_script(specs));
  });
}

}  // namespace cerulion::cli
