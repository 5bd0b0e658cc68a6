// SPDX-License-Identifier: Apache-2.0
// Type hashes as rosidl computes them, checked against hashes ROS 2 publishes.

#include <catch2/catch.hpp>

#include "cerulion/ros2/msg_path.hpp"
#include "cerulion/ros2/type_hash.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion;
using namespace cerulion::ros2;

TEST_CASE("std_msgs String hashes to the RIHS01 hash ROS 2 gives it", "[ros2][hash]") {
  auto set = parse_schema("std_msgs/msg/String", "string data\n");
  REQUIRE(set.ok());
  CHECK(type_hash(*set) == "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18");
  CHECK(typehash_user_data(*set) == "typehash=RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18;");
}

TEST_CASE("The hashed description lists referenced types sorted by name without defaults", "[ros2][hash]") {
  auto set = parse_schema("pkg/msg/T",
                          "pkg/B b\nint32[<=4] seq [5]\nstring<=8 s\n===\nMSG: pkg/B\npkg/A a\n===\nMSG: pkg/A\nchar c\nbyte y\n");
  REQUIRE(set.ok());
  CHECK(type_description_json(*set) ==
        "{\"type_description\": {\"type_name\": \"pkg/msg/T\", \"fields\": ["
        "{\"name\": \"b\", \"type\": {\"type_id\": 1, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"pkg/msg/B\"}}, "
        "{\"name\": \"seq\", \"type\": {\"type_id\": 102, \"capacity\": 4, \"string_capacity\": 0, \"nested_type_name\": \"\"}}, "
        "{\"name\": \"s\", \"type\": {\"type_id\": 21, \"capacity\": 0, \"string_capacity\": 8, \"nested_type_name\": \"\"}}]}, "
        "\"referenced_type_descriptions\": ["
        "{\"type_name\": \"pkg/msg/A\", \"fields\": ["
        "{\"name\": \"c\", \"type\": {\"type_id\": 3, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}, "
        "{\"name\": \"y\", \"type\": {\"type_id\": 16, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, "
        "{\"type_name\": \"pkg/msg/B\", \"fields\": ["
        "{\"name\": \"a\", \"type\": {\"type_id\": 1, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"pkg/msg/A\"}}]}]}");
}

TEST_CASE("An empty message is hashed with rosidl's placeholder member", "[ros2][hash]") {
  auto set = parse_schema("test_msgs/msg/Empty", "");
  REQUIRE(set.ok());
  CHECK(type_description_json(*set).find("\"structure_needs_at_least_one_member\", \"type\": {\"type_id\": 3") !=
        std::string::npos);
}

TEST_CASE("A type hash comes out the same from a joined schema and from its msg files", "[ros2][hash]") {
  auto schema = load_schema(MsgPath{{test::ros2_msg_path()}}, "geometry_msgs/msg/PoseStamped");
  REQUIRE(schema.ok());
  auto set = parse_schema(schema->name, schema->data);
  REQUIRE(set.ok());
  CHECK(set->types.size() == 6);  // PoseStamped, Header, Time, Pose, Point, Quaternion
  CHECK(type_hash(*set).starts_with("RIHS01_"));
  CHECK(type_hash(*set).size() == 7 + 64);
}

TEST_CASE("Common types hash to the RIHS01 hashes their ROS 2 packages carry", "[ros2][hash]") {
  const MsgPath path{{test::ros2_msg_path()}};
  for (const auto& [type, hash] : {
           std::pair<const char*, const char*>{"sensor_msgs/msg/Image",
                                               "RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47"},
           {"geometry_msgs/msg/PoseStamped", "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8"},
           {"builtin_interfaces/msg/Time", "RIHS01_b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197"},
       }) {
    auto schema = load_schema(path, type);
    REQUIRE(schema.ok());
    auto set = parse_schema(schema->name, schema->data);
    REQUIRE(set.ok());
    INFO(type);
    CHECK(type_hash(*set) == hash);
  }
}

TEST_CASE("test_msgs types hash to the RIHS01 hashes rosidl gives them", "[ros2][hash]") {
  if (test::test_msgs_dir().empty()) {
    WARN("skipped: ros2-test-interface-files is not installed");
    return;
  }
  const MsgPath path{{test::ros2_msg_path()}};
  for (const auto& [type, hash] : {
           std::pair<const char*, const char*>{"BasicTypes", "RIHS01_7c300afd4e796798d49bdd6cdaa0fa87fa0ed2ba3217d977e1faa87070d797ab"},
           {"Arrays", "RIHS01_8a321b80dae8c44dfd1ce558eaf1b1cd5ebbe5950863ed675836535511a7f91a"},
           {"BoundedSequences", "RIHS01_fb361a3b3827c76a142c2190126a20a92e7e510e047f880141a7e9ef867961ed"},
           {"UnboundedSequences", "RIHS01_a63975514293a2c6b24a807675bcbd9180bda1995dd4ee10f2698d45ff77db05"},
           {"Constants", "RIHS01_983e7ae7099d65b3030c31c2890b0ec2b332484fae9f28c68e01340c8f61edcf"},
           {"Defaults", "RIHS01_a725ee02bf25a224cb7d14015a0245b6654ff591ae1ac277e2a2673f013ea6d2"},
           {"MultiNested", "RIHS01_9ee9cbfb17c2df991a750b761a56def78674034977c829449820ca07efd9758b"},
       }) {
    auto schema = load_schema(path, std::string("test_msgs/msg/") + type);
    REQUIRE(schema.ok());
    auto set = parse_schema(schema->name, schema->data);
    INFO(type << ": " << set.message());
    REQUIRE(set.ok());
    CHECK(type_hash(*set) == hash);
  }
}
