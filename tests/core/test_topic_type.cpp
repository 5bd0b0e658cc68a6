// SPDX-License-Identifier: Apache-2.0
// A topic's type (message encoding and schema): checked against MCAP's registry, declared once,
// seen by everyone who joins or looks, and refused when another is declared.

#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "layout.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;

namespace {

const std::string kImuSchema = R"({"type":"object","properties":{"x":{"type":"number"}}})";

TopicType json_imu() { return TopicType{"json", {"Imu", "jsonschema", kImuSchema}}; }

PublisherOptions declaring(const TopicType& type) {
  PublisherOptions o;
  o.topic.type = type;
  return o;
}

void require_refused(const TopicType& type, const std::string& says) {
  Status st = check_topic_type(type);
  INFO(describe(type) << ": " << st.message());
  REQUIRE(st.code() == ErrorCode::InvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains(says));
}

}  // namespace

TEST_CASE("Types MCAP's registry allows are accepted and others refused saying why", "[topic_type]") {
  SECTION("accepted") {
    for (const TopicType& ok : {TopicType{}, TopicType{"json", {}}, json_imu(), TopicType{"cbor", {}},
                                TopicType{"protobuf", {"robot.Imu", "protobuf", std::string("\x0a\x03\x66\x6f\x6f", 5)}},
                                TopicType{"cdr", {"std_msgs/msg/String", "ros2msg", "string data"}},
                                TopicType{"x-mine", {"Thing", "x-idl", "anything"}}}) {
      INFO(describe(ok));
      CHECK(check_topic_type(ok).ok());
    }
  }
  SECTION("unknown names") {
    require_refused({"jason", {}}, "unknown message encoding 'jason' (known: json, protobuf");
    require_refused({"ros2msg", {}}, "is a schema encoding, not a message encoding (ROS 2 messages are message encoding cdr");
    require_refused({"json", {"Imu", "yaml", "{}"}}, "unknown schema encoding 'yaml'");
  }
  SECTION("pairings") {
    require_refused({"protobuf", {}}, "message encoding 'protobuf' needs a schema of encoding protobuf");
    require_refused({"cdr", {"Pose", "protobuf", "x"}}, "takes a schema of encoding ros2msg, ros2idl or omgidl, not 'protobuf'");
    require_refused({"cbor", {"Thing", "jsonschema", "{}"}}, "message encoding 'cbor' takes no schema");
    require_refused({"", {"Imu", "jsonschema", "{}"}}, "a schema needs a message encoding");
    require_refused({"json", {"", "jsonschema", "{}"}}, "a schema needs a name");
  }
  SECTION("schema contents") {
    require_refused({"json", {"Imu", "jsonschema", "{\"type\": "}}, "JSON Schema 'Imu' does not parse");
    require_refused({"json", {"Imu", "jsonschema", "[1, 2]"}}, "is not an object (it is a JSON array)");
    require_refused({"json", {"Big", "jsonschema", std::string(kMaxSchemaBytes + 1, ' ')}}, "a topic carries at most 16 MiB");
  }
}

TEST_CASE("A JSON topic's payload is checked as one JSON value, other encodings are not inspected", "[topic_type]") {
  const TopicType json{"json", {}};
  CHECK(check_payload(json, bytes_of(R"({"x": 1.5, "name": "imu"})")).ok());
  CHECK(check_payload(json, bytes_of("42")).ok());
  Status bad = check_payload(json, bytes_of(R"({"x": )"));
  CHECK(bad.code() == ErrorCode::InvalidArgument);
  CHECK_THAT(bad.message(), Catch::StartsWith("not JSON: "));
  CHECK_FALSE(check_payload(json, bytes_of("{} {}")).ok());
  CHECK_FALSE(check_payload(json, bytes_of("\"\xff\"")).ok());
  CHECK(check_payload(TopicType{}, bytes_of("{not json")).ok());
  CHECK(check_payload(TopicType{"cbor", {}}, bytes_of("\xff")).ok());
}

