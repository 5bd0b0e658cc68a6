// SPDX-License-Identifier: Apache-2.0
#include "topic_options.hpp"

#include <cctype>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "command.hpp"

namespace cerulion::cli {

void add_topic_pattern_options(CLI::App& cmd, recording::TopicSelection& selection, std::string_view verb) {
  std::string lower(verb);
  if (!lower.empty()) lower[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower[0])));
  cmd.add_option("-e,--regex", selection.include,
                 fmt::format("{} topics matching this regular expression (repeatable; new ones too)", verb))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("-x,--exclude", selection.exclude,
                 fmt::format("Do not {} topics matching this regular expression (repeatable)", lower))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void check_patterns(const std::vector<std::string>& patterns, const char* flag) {
  for (const auto& p : patterns) {
    if (Status st = recording::TopicMatcher::check_pattern(p); !st) {
      throw Exit{kExitUsage, fmt::format("{} {}", flag, st.message())};
    }
  }
}

void check_topic_patterns(const recording::TopicSelection& selection) {
  check_patterns(selection.include, "--regex");
  check_patterns(selection.exclude, "--exclude");
}

void require_topic_selection(const recording::TopicSelection& selection, std::string_view command) {
  if (selection.topics.empty() && !selection.all && selection.include.empty()) {
    throw Exit{kExitUsage, fmt::format("{}: name topics, or use -a/--all or -e/--regex", command)};
  }
}

std::string unpublished_warning(const std::string& topic, const std::string& domain, std::string_view command) {
  auto info = inspect_topic(topic, domain);
  if (info.code() == ErrorCode::NotFound) {
    return fmt::format("topic '{}' does not exist yet; {} waits for it to be published (Ctrl-C stops)", topic, command);
  }
  if (info && info->published == 0 && info->count(Role::Publisher) == 0) {
    return fmt::format("topic '{}' has no publisher yet; {} waits for one (Ctrl-C stops)", topic, command);
  }
  return {};
}

}  // namespace cerulion::cli
