// SPDX-License-Identifier: Apache-2.0
// The multi-call entry point: `cerulion <cmd> ...` and `cerulion-<cmd> ...` (a symlink) are the same.
// This is the only place exceptions are caught and turned into exit codes.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/stop.hpp"
#include "command.hpp"
#include "errors.hpp"
#include "suggest.hpp"
#include "supervise.hpp"

namespace cerulion::cli {
namespace {

// Every command, in the order --help lists them.
constexpr void (*kCommands[])(CLI::App&) = {
    add_pub_command,    add_echo_command,    add_topic_command,     add_clean_command,  add_ping_command,
    add_pong_command,   add_bench_command,   add_record_command,    add_play_command,   add_info_command,
    add_recover_command, add_flashback_command, add_bridge_command, add_view_command,   add_diff_command,
    add_verify_command, add_completion_command, add_help_command,
};

// A word that CLI11 reads as an option: "-x", "--name", "--name=value"; "-", "--" and negative
// numbers are values.
bool looks_like_option(const std::string& word) {
  if (word.size() < 2 || word[0] != '-' || word == "--") return false;
  char* end = nullptr;
  (void)std::strtod(word.c_str(), &end);
  return *end != '\0';
}

// The option a word names: "--name=value" -> "--name", "-n5" and "-ab" (flags together) -> "-n", "-a".
std::string option_name(const std::string& word) {
  if (word.rfind("--", 0) == 0) return word.substr(0, word.find('='));
  return word.substr(0, 2);
}

// The option a word names in `command` or a command above it (all fall through to their
// parents: `cerulion topic list --domain x` is `--domain`), or nullptr.
const CLI::Option* find_option(const CLI::App& command, const std::string& word) {
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    if (const auto* option = app->get_option_no_throw(option_name(word))) return option;
  }
  return nullptr;
}

// Every option name `command` accepts, as written on a command line ("--domain", "-n").
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    for (const auto* option : app->get_options()) {
      for (const auto& name : option->get_lnames()) names.push_back("--" + name);
      for (const auto& name : option->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

// "unknown option '--domian': did you mean '--domain'?"
std::string unknown_option_line(const std::string& word, const CLI::App& command) {
  const std::string hint = did_you_mean(option_name(word), option_names(command));
  return fmt::format("unknown option '{}'{}{}", printable(option_name(word)), hint.empty() ? "" : ": ", hint);
}

// CLI11's message as one line: "--timeout: must be ..." reads "--timeout must be ...", and a
// missing subcommand names the ones there are. An unknown option is named first whatever CLI11
// stopped at ("topic is required" after `echo --jsno`): it is the likelier mistake.
std::string parse_error_line(const CLI::ParseError& error, const CLI::App& app, const CLI::App& command,
                             const std::vector<std::string>& args) {
  for (const auto& word : app.remaining(true)) {
    if (looks_like_option(word) && find_option(command, word) == nullptr) return unknown_option_line(word, command);
  }
  std::string what = error.what();
  // The words CLI11 echoes are escaped as typed, before its own line breaks become spaces.
  for (const auto& word : args) {
    const std::string shown = printable(word);
    if (shown == word) continue;
    for (auto at = what.find(word); at != std::string::npos; at = what.find(word, at + shown.size())) {
      what.replace(at, word.size(), shown);
    }
  }
  std::replace(what.begin(), what.end(), '\n', ' ');
  if (auto colon = what.find(": must be "); colon != std::string::npos && what.rfind(' ', colon) == std::string::npos) {
    what.erase(colon, 1);
  }
  if (what == "A subcommand is required") {
    std::string names;
    for (const auto& name : subcommand_names(command)) names += (names.empty() ? "" : ", ") + name;
    what = fmt::format("'{}' needs a command: {}", command.get_name(), names);
  }
  return what;
}

// The commands that run another, and where each keeps the words after `--`.
std::map<const CLI::App*, std::vector<std::string>*>& commands_after_dashes() {
  static std::map<const CLI::App*, std::vector<std::string>*> commands;
  return commands;
}

}  // namespace

void add_command_after_dashes(CLI::App& cmd, std::vector<std::string>& command, const std::string& help) {
  commands_after_dashes()[&cmd] = &command;
  // Declared for --help and the completions (a "command" positional completes command names);
  // main() fills `command` itself, so a word CLI11 gives this positional stood before `--`.
  cmd.add_option("command", command, help)->allow_extra_args()->check([](const std::string& word) {
    return fmt::format("'{}' stands before --: the command and its arguments go after it", printable(word));
  });
}

GlobalOptions& globals() {
  static GlobalOptions options;
  return options;
}
// The flag lives in core (stop.hpp), where a user's own node gets the same behaviour.
const std::atomic<bool>* stop_flag() { return cerulion::stop_flag(); }
bool stop_requested() { return cerulion::stop_requested(); }
int stop_signal() { return cerulion::stop_signal(); }

void install_stop_handlers() { (void)cerulion::stop_on_signals(); }

}  // namespace cerulion::cli

namespace {

// A process started with fd 0, 1 or 2 closed (`2>&-`, as some supervisors start daemons) would
// hand that number to the first file it opens, and its own lines would go into it: a recording,
// a flashback store, a socket. Each closed one is opened on /dev/null (or, without one, on "/" as
// a path, where every read and write fails) before anything else runs: .preinit_array runs ahead
// of every shared library's initialisers and of main().
void take_standard_fds(int, char**, char**) {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() gives the lowest free number: this one, the lower ones being open by now. Not
    // close-on-exec: a command this one starts (verify, bench) is covered by it too.
    int opened = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened < 0) opened = ::open("/", O_PATH | O_DIRECTORY);
    if (opened >= 0 && opened != fd) {
      // Cannot happen with the lower numbers open; never leave a stray one behind if it does.
      (void)::dup2(opened, fd);
      ::close(opened);
    }
  }
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const take_standard_fds_first)(int, char**, char**) =
    take_standard_fds;

}  // namespace

