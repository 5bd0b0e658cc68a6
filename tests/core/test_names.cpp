// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <unistd.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"

using namespace cerulion;

TEST_CASE("Topic names are normalized with a leading slash", "[names]") {
  CHECK(normalize_topic_name("/robot/camera_front").value() == "/robot/camera_front");
  CHECK(normalize_topic_name("robot/cmd").value() == "/robot/cmd");
  CHECK(normalize_topic_name("/a.b-c_d/E9").value() == "/a.b-c_d/E9");
}

TEST_CASE("Topic names that could escape the namespace are refused", "[names]") {
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

TEST_CASE("A '..' component is named in the message", "[names]") {
  auto result = normalize_topic_name("/a/../b");
  CHECK(result.message().find("'..'") != std::string::npos);
}

TEST_CASE("Domains are validated", "[names]") {
  CHECK(validate_domain("default").ok());
  CHECK(validate_domain("robot_1-a").ok());
  CHECK_FALSE(validate_domain("").ok());
  CHECK_FALSE(validate_domain("a.b").ok());
  CHECK_FALSE(validate_domain("a/b").ok());
  CHECK_FALSE(validate_domain(std::string(kMaxDomainLength + 1, 'x')).ok());
}

TEST_CASE("Segment names show domain and topic and map back", "[names]") {
  CHECK(segment_name("default", "/robot/camera") == "/cerulion.default:robot:camera");
  CHECK(topic_from_segment_file("default", "cerulion.default:robot:camera") == "/robot/camera");
  CHECK(topic_from_segment_file("other", "cerulion.default:robot:camera").empty());
  CHECK(topic_from_segment_file("default", "sem.something").empty());
}

TEST_CASE("A bad byte in a topic name is shown once, in hex", "[names]") {
  CHECK(normalize_topic_name("/caf\xc3\xa9").message() ==
        "invalid topic name '/caf\\xc3\\xa9': character '\\xc3\\xa9' is not allowed (use A-Z a-z 0-9 _ . - and /)");
  CHECK(normalize_topic_name("/a\x7f" "b").message() ==
        "invalid topic name '/a\\x7fb': character '\\x7f' is not allowed (use A-Z a-z 0-9 _ . - and /)");
  CHECK(normalize_topic_name("/a\tb").message() ==
        "invalid topic name '/a\\x09b': character '\\x09' is not allowed (use A-Z a-z 0-9 _ . - and /)");
  CHECK(normalize_topic_name("/a\\b").message() ==
        "invalid topic name '/a\\\\b': character '\\\\' is not allowed (use A-Z a-z 0-9 _ . - and /)");
  CHECK(normalize_topic_name("/a\nb/").message() == "invalid topic name '/a\\x0ab/': it ends with '/'");
}

TEST_CASE("A bad byte in a domain name is shown in hex, without naming any command-line option", "[names]") {
  CHECK(validate_domain("d\tx").message() ==
        "invalid domain 'd\\x09x': character '\\x09' is not allowed (use A-Z a-z 0-9 _ and -)");
  CHECK(validate_domain("caf\xc3\xa9").message() ==
        "invalid domain 'caf\\xc3\\xa9': character '\\xc3\\xa9' is not allowed (use A-Z a-z 0-9 _ and -)");
  CHECK(validate_domain("a.b").message().find("--") == std::string::npos);
}

TEST_CASE("A domain and a topic that are too long together are refused, naming both lengths and the limit",
          "[names]") {
  const std::string domain(kMaxDomainLength, 'd');
  const std::string topic = "/" + std::string(kMaxTopicNameLength - 1, 't');
  REQUIRE(validate_domain(domain).ok());
  REQUIRE(normalize_topic_name(topic).ok());
  Status st = validate_segment_name(domain, topic);
  CHECK(st.code() == ErrorCode::InvalidArgument);
  CHECK(st.message().find("(200 characters) and domain") != std::string::npos);
  CHECK(st.message().find("(64 characters) are too long together") != std::string::npos);
  CHECK(st.message().find("273 bytes, over the limit of 255") != std::string::npos);

  // Exactly at the limit: "cerulion." + domain + topic is 255 bytes.
  const std::string fitting = "/" + std::string(kMaxSegmentFileNameLength - 9 - kMaxDomainLength - 1, 't');
  CHECK(segment_name(domain, fitting).size() - 1 == kMaxSegmentFileNameLength);
  CHECK(validate_segment_name(domain, fitting).ok());
  CHECK_FALSE(validate_segment_name(domain, fitting + "t").ok());
  CHECK(validate_segment_name("default", topic).ok());
}

TEST_CASE("Publishers and subscribers refuse a domain and topic too long together before touching /dev/shm",
          "[names][segment]") {
  const std::string domain(kMaxDomainLength, 'd');
  const std::string topic = "/" + std::string(kMaxTopicNameLength - 1, 't');
  PublisherOptions po;
  po.topic.domain = domain;
  auto pub = Publisher::create(topic, po);
  REQUIRE_FALSE(pub.ok());
  CHECK(pub.code() == ErrorCode::InvalidArgument);
  CHECK(pub.message() == validate_segment_name(domain, topic).message());
  SubscriberOptions so;
  so.topic.domain = domain;
  auto sub = Subscriber::create(topic, so);
  REQUIRE_FALSE(sub.ok());
  CHECK(sub.code() == ErrorCode::InvalidArgument);

  // The longest pair that fits works end to end (the process id keeps parallel runs apart).
  std::string fitting = "/" + std::to_string(::getpid()) + "_";
  fitting += std::string(kMaxSegmentFileNameLength - 9 - kMaxDomainLength - fitting.size(), 't');
  po.topic.domain = domain;
  auto longest = Publisher::create(fitting, po);
  REQUIRE(longest.ok());
  CHECK(::access(("/dev/shm" + segment_name(domain, fitting)).c_str(), F_OK) == 0);
}
