// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which imported topics a bridge follows: the same rules as the tap set's (named topics, all, or
// matching an include pattern; never one matching an exclude pattern), on the local name.

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cerulion/core/names.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::bridge::detail {

class Selection {
 public:
  /// InvalidArgument naming a pattern that is not a regular expression, InvalidTopicName naming a
  /// malformed topic.
  static Result<Selection> create(const recording::TopicSelection& s) {
    Selection out;
    out.all_ = s.all;
    for (const auto& t : s.topics) {
      auto name = normalize_topic_name(t);
      if (!name) return Status(name.code(), "'" + t + "': " + name.message());
      out.named_.insert(*name);
    }
    for (auto [patterns, into] : {std::pair{&s.include, &out.include_}, std::pair{&s.exclude, &out.exclude_}}) {
      for (const auto& p : *patterns) {
        try {
          into->emplace_back(p, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return Status(ErrorCode::InvalidArgument,
                        "pattern '" + p + "': not a valid regular expression (" + e.what() + ")");
        }
      }
    }
    return out;
  }
  bool empty() const noexcept { return !all_ && named_.empty() && include_.empty(); }
  bool selected(const std::string& topic) const {
    auto any = [&](const std::vector<std::regex>& res) {
      for (const auto& re : res)
        if (std::regex_search(topic, re)) return true;
      return false;
    };
    if (any(exclude_)) return false;
    return all_ || named_.count(topic) > 0 || any(include_);
  }

 private:
  bool all_ = false;
  std::set<std::string> named_;
  std::vector<std::regex> include_, exclude_;
};

}  // namespace cerulion::bridge::detail
