// SPDX-License-Identifier: Apache-2.0
// The one topic matcher that record, flashback, the bridge and play select topics with: names,
// all, include and exclude patterns, and the errors that name what is wrong.

#include <catch2/catch.hpp>

#include "cerulion/recording/topic_selection.hpp"

using namespace cerulion;
using namespace cerulion::recording;

namespace {

TopicMatcher compiled(const TopicSelection& selection) {
  auto matcher = TopicMatcher::compile(selection);
  INFO(matcher.message());
  REQUIRE(matcher.ok());
  return std::move(*matcher);
}

}  // namespace

TEST_CASE("A matcher takes the named topics, in canonical form, and no other", "[recording][selection]") {
  auto m = compiled({.topics = {"robot/camera", "/imu", "/imu"}});
  CHECK(m.matches("/robot/camera"));
  CHECK(m.matches("/imu"));
  CHECK_FALSE(m.matches("/robot/camera/info"));
  CHECK_FALSE(m.matches("/robot"));
  CHECK(m.named() == std::vector<std::string>{"/robot/camera", "/imu"});
  CHECK_FALSE(m.follows_new_topics());
  CHECK_FALSE(m.empty());
}

TEST_CASE("A matcher with all takes every topic but the excluded ones", "[recording][selection]") {
  auto m = compiled({.all = true, .exclude = {"/debug$", "^/tmp/"}});
  CHECK(m.matches("/robot/camera"));
  CHECK(m.matches("/debug/x"));  // the pattern wants "/debug" at the end
  CHECK_FALSE(m.matches("/robot/debug"));
  CHECK_FALSE(m.matches("/tmp/a"));
  CHECK(m.follows_new_topics());
  CHECK_FALSE(m.empty());
}

TEST_CASE("A matcher searches include patterns anywhere in the name, minus the exclusions",
          "[recording][selection]") {
  auto m = compiled({.include = {"camera", "^/imu$"}, .exclude = {"/rear"}});
  CHECK(m.matches("/robot/camera/front"));
  CHECK(m.matches("/imu"));
  CHECK_FALSE(m.matches("/imu/raw"));
  CHECK_FALSE(m.matches("/robot/camera/rear"));
  CHECK_FALSE(m.matches("/lidar"));
  CHECK(m.follows_new_topics());
}

TEST_CASE("A named topic is taken even when an exclusion matches it", "[recording][selection]") {
  auto m = compiled({.topics = {"/camera/front"}, .all = true, .exclude = {"^/camera/"}});
  CHECK(m.matches("/camera/front"));
  CHECK_FALSE(m.matches("/camera/rear"));
  CHECK(m.matches("/imu"));
}

TEST_CASE("A matcher that can take nothing says it is empty", "[recording][selection]") {
  CHECK(compiled({}).empty());
  auto only_exclusions = compiled({.exclude = {"x"}});
  CHECK(only_exclusions.empty());
  CHECK_FALSE(only_exclusions.matches("/y"));
  CHECK_FALSE(only_exclusions.follows_new_topics());
}

TEST_CASE("A matcher refuses a bad pattern or a malformed name and names it", "[recording][selection]") {
  for (const TopicSelection& s : {TopicSelection{.include = {"/ok", "(["}}, TopicSelection{.exclude = {"[z-a]"}}}) {
    auto bad = TopicMatcher::compile(s);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.code() == ErrorCode::InvalidArgument);
    CHECK(bad.message().find("pattern '") == 0);
    CHECK(bad.message().find("--") == std::string::npos);  // no command-line flag names
  }
  auto named = TopicMatcher::compile({.topics = {"/fine", "a//b"}});
  REQUIRE_FALSE(named.ok());
  CHECK(named.code() == ErrorCode::InvalidTopicName);
  CHECK(named.message().find("'a//b'") != std::string::npos);
  CHECK(TopicMatcher::check_pattern("^/robot/(camera|imu)$").ok());
  auto one = TopicMatcher::check_pattern("(");
  CHECK(one.code() == ErrorCode::InvalidArgument);
  CHECK(one.message().find("'('") != std::string::npos);
}

TEST_CASE("A copy of a matcher answers as the original", "[recording][selection]") {
  auto m = compiled({.include = {"^/a/"}});
  TopicMatcher copy = m;
  CHECK(copy.matches("/a/b"));
  CHECK_FALSE(copy.matches("/b/a"));
  CHECK(copy.matches("/a/b") == m.matches("/a/b"));
}
