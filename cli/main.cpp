// SPDX-License-Identifier: Apache-2.0
// The multi-call entry point: `cerulion <cmd> ...` and `cerulion-<cmd> ...` (a symlink) are the same.
// This is the only place exceptions are caught and turned into exit codes.

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/stop.hpp"
#include "command.hpp"
#include "supervise.hpp"

namespace cerulion::cli {
namespace {

struct Entry {
  int order;
  AddCommand add;
};
std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

// A word from the command line, fit for one line of an error message.
std::string printable(const std::string& word) {
  std::string out;
  for (unsigned char c : word) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out.push_back(static_cast<char>(c));
  }
  return out;
}

// CLI11's message as one line: "--timeout: must be ..." reads "--timeout must be ...", and a
// missing subcommand names the ones there are.
std::string parse_error_line(const CLI::ParseError& error, const CLI::App& command) {
  std::string what = error.what();
  std::replace(what.begin(), what.end(), '\n', ' ');
  if (auto colon = what.find(": must be "); colon != std::string::npos && what.rfind(' ', colon) == std::string::npos) {
    what.erase(colon, 1);
  }
  if (what == "A subcommand is required") {
    std::string names;
    for (const auto* sub : command.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    what = fmt::format("'{}' needs a command: {}", command.get_name(), names);
  }
  return what;
}

}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommand add) {
  registry().push_back({order, add});
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

  auto& entries = registry();
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& e : entries) e.add(app);

  // The command path the words name ("cerulion topic hz"): errors point to its --help. An unknown
  // command word is named here, since CLI11 would call it "A subcommand is required".
  std::string path = "cerulion";
  CLI::App* current = &app;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (current == &app && word == "--domain") {
      ++i;
      continue;
    }
    if (word == "--") break;
    if (word.empty() || word[0] == '-') continue;
    if (current->get_subcommands({}).empty()) break;
    const auto known =
        current->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    if (known.empty()) {
      if (current != &app && current->get_require_subcommand_min() == 0) break;
      say(fmt::format("cerulion: unknown {}command '{}' (see '{} --help')",
                      current == &app ? "" : current->get_name() + " ", printable(word), path));
      return kExitUsage;
    }
    current = known.front();
    path += " " + current->get_name();
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
    say(fmt::format("cerulion: {} (see '{} --help')", parse_error_line(e, *current), path));
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
