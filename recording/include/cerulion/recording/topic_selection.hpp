// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which topics a command or a component takes (`record`, `flashback`, `bridge`, `play`): named
// topics, every topic, topics matching patterns, minus exclusions. TopicSelection says it; a
// TopicMatcher is it checked and compiled once, and answers for any topic name.
//
//   cerulion::recording::TopicSelection s{.all = true, .exclude = {"/debug$"}};
//   auto matcher = cerulion::recording::TopicMatcher::compile(s);
//   if (!matcher) ...;                            // names the bad pattern or topic
//   if (matcher->matches("/robot/camera")) ...;

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::recording {

/// Which topics to take. A topic named explicitly is taken; otherwise a topic is taken when `all`
/// is set or it matches an include pattern, and no exclude pattern matches it (the exclusions
/// narrow `all` and `include`, never a name given explicitly). Every member has an initializer, so
/// that `{.all = true}` leaves the others empty without a compiler warning.
struct TopicSelection {
  /// Topics named explicitly ("a/b" is "/a/b").
  std::vector<std::string> topics{};
  /// Every topic, including those that appear later.
  bool all = false;
  /// ECMAScript regular expressions, searched anywhere in the name: topics matching any of them
  /// (new ones too).
  std::vector<std::string> include{};
  /// ECMAScript regular expressions: topics matching any of them are not taken by `all` or
  /// `include`.
  std::vector<std::string> exclude{};
};

namespace detail {
struct TopicMatcherRules;
}

/// A TopicSelection checked and compiled. Immutable; cheap to copy; matches() may be called from
/// any number of threads at once.
class TopicMatcher {
 public:
  /// InvalidArgument naming a pattern that is not a regular expression ("pattern '([': ..."),
  /// InvalidTopicName naming a malformed named topic ("'a//b': ...").
  static Result<TopicMatcher> compile(const TopicSelection& selection);
  /// Ok, or the InvalidArgument compile() would give for `pattern` (for a caller that names the
  /// option a pattern came from).
  static Status check_pattern(std::string_view pattern);

  /// Whether the selection takes `topic` (a canonical name, as listings and recordings give).
  bool matches(std::string_view topic) const;
  /// Whether topics that appear later can match (`all` or an include pattern): whether a
  /// component following the selection must watch for new topics.
  bool follows_new_topics() const noexcept;
  /// Whether no topic can match: nothing named, not all, no include pattern.
  bool empty() const noexcept;
  /// The named topics in canonical form, in the order given, without repeats.
  const std::vector<std::string>& named() const noexcept;

 private:
  explicit TopicMatcher(std::shared_ptr<const detail::TopicMatcherRules> rules) : rules_(std::move(rules)) {}
  std::shared_ptr<const detail::TopicMatcherRules> rules_;
};

}  // namespace cerulion::recording