int main(int argc, char** argv) {
  using namespace cerulion::cli;
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe shows up as EPIPE, handled as a quiet exit

  // Multi-call: "cerulion-ping args" means "cerulion ping args".
  std::vector<std::string> args(argv, argv + argc);
  std::string invoked = args[0];
  if (auto slash = invoked.rfind('/'); slash != std::string::npos) invoked = invoked.substr(slash + 1);
  if (invoked.rfind("cerulion-", 0) == 0 && invoked.size() > 9) {
    args.insert(args.begin() + 1, invoked.substr(9));
  }

  CLI::App app{"cerulion: zero-copy shared-memory messaging for robot processes on one machine,\n"
               "and recordings of what they said.",
               "cerulion"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("-V,--version", std::string("cerulion ") + CERULION_VERSION);
  globals().domain = cerulion::default_domain();
  app.add_option("--domain", globals().domain,
                 "Domain the topics live in: 1 to 64 of A-Z a-z 0-9 _ - (env CERULION_DOMAIN, default 'default')")
      ->check([](const std::string& d) {
        auto st = cerulion::validate_domain(d);
        return st.ok() ? std::string() : st.message();
      });

  for (const auto add : kCommands) add(app);

  // The command path the words name ("cerulion topic hz"): errors point to its --help. An unknown
  // command word or option on the way is named here, with the nearest known one, since CLI11 would
  // call the first "A subcommand is required" and a word after the second an unknown command.
  std::string path = "cerulion";
  CLI::App* current = &app;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (current->get_subcommands({}).empty()) break;  // a leaf's own words are CLI11's to parse
    const std::string& word = args[i];
    if (word == "--") break;
    if (looks_like_option(word)) {
      const auto* option = find_option(*current, word);
      if (option == nullptr) {
        say(fmt::format("cerulion: {} (see '{} --help')", unknown_option_line(word, *current), path));
        return kExitUsage;
      }
      if (option->get_items_expected_max() > 0 && word == option_name(word)) ++i;  // its value
      continue;
    }
    if (word.empty() || word[0] == '-') continue;
    const auto known =
        current->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    if (known.empty()) {
      const std::string hint = did_you_mean(word, subcommand_names(*current));
      if (current != &app && current->get_require_subcommand_min() == 0) {
        // The command takes topics where a subcommand may stand (`bridge /x`). A bare word near a
        // subcommand's name is likelier a typo than a topic (`bridge stat` would bridge /stat);
        // the topic itself is written with its '/'.
        if (hint.empty() || word[0] == '/') break;
        say(fmt::format("cerulion: unknown {} command '{}': {} (a topic of that name is written '/{}')",
                        current->get_name(), printable(word), hint, printable(word)));
        return kExitUsage;
      }
      say(fmt::format("cerulion: unknown {}command '{}'{}{} (see '{} --help')",
                      current == &app ? "" : current->get_name() + " ", printable(word), hint.empty() ? "" : ": ",
                      hint, path));
      return kExitUsage;
    }
    current = known.front();
    path += " " + current->get_name();
  }

  // CLI11 never sees a command that runs another's words after `--` (add_command_after_dashes).
  if (auto found = commands_after_dashes().find(current); found != commands_after_dashes().end()) {
    if (auto dashes = std::find(args.begin() + 1, args.end(), "--"); dashes != args.end()) {
      found->second->assign(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }

  std::vector<std::string> rest(args.begin() + 1, args.end());
  std::reverse(rest.begin(), rest.end());  // CLI11's vector overload takes arguments reversed
  try {
    app.parse(rest);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    say(fmt::format("cerulion: {} (see '{} --help')", parse_error_line(e, app, *current, args), path));
    return kExitUsage;
  } catch (const Exit& e) {
    if (!e.message.empty()) say("cerulion: " + e.message);
    return e.code;
  } catch (const std::exception& e) {
    // Said without stdio: a closed or full stderr (what threw, often) must not make this throw.
    say(std::string("cerulion: ") + e.what());
    return kExitFailure;
  }
  return kExitOk;
}
