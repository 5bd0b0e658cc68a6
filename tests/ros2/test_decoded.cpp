// SPDX-License-Identifier: Apache-2.0
// Decoded messages as text (like `ros2 topic echo`) and as plain JSON.

#include <catch2/catch.hpp>

#include "cerulion/ros2/decoded.hpp"
#include "cerulion/ros2/message_input.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion;
using namespace cerulion::ros2;

TEST_CASE("A decoded message prints as indented key lines with bytes and long arrays shortened", "[ros2][text]") {
  nlohmann::ordered_json value = {
      {"header", {{"stamp", {{"sec", 3}, {"nanosec", 4}}}, {"frame_id", "map"}}},
      {"data", nlohmann::ordered_json::binary({1, 2, 255})},
      {"ranges", nlohmann::ordered_json::array({1.5, 2.0, 3.0})},
      {"fields", nlohmann::ordered_json::array({{{"name", "x"}, {"offset", 0}}, {{"name", "y"}, {"offset", 4}}})},
      {"label", "12:30"},
      {"empty", nlohmann::ordered_json::object()},
  };
  TextOptions two;
  two.array_limit = 2;
  CHECK(message_text(value, two) ==
        "header:\n"
        "  stamp:\n"
        "    sec: 3\n"
        "    nanosec: 4\n"
        "  frame_id: map\n"
        "data: <3 bytes: 01 02 ff>\n"
        "ranges: [1.5, 2.0, '... 1 more']\n"
        "fields:\n"
        "- name: x\n"
        "  offset: 0\n"
        "- name: y\n"
        "  offset: 4\n"
        "label: \"12:30\"\n"
        "empty: {}\n");
  CHECK(message_text(value, {0, 0}).find("ranges: [1.5, 2.0, 3.0]") != std::string::npos);
}

TEST_CASE("Plain JSON carries bytes as base64", "[ros2][text]") {
  nlohmann::ordered_json value = {{"data", nlohmann::ordered_json::binary({'h', 'i'})}, {"n", 1}};
  CHECK(plain_json(value).dump() == R"({"data":"aGk=","n":1})");
}

TEST_CASE("A schema that came without its definition is decoded with the msg path's", "[ros2][text]") {
  const TopicType unknown{"cdr", {"geometry_msgs/msg/Point", "ros2msg", ""}};
  auto codec = codec_for(unknown, MsgPath{{test::ros2_msg_path()}});
  REQUIRE(codec.ok());
  auto bytes = codec->encode({{"x", 1.0}});
  REQUIRE(bytes.ok());
  CHECK(bytes->size() == 4 + 24);
  auto not_ros = codec_for(TopicType{"json", {}}, MsgPath{});
  REQUIRE_FALSE(not_ros.ok());
}

TEST_CASE("Messages are read from JSON or YAML flow as ros2 topic pub takes them", "[ros2][input]") {
  auto check = [](const char* text, const nlohmann::json& expected) {
    auto value = parse_message_input(text);
    INFO(text << ": " << value.message());
    REQUIRE(value.ok());
    CHECK(*value == expected);
  };
  check(R"({"data": "hi"})", {{"data", "hi"}});
  check("{data: hi}", {{"data", "hi"}});
  check("data: hi there", {{"data", "hi there"}});
  check("{pose: {position: {x: 1.5, y: -2}}, ids: [1, 2], ok: true, name: 'a, b', n: ~}",
        {{"pose", {{"position", {{"x", 1.5}, {"y", -2}}}}}, {"ids", {1, 2}}, {"ok", true}, {"name", "a, b"}, {"n", nullptr}});
  check("{label: \"12:30\", t: 12:30}", {{"label", "12:30"}, {"t", "12:30"}});
  auto bad = parse_message_input("{data: [1, 2}");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("column 13") != std::string::npos);
}
