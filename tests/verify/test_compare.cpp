// SPDX-License-Identifier: Apache-2.0
// The comparison of `verify` and `diff`, in memory: bytes exactly, json field by field with
// tolerances by glob, and what each difference says.

#include <catch2/catch.hpp>

#include <string>

#include "bytes.hpp"
#include "cerulion/verify/compare.hpp"

using namespace cerulion;
using namespace cerulion::verify;

namespace {

TopicMessages compare_test_topic(const std::string& topic, const std::string& encoding, const std::vector<std::string>& payloads) {
  TopicMessages t;
  t.topic = topic;
  t.type.message_encoding = encoding;
  std::uint64_t n = 0;
  for (const auto& p : payloads) {
    const auto bytes = test::bytes_of(p);
    t.messages.push_back({n * 1000, {bytes.begin(), bytes.end()}, input_label("/imu", n)});
    ++n;
  }
  return t;
}

}  // namespace

TEST_CASE("Equal messages on every topic compare the same", "[verify][compare]") {
  const MessageSet a = {compare_test_topic("/raw", "", {"abc", "def"}), compare_test_topic("/j", "json", {R"({"x":1})"})};
  const auto c = compare(a, a);
  CHECK(c.same());
  CHECK(c.differences.empty());
  REQUIRE(c.topics.size() == 2);
  CHECK(c.topics[0].expected == 2);
  CHECK(c.topics[0].got == 2);
  CHECK(c.topics[0].differing == 0);
}

TEST_CASE("A raw topic is compared byte by byte and names the first differing byte", "[verify][compare]") {
  const MessageSet expected = {compare_test_topic("/raw", "", {"abcd", "wxyz"})};
  const MessageSet got = {compare_test_topic("/raw", "", {"abcd", "wxQz"})};
  const auto c = compare(expected, got);
  REQUIRE(c.total_differences == 1);
  const Difference& d = c.differences[0];
  CHECK(d.kind == DifferenceKind::Bytes);
  CHECK(d.topic == "/raw");
  CHECK(d.index == 1);
  CHECK(d.after_input == "/imu #1");
  CHECK(d.field == "byte 2");
  CHECK(d.expected == "79 7a");
  CHECK(d.got == "51 7a");
}

TEST_CASE("A payload that is a prefix of the other differs in size", "[verify][compare]") {
  const auto c = compare({compare_test_topic("/raw", "", {"abcd"})}, {compare_test_topic("/raw", "", {"ab"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].field == "size");
  CHECK(c.differences[0].expected == "4 bytes");
  CHECK(c.differences[0].got == "2 bytes");
}

TEST_CASE("A json topic is compared field by field, whatever the key order and spacing", "[verify][compare]") {
  const MessageSet expected = {compare_test_topic("/j", "json", {R"({"a":1,"b":{"c":[1,2,3]}})"})};
  SECTION("the same fields in another order and spacing are the same") {
    CHECK(compare(expected, {compare_test_topic("/j", "json", {R"({ "b": {"c": [1, 2, 3]}, "a": 1 })"})}).same());
  }
  SECTION("a differing nested field is named by its path") {
    const auto c = compare(expected, {compare_test_topic("/j", "json", {R"({"a":1,"b":{"c":[1,5,3]}})"})});
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].kind == DifferenceKind::Field);
    CHECK(c.differences[0].field == "b.c.1");
    CHECK(c.differences[0].expected == "2");
    CHECK(c.differences[0].got == "5");
  }
  SECTION("a field absent on one side is said so") {
    const auto c = compare(expected, {compare_test_topic("/j", "json", {R"({"b":{"c":[1,2,3]},"d":true})"})});
    REQUIRE(c.differences.size() == 2);
    CHECK(c.differences[0].field == "a");
    CHECK(c.differences[0].got == "(none)");
    CHECK(c.differences[1].field == "d");
    CHECK(c.differences[1].expected == "(none)");
  }
  SECTION("an array of another length is said so") {
    const auto c = compare(expected, {compare_test_topic("/j", "json", {R"({"a":1,"b":{"c":[1,2]}})"})});
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].field == "b.c.length");
  }
}

