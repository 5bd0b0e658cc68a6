#include <catch2/catch.hpp>

#include "cerulion/core/names.hpp"

using namespace cerulion;

TEST_CASE("TopicNamesAreNormalizedWithALeadingSlash", "[names]") {
  CHECK(normalize_topic_name("/robot/camera_front").value() == "/robot/camera_front");
  CHECK(normalize_topic_name("robot/cmd").value() == "/robot/cmd");
  CHECK(normalize_topic_name("/a.b-c_d/E9").value() == "/a.b-c_d/E9");
}

TEST_CASE("TopicNamesThatCouldEscapeTheNamespaceAreRefused", "[names]") {
  for (const char* bad : {"", "/", "/a/../b", "/..", "/a/./b", "//a", "/a//b", "/a/", "/a b", "/a:b",
                          "/a\\b", "/caf\xc3\xa9", "/a\nb"}) {
    auto result = normalize_topic_name(bad);
    INFO("name: " << bad);
    CHECK_FALSE(result.ok());
    CHECK(result.code() == ErrorCode::InvalidTopicName);
    CHECK_FALSE(result.message().empty());
  }
  CHECK_FALSE(normalize_topic_name("/" + std::string(kMaxTopicNameLength, 'a')).ok());
  CHECK(normalize_topic_name("/" + std::string(kMaxTopicNameLength - 1, 'a')).ok());
}

TEST_CASE("DotDotIsNamedInTheMessage", "[names]") {
  auto result = normalize_topic_name("/a/../b");
  CHECK(result.message().find("'..'") != std::string::npos);
}

TEST_CASE("DomainsAreValidated", "[names]") {
  CHECK(validate_domain("default").ok());
  CHECK(validate_domain("robot_1-a").ok());
  CHECK_FALSE(validate_domain("").ok());
  CHECK_FALSE(validate_domain("a.b").ok());
  CHECK_FALSE(validate_domain("a/b").ok());
  CHECK_FALSE(validate_domain(std::string(kMaxDomainLength + 1, 'x')).ok());
}

TEST_CASE("SegmentNamesShowDomainAndTopicAndMapBack", "[names]") {
  CHECK(segment_name("default", "/robot/camera") == "/cerulion.default:robot:camera");
  CHECK(topic_from_segment_file("default", "cerulion.default:robot:camera") == "/robot/camera");
  CHECK(topic_from_segment_file("other", "cerulion.default:robot:camera").empty());
  CHECK(topic_from_segment_file("default", "sem.something").empty());
}
