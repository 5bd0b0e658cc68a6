// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recording/topic_selection.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "cerulion/core/names.hpp"

namespace cerulion::recording {
namespace detail {

struct TopicMatcherRules {
  bool all = false;
  std::vector<std::string> named;
  std::set<std::string, std::less<>> named_set;
  std::vector<std::regex> include;
  std::vector<std::regex> exclude;
};

}  // namespace detail

namespace {

Result<std::regex> compile_pattern(std::string_view pattern) {
  try {
    return std::regex(pattern.begin(), pattern.end(), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status(ErrorCode::InvalidArgument,
                  "pattern '" + std::string(pattern) + "': not a valid regular expression (" + e.what() + ")");
  }
}

bool any_matches(const std::vector<std::regex>& patterns, std::string_view topic) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::regex& re) { return std::regex_search(topic.begin(), topic.end(), re); });
}

}  // namespace

Result<TopicMatcher> TopicMatcher::compile(const TopicSelection& selection) {
  auto rules = std::make_shared<detail::TopicMatcherRules>();
  rules->all = selection.all;
  for (const auto& topic : selection.topics) {
    auto name = normalize_topic_name(topic);
    if (!name) return Status(name.code(), "'" + topic + "': " + name.message());
    if (rules->named_set.insert(*name).second) rules->named.push_back(*name);
  }
  for (auto [patterns, into] : {std::pair{&selection.include, &rules->include},
                                std::pair{&selection.exclude, &rules->exclude}}) {
    for (const auto& p : *patterns) {
      auto re = compile_pattern(p);
      if (!re) return re.status();
      into->push_back(std::move(*re));
    }
  }
  return TopicMatcher(std::move(rules));
}

Status TopicMatcher::check_pattern(std::string_view pattern) { return compile_pattern(pattern).status(); }

bool TopicMatcher::matches(std::string_view topic) const {
  if (rules_->named_set.count(topic) > 0) return true;
  if (!rules_->all && !any_matches(rules_->include, topic)) return false;
  return !any_matches(rules_->exclude, topic);
}

bool TopicMatcher::follows_new_topics() const noexcept { return rules_->all || !rules_->include.empty(); }

bool TopicMatcher::empty() const noexcept { return !follows_new_topics() && rules_->named.empty(); }

const std::vector<std::string>& TopicMatcher::named() const noexcept { return rules_->named; }

}  // namespace cerulion::recording