TEST_CASE("A declared type is seen by every participant and by topic info", "[topic_type]") {
  const std::string topic = unique_topic("typed_topic");
  SECTION("declared by the publisher that creates the topic") {
    auto pub = Publisher::create(topic, declaring(json_imu()));
    REQUIRE(pub.ok());
    auto sub = Subscriber::create(topic);
    REQUIRE(sub.ok());
    CHECK(*pub->type() == json_imu());
    CHECK(*sub->type() == json_imu());
    auto info = inspect_topic(topic);
    REQUIRE(info.ok());
    CHECK(info->type == json_imu());
    CHECK(info->type_declared);
  }
  SECTION("declared after a subscriber created the topic") {
    auto sub = Subscriber::create(topic);
    REQUIRE(sub.ok());
    CHECK(sub->type()->raw());
    auto pub = Publisher::create(topic, declaring(json_imu()));
    REQUIRE(pub.ok());
    CHECK(*sub->type() == json_imu());
  }
  SECTION("a publisher that declares nothing takes the topic's type") {
    auto first = Publisher::create(topic, declaring(json_imu()));
    REQUIRE(first.ok());
    auto second = Publisher::create(topic);
    REQUIRE(second.ok());
    CHECK(*second->type() == json_imu());
  }
  SECTION("a schema of a megabyte travels whole") {
    std::string big = "{\"description\": \"" + std::string(1 << 20, 'a') + "\"}";
    const TopicType type{"json", {"Big", "jsonschema", big}};
    auto pub = Publisher::create(topic, declaring(type));
    REQUIRE(pub.ok());
    auto info = inspect_topic(topic);
    REQUIRE(info.ok());
    CHECK(info->type.schema.data == big);
  }
}

TEST_CASE("A topic nobody declared carries raw bytes", "[topic_type]") {
  const std::string topic = unique_topic("raw_topic");
  auto pub = Publisher::create(topic);
  REQUIRE(pub.ok());
  CHECK(pub->type()->raw());
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->type.raw());
  CHECK_FALSE(info->type_declared);
  CHECK(describe(info->type) == "raw bytes");
}

TEST_CASE("Declaring another type than the topic's is refused and nothing joins", "[topic_type]") {
  const std::string topic = unique_topic("typed_clash");
  auto pub = Publisher::create(topic, declaring(json_imu()));
  REQUIRE(pub.ok());
  SECTION("another encoding") {
    auto other = Publisher::create(topic, declaring(TopicType{"cbor", {}}));
    REQUIRE(other.code() == ErrorCode::Incompatible);
    CHECK(other.status().message() ==
          "topic '" + topic + "' carries json, schema Imu (jsonschema, " + std::to_string(kImuSchema.size()) +
              " B), not cbor");
  }
  SECTION("the same encoding with another schema") {
    TopicType changed = json_imu();
    changed.schema.data = R"({"type":"object"})";
    CHECK(Publisher::create(topic, declaring(changed)).code() == ErrorCode::Incompatible);
    // The same encoding without a schema: the schema is what is named, not "json, not json".
    auto bare = Publisher::create(topic, declaring(TopicType{"json", {}}));
    REQUIRE(bare.code() == ErrorCode::Incompatible);
    CHECK(bare.message() == "topic '" + topic + "' carries json with schema Imu (jsonschema, " +
                                std::to_string(kImuSchema.size()) + " B), not with no schema");
  }
  SECTION("raw bytes declared explicitly") {
    CHECK(Publisher::create(topic, declaring(TopicType{})).code() == ErrorCode::Incompatible);
  }
  SECTION("a subscriber that declares another") {
    SubscriberOptions o;
    o.topic.type = TopicType{"json", {}};
    CHECK(Subscriber::create(topic, o).code() == ErrorCode::Incompatible);
  }
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->count(Role::Publisher) == 1);
  CHECK(info->count(Role::Subscriber) == 0);
}

TEST_CASE("A type the registry refuses is refused before any topic is created", "[topic_type]") {
  const std::string topic = unique_topic("typed_refused");
  auto pub = Publisher::create(topic, declaring(TopicType{"protobuf", {}}));
  CHECK(pub.code() == ErrorCode::InvalidArgument);
  CHECK(inspect_topic(topic).code() == ErrorCode::NotFound);
}

TEST_CASE("A damaged type is reported as damage, never read past its bounds", "[topic_type]") {
  const std::string topic = unique_topic("typed_damaged");
  auto pub = Publisher::create(topic, declaring(json_imu()));
  REQUIRE(pub.ok());
  const std::size_t crc = detail::kControlOffset + offsetof(detail::Control, type_crc);
  const std::size_t size = detail::kControlOffset + offsetof(detail::Control, type_bytes);
  SECTION("checksum") { scribble(topic, crc, std::string("\x01\x02\x03\x04", 4)); }
  SECTION("size") { scribble(topic, size, std::string("\xff\xff\xff\x7f", 4)); }
  CHECK(pub->type().code() == ErrorCode::Corrupted);
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK_THAT(info->damage, Catch::Contains("its declared type"));
}

TEST_CASE("Each message encoding names the schema encodings MCAP pairs with it", "[topic_type]") {
  using Names = std::vector<std::string_view>;
  CHECK(schema_encodings_for("json") == Names{"jsonschema"});
  CHECK(schema_encodings_for("cdr") == Names{"ros2msg", "ros2idl", "omgidl"});
  CHECK(schema_encodings_for("protobuf") == Names{"protobuf"});
  CHECK(schema_encodings_for("cbor").empty());
  CHECK(schema_encodings_for("x-mine").empty());
  CHECK(schema_encodings_for("jason").empty());
}
