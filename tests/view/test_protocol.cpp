// SPDX-License-Identifier: Apache-2.0
// The protocol's messages and the parsing of client requests, in memory.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cerulion/view/protocol.hpp"
#include "topic_types.hpp"

using namespace cerulion;
using namespace cerulion::view;
using nlohmann::json;

TEST_CASE("A json topic is advertised as json with its JSON Schema", "[view][protocol]") {
  const auto j = json::parse(advertise_json({channel_for(3, "/imu", test::imu_json_type())}));
  REQUIRE(j["op"] == "advertise");
  REQUIRE(j["channels"].size() == 1);
  const auto& c = j["channels"][0];
  CHECK(c["id"] == 3);
  CHECK(c["topic"] == "/imu");
  CHECK(c["encoding"] == "json");
  CHECK(c["schemaName"] == "Imu");
  CHECK(c["schemaEncoding"] == "jsonschema");
  CHECK(c["schema"] == test::kImuJsonSchema);
}

TEST_CASE("A protobuf schema is advertised as base64 of its FileDescriptorSet", "[view][protocol]") {
  const std::string descriptor("\x0a\x03\x00\xff\x10", 5);
  const auto c = channel_for(1, "/p", TopicType{"protobuf", {"robot.Imu", "protobuf", descriptor}});
  CHECK(c.encoding == "protobuf");
  CHECK(c.schema_encoding == "protobuf");
  CHECK(c.schema_name == "robot.Imu");
  CHECK(c.schema == "CgMA/xA=");
}

TEST_CASE("A cdr topic is advertised with its ros2msg text as it is", "[view][protocol]") {
  const auto c = channel_for(1, "/pose", TopicType{"cdr", {"geometry_msgs/msg/Point", "ros2msg", "float64 x\nfloat64 y\n"}});
  CHECK(c.encoding == "cdr");
  CHECK(c.schema_encoding == "ros2msg");
  CHECK(c.schema == "float64 x\nfloat64 y\n");
}

TEST_CASE("A raw topic is advertised as x-cerulion-bytes without a schema", "[view][protocol]") {
  const auto j = json::parse(advertise_json({channel_for(9, "/raw", TopicType{})}));
  const auto& c = j["channels"][0];
  CHECK(c["encoding"] == "x-cerulion-bytes");
  CHECK(c["schemaName"] == "");
  CHECK(c["schema"] == "");
  CHECK_FALSE(c.contains("schemaEncoding"));
}

TEST_CASE("serverInfo, unadvertise and status are the protocol's JSON", "[view][protocol]") {
  const auto info = json::parse(server_info_json("cerulion view", "abc"));
  CHECK(info["op"] == "serverInfo");
  CHECK(info["name"] == "cerulion view");
  CHECK(info["capabilities"] == json::array());
  CHECK(info["sessionId"] == "abc");
  CHECK(json::parse(unadvertise_json({4, 5})) == json{{"op", "unadvertise"}, {"channelIds", {4, 5}}});
  const auto status = json::parse(status_json(StatusLevel::Warning, "late"));
  CHECK(status == json{{"op", "status"}, {"level", 1}, {"message", "late"}});
}

TEST_CASE("Invalid UTF-8 in a topic's schema is replaced, not thrown", "[view][protocol]") {
  const auto text = advertise_json({channel_for(1, "/a", TopicType{"x-custom", {"S", "x-text", "bad \xff byte"}})});
  CHECK(json::parse(text)["channels"][0]["schema"].get<std::string>().find("bad") == 0);
}

TEST_CASE("The message header is opcode 1, the subscription id and the time, little-endian", "[view][protocol]") {
  const auto h = message_header(0x04030201u, 0x0c0b0a0908070605ull);
  CHECK(static_cast<int>(h[0]) == 1);
  for (std::size_t i = 1; i < h.size(); ++i) CHECK(static_cast<int>(h[i]) == static_cast<int>(i));
}

TEST_CASE("Subscribe and unsubscribe requests are parsed", "[view][protocol]") {
  auto r = parse_client_request(R"({"op":"subscribe","subscriptions":[{"id":0,"channelId":7},{"id":4294967295,"channelId":1}]})");
  auto* s = std::get_if<SubscribeRequest>(&r);
  REQUIRE(s);
  REQUIRE(s->subscriptions.size() == 2);
  CHECK(s->subscriptions[0].channel_id == 7);
  CHECK(s->subscriptions[1].id == 4294967295u);
  r = parse_client_request(R"({"op":"unsubscribe","subscriptionIds":[3,1]})");
  auto* u = std::get_if<UnsubscribeRequest>(&r);
  REQUIRE(u);
  CHECK(u->subscription_ids == std::vector<std::uint32_t>{3, 1});
}

TEST_CASE("Malformed requests are bad requests, never an exception", "[view][protocol]") {
  for (const char* text : {"", "{", "not json", "[1,2]", "42", "{}", R"({"op":3})", R"({"op":"subscribe"})",
                           R"({"op":"subscribe","subscriptions":{}})", R"({"op":"subscribe","subscriptions":[1]})",
                           R"({"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]})",
                           R"({"op":"subscribe","subscriptions":[{"id":4294967296,"channelId":1}]})",
                           R"({"op":"subscribe","subscriptions":[{"id":1.5,"channelId":1}]})",
                           R"({"op":"subscribe","subscriptions":[{"id":"1","channelId":1}]})",
                           R"({"op":"unsubscribe","subscriptionIds":[null]})", "\xff\xfe"}) {
    INFO(text);
    CHECK(std::holds_alternative<BadRequest>(parse_client_request(text)));
  }
}

TEST_CASE("An op the server does not implement is named", "[view][protocol]") {
  auto r = parse_client_request(R"({"op":"getParameters","parameterNames":[]})");
  auto* u = std::get_if<UnsupportedRequest>(&r);
  REQUIRE(u);
  CHECK(u->op == "getParameters");
}
