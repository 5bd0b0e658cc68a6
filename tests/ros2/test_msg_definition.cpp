// SPDX-License-Identifier: Apache-2.0
// .msg text read into types: every form rosidl takes, test_msgs as Debian ships them, and one
// line naming the line and column of what is malformed.

#include <catch2/catch.hpp>

#include "cerulion/ros2/msg_definition.hpp"
#include "cerulion/ros2/type_name.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion;
using namespace cerulion::ros2;

TEST_CASE("Type names map to the DDS names ROS 2 middlewares use and back", "[ros2][msg]") {
  auto name = parse_type_name("sensor_msgs/msg/Image");
  REQUIRE(name.ok());
  CHECK(dds_type_name(*name) == "sensor_msgs::msg::dds_::Image_");
  auto back = from_dds_type_name("sensor_msgs::msg::dds_::Image_");
  REQUIRE(back);
  CHECK(back->full() == "sensor_msgs/msg/Image");
  CHECK_FALSE(from_dds_type_name("std_msgs::msg::Image"));
  CHECK_FALSE(from_dds_type_name("Image_"));
  CHECK_FALSE(from_dds_type_name("example_interfaces::srv::dds_::AddTwoInts_Request_"));
}

TEST_CASE("A type name not of the form pkg/msg/T is refused saying what it lacks", "[ros2][msg]") {
  for (const char* bad : {"Image", "sensor_msgs/Image", "sensor_msgs/srv/Image", "1pkg/msg/T", "pkg/msg/", ""}) {
    auto name = parse_type_name(bad);
    INFO(bad);
    REQUIRE_FALSE(name.ok());
    CHECK(name.message().find("is not of the form pkg/msg/T") != std::string::npos);
  }
  auto schema = parse_schema("Image", "uint8 x");
  REQUIRE_FALSE(schema.ok());
  CHECK(schema.message().find("'Image' is not of the form pkg/msg/T") != std::string::npos);
}

TEST_CASE("Fields, containers, bounded strings, defaults and constants are read as rosidl reads them",
          "[ros2][msg]") {
  auto set = parse_schema("pkg/msg/All",
                          "# a comment\n"
                          "int32 a  # trailing comment\n"
                          "float64[3] b [1.5, 2, -3]\n"
                          "string<=5[<=2] c\n"
                          "uint8[] d\n"
                          "string e \"with # hash\"\n"
                          "int8 MIN=-128\n"
                          "string GREETING = hello # world\n"
                          "Other o\n"
                          "builtin_interfaces/Time t\n"
                          "================================================================================\n"
                          "MSG: pkg/Other\n"
                          "bool flag true\n");
  REQUIRE(set.ok());
  const auto& all = set->root_type();
  REQUIRE(all.fields.size() == 7);
  CHECK(all.fields[0].name == "a");
  CHECK(all.fields[1].type.container == Container::Array);
  CHECK(all.fields[1].type.size == 3);
  CHECK(all.fields[1].default_value == nlohmann::json::array({1.5, 2.0, -3.0}));
  CHECK(all.fields[2].type.kind == Kind::String);
  CHECK(all.fields[2].type.string_bound == 5);
  CHECK(all.fields[2].type.container == Container::BoundedSequence);
  CHECK(all.fields[2].type.size == 2);
  CHECK(all.fields[3].type.container == Container::Sequence);
  CHECK(all.fields[4].default_value == "with # hash");
  CHECK(all.fields[5].type.nested == "pkg/msg/Other");
  CHECK(all.fields[6].type.nested == "builtin_interfaces/msg/Time");
  REQUIRE(all.constants.size() == 2);
  CHECK(all.constants[0].value == -128);
  CHECK(all.constants[1].value == "hello # world");  // a string constant is the rest of its line
  REQUIRE(set->find("pkg/msg/Other"));
  CHECK(set->find("pkg/msg/Other")->fields[0].default_value == true);
  REQUIRE(set->find("builtin_interfaces/msg/Time"));  // known without a block
}

TEST_CASE("Dependency blocks may be spelled MSG pkg/T or MSG pkg/msg/T", "[ros2][msg]") {
  for (const char* header : {"MSG: geometry_msgs/Point", "MSG: geometry_msgs/msg/Point"}) {
    const std::string text = std::string("geometry_msgs/Point p\n===\n") + header + "\nfloat64 x\n";
    auto set = parse_schema("pkg/msg/T", text);
    INFO(header);
    REQUIRE(set.ok());
    CHECK(set->find("geometry_msgs/msg/Point"));
  }
}

TEST_CASE("A malformed msg line is named by line and column", "[ros2][msg]") {
  struct Case {
    const char* text;
    const char* where;
  };
  for (const auto& c : {Case{"int32 a\nint32[x] b\n", "line 2, column 7"}, Case{"int32 a\nint32\n", "line 2, column 1"},
                        Case{"int32 a\nint32 2b\n", "line 2, column 7"}, Case{"uint8 x 300\n", "line 1, column 9"},
                        Case{"float64[2] v [1, 2, 3]\n", "line 1, column 14"},
                        Case{"int32 a\nint32 a\n", "line 2, column 7"}, Case{"str<=3 s\n", "line 1, column 4"}}) {
    auto set = parse_schema("pkg/msg/T", c.text);
    INFO(c.text);
    REQUIRE_FALSE(set.ok());
    CHECK(set.message().find(c.where) != std::string::npos);
    CHECK(set.message().find("schema pkg/msg/T") == 0);
  }
}

TEST_CASE("A type no block defines is named with the field that uses it", "[ros2][msg]") {
  auto set = parse_schema("pkg/msg/T", "geometry_msgs/Point p\n");
  REQUIRE_FALSE(set.ok());
  CHECK(set.message().find("geometry_msgs/msg/Point") != std::string::npos);
  CHECK(set.message().find("field 'p'") != std::string::npos);
}

TEST_CASE("Every test_msgs definition Debian ships parses", "[ros2][msg]") {
  if (test::test_msgs_dir().empty()) {
    WARN("skipped: ros2-test-interface-files is not installed");
    return;
  }
  for (const char* name : {"Arrays", "BasicTypes", "BoundedPlainSequences", "BoundedSequences", "Constants", "Defaults",
                           "Empty", "MultiNested", "Nested", "Strings", "UnboundedSequences", "WStrings"}) {
    auto definition = parse_message(std::string("test_msgs/msg/") + name, test::test_msg_text(name), name);
    INFO(name << ": " << definition.message());
    CHECK(definition.ok());
  }
  auto strings = parse_message("test_msgs/msg/Strings", test::test_msg_text("Strings"), "Strings.msg");
  REQUIRE(strings.ok());
  CHECK(strings->fields[3].default_value == "Hello\"world!");
  CHECK(strings->fields[4].default_value == "Hello'world!");
  CHECK(strings->fields[6].type.string_bound == 22);
  CHECK(strings->constants.at(0).value == "Hello world!");
}
