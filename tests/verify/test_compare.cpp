// SPDX-License-Identifier: Apache-2.0
// The comparison of `verify` and `diff`, in memory: bytes exactly, json field by field with
// tolerances by glob, and what each difference says.

#include <catch2/catch.hpp>

#include <string>

#include "bytes.hpp"
#include "cerulion/verify/compare.hpp"
#include "cerulion/verify/report.hpp"

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
    t.messages.push_back({n * 1000, {bytes.begin(), bytes.end()}, input_label("/imu", n), n + 1});
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
  const MessageSet expected = {compare_test_topic("/raw", "", {"abcd", "wxyz\x01"})};
  const MessageSet got = {compare_test_topic("/raw", "", {"abcd", "wxQz\x01"})};
  const auto c = compare(expected, got);
  REQUIRE(c.total_differences == 1);
  const Difference& d = c.differences[0];
  CHECK(d.kind == DifferenceKind::Bytes);
  CHECK(d.topic == "/raw");
  CHECK(d.index == 1);
  CHECK(d.after_input == "/imu #1");
  CHECK(d.field == "byte 2");
  CHECK(d.expected == "79 7a 01");
  CHECK(d.got == "51 7a 01");
}

TEST_CASE("Messages that are printable text are shown as text, not hex", "[verify][compare]") {
  auto c = compare({compare_test_topic("/raw", "", {"17"})}, {compare_test_topic("/raw", "", {"seventeen"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].field.empty());
  CHECK(c.differences[0].expected == "\"17\"");
  CHECK(c.differences[0].got == "\"seventeen\"");
  CHECK(verify::describe(c.differences[0]) == "/raw #0 (after /imu #0): expected \"17\", got \"seventeen\"");

  c = compare({compare_test_topic("/j", "json", {R"({"a":1})"})}, {compare_test_topic("/j", "json", {"{not json"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(verify::describe(c.differences[0]) == "/j #0 (after /imu #0): the message is not json: expected json, got \"{not json\"");

  // A long text is shown from its first difference on.
  const std::string long_text(200, 'a');
  c = compare({compare_test_topic("/raw", "", {long_text + "b"})}, {compare_test_topic("/raw", "", {long_text + "c"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].field == "byte 200");
  CHECK(c.differences[0].expected == "...\"b\"");
}

TEST_CASE("An extra or a missing message after one input is that one difference, and later messages still compare by input",
          "[verify][compare]") {
  const MessageSet expected = {compare_test_topic("/out", "", {"a", "b", "c"})};
  TopicMessages extra = compare_test_topic("/out", "", {"a", "b", "x", "c"});
  extra.messages[2].after_input = input_label("/imu", 1);  // "x" came after input #1 too, beside "b"
  extra.messages[2].inputs_before = 2;
  extra.messages[3].after_input = input_label("/imu", 2);
  extra.messages[3].inputs_before = 3;
  auto c = compare(expected, {extra});
  REQUIRE(c.total_differences == 1);
  const Difference& d = c.differences[0];
  CHECK(d.kind == DifferenceKind::Extra);
  CHECK(d.index == 2);
  CHECK(d.expected_count == 1);
  CHECK(d.got_count == 2);
  CHECK(verify::describe(d) == "after /imu #1: 2 messages on /out, 1 expected (extra: \"x\")");

  TopicMessages missing = compare_test_topic("/out", "", {"a", "c"});
  missing.messages[1].after_input = input_label("/imu", 2);
  missing.messages[1].inputs_before = 3;
  c = compare(expected, {missing});
  REQUIRE(c.total_differences == 1);
  CHECK(c.differences[0].kind == DifferenceKind::Missing);
  CHECK(verify::describe(c.differences[0]) == "after /imu #1: 0 messages on /out, 1 expected (missing: \"b\")");

  // A recording of a node that lagged its inputs shows every answer after the last input; a run
  // answers each input at once: earlier, not extra.
  TopicMessages lagging = compare_test_topic("/out", "", {"a", "b", "c"});
  for (auto& m : lagging.messages) {
    m.after_input = input_label("/imu", 2);
    m.inputs_before = 3;
  }
  CHECK(compare({lagging}, expected).same());
}

TEST_CASE("A payload that is a prefix of the other differs in size", "[verify][compare]") {
  const auto c = compare({compare_test_topic("/raw", "", {"abcd\x01"})}, {compare_test_topic("/raw", "", {"ab"})});
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].field == "size");
  CHECK(c.differences[0].expected == "5 bytes");
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

TEST_CASE("A topic whose encoding, schema name or schema text changed differs even where its bytes agree",
          "[verify][compare]") {
  const std::string payload = R"({"x":1})";
  TopicMessages json_imu = compare_test_topic("/imu", "json", {payload});
  json_imu.type.schema = {"Imu", "jsonschema", R"({"type":"object"})"};

  SECTION("json with a schema against cbor without one: the encoding and the schema") {
    TopicMessages cbor = compare_test_topic("/imu", "cbor", {payload});
    const auto c = compare({json_imu}, {cbor});
    CHECK_FALSE(c.same());
    REQUIRE(c.differences.size() == 2);
    CHECK(c.differences[0].kind == DifferenceKind::Type);
    CHECK(c.differences[0].field == "encoding");
    CHECK(c.differences[0].expected == "json");
    CHECK(c.differences[0].got == "cbor");
    CHECK(c.differences[1].field == "schema");
    CHECK(c.differences[1].expected == "Imu (jsonschema, 17 bytes)");
    CHECK(c.differences[1].got == "none");
    REQUIRE(c.topics.size() == 1);
    CHECK(c.topics[0].differing == 0);
    CHECK(c.topics[0].type_differs);
    CHECK_FALSE(c.topics[0].same());
  }
  SECTION("json against raw bytes") {
    const auto c = compare({json_imu}, {compare_test_topic("/imu", "", {payload})});
    REQUIRE_FALSE(c.differences.empty());
    CHECK(c.differences[0].field == "encoding");
    CHECK(c.differences[0].got == "raw bytes");
  }
  SECTION("the same schema name with another text") {
    TopicMessages other = json_imu;
    other.type.schema.data = R"({"type":"array"})";
    const auto c = compare({json_imu}, {other});
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].field == "schema text");
    CHECK_THAT(c.differences[0].got, Catch::Contains("differing from byte 9"));
  }
  SECTION("the same type compares the same") {
    CHECK(compare({json_imu}, {json_imu}).same());
  }
}