TEST_CASE("A tolerance lets a number differ by up to its epsilon, on the fields its glob names", "[verify][compare]") {
  const MessageSet expected = {compare_test_topic("/j", "json", {R"({"pose":{"x":1.0,"y":2.0},"v":3.0})"})};
  const MessageSet got = {compare_test_topic("/j", "json", {R"({"pose":{"x":1.0000001,"y":2.0000001},"v":3.0000001})"})};
  CHECK(compare(expected, got).total_differences == 3);

  CompareOptions o;
  o.tolerances.push_back(*parse_tolerance("pose.*=1e-6"));
  auto c = compare(expected, got, o);
  REQUIRE(c.total_differences == 1);
  CHECK(c.differences[0].field == "v");

  o.tolerances = {*parse_tolerance("pose.x=1e-9"), *parse_tolerance("*=1e-3")};
  c = compare(expected, got, o);
  REQUIRE(c.total_differences == 1);  // the first matching tolerance applies: x's is too tight
  CHECK(c.differences[0].field == "pose.x");
}

TEST_CASE("Messages missing or extra are differences of their own, counted per topic", "[verify][compare]") {
  const MessageSet expected = {compare_test_topic("/a", "", {"1", "2", "3"}), compare_test_topic("/b", "", {"x"})};
  const MessageSet got = {compare_test_topic("/a", "", {"1"}), compare_test_topic("/c", "", {"y"})};
  const auto c = compare(expected, got);
  REQUIRE(c.topics.size() == 3);
  CHECK(c.topics[0].topic == "/a");
  CHECK(c.topics[0].differing == 2);
  CHECK(c.topics[1].topic == "/b");
  CHECK(c.topics[1].got == 0);
  CHECK(c.topics[2].topic == "/c");
  CHECK(c.topics[2].expected == 0);
  REQUIRE(c.total_differences == 4);
  CHECK(c.differences[0].kind == DifferenceKind::Missing);
  CHECK(c.differences[0].index == 1);
  CHECK(c.differences[3].kind == DifferenceKind::Extra);
  CHECK(c.differences[3].topic == "/c");
}

TEST_CASE("A json message that does not parse is undecodable, on the side it is on", "[verify][compare]") {
  auto c = compare({compare_test_topic("/j", "json", {R"({"a":1})"})}, {compare_test_topic("/j", "json", {"{not json"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].kind == DifferenceKind::Undecodable);
  CHECK_FALSE(c.expected_undecodable());
  c = compare({compare_test_topic("/j", "json", {"{oops"})}, {compare_test_topic("/j", "json", {R"({"a":1})"})});
  CHECK(c.expected_undecodable());
}

TEST_CASE("Differences kept stop at the limit while the count goes on", "[verify][compare]") {
  CompareOptions o;
  o.max_differences = 2;
  const auto c = compare({compare_test_topic("/a", "", {"1", "2", "3", "4"})}, {compare_test_topic("/a", "", {"5", "6", "7", "8"})}, o);
  CHECK(c.differences.size() == 2);
  CHECK(c.total_differences == 4);
}

TEST_CASE("A tolerance that is not FIELD=EPS with a non-negative number is refused", "[verify][compare]") {
  CHECK(parse_tolerance("x=1e-6").ok());
  CHECK(parse_tolerance("a.b=0").ok());
  for (const char* bad : {"x", "=1", "x=", "x=-1", "x=abc", "x=1e-6z", "x=inf"}) {
    INFO(bad);
    const auto t = parse_tolerance(bad);
    CHECK(t.code() == ErrorCode::InvalidArgument);
    CHECK(t.message().find(bad) != std::string::npos);
  }
}
