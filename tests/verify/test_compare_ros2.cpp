// SPDX-License-Identifier: Apache-2.0
// ROS 2 topics (cdr with a ros2msg schema) compared field by field, decoded with their schema: a
// difference is named by its field's path, and tolerances apply as on json topics.

#include <catch2/catch.hpp>

#include "cerulion/ros2/cdr.hpp"
#include "cerulion/ros2/msg_path.hpp"
#include "cerulion/verify/compare.hpp"
#include "ros2_msgs.hpp"

using namespace cerulion;
using namespace cerulion::verify;

namespace {

TopicMessages poses(const std::vector<double>& ys) {
  auto schema = ros2::load_schema(ros2::MsgPath{{test::ros2_msg_path()}}, "geometry_msgs/msg/PoseStamped");
  REQUIRE(schema.ok());
  auto codec = ros2::CdrCodec::create(*ros2::parse_schema(schema->name, schema->data));
  REQUIRE(codec.ok());
  TopicMessages t{"/pose", TopicType{"cdr", *schema}, {}};
  for (double y : ys) {
    auto bytes = codec->encode({{"header", {{"frame_id", "map"}}}, {"pose", {{"position", {{"x", 1.0}, {"y", y}}}}}});
    REQUIRE(bytes.ok());
    t.messages.push_back({0, *bytes, ""});
  }
  return t;
}

}  // namespace

TEST_CASE("A ROS 2 topic's difference is named by its field path, not a byte offset", "[verify][compare][ros2]") {
  const auto c = compare({poses({2.0, 3.0})}, {poses({2.0, 3.5})});
  REQUIRE(c.total_differences == 1);
  const auto& d = c.differences[0];
  CHECK(d.kind == DifferenceKind::Field);
  CHECK(d.index == 1);
  CHECK(d.field == "pose.position.y");
  CHECK(d.expected == "3.0");
  CHECK(d.got == "3.5");
}

TEST_CASE("Tolerances apply to the fields of a ROS 2 topic", "[verify][compare][ros2]") {
  CompareOptions o;
  o.tolerances.push_back(*parse_tolerance("pose.position.*=0.6"));
  CHECK(compare({poses({2.0, 3.0})}, {poses({2.0, 3.5})}, o).same());
}

TEST_CASE("A ROS 2 message that does not decode is named as not of its type", "[verify][compare][ros2]") {
  auto bad = poses({2.0});
  bad.messages[0].data.resize(10);
  const auto c = compare({poses({2.0})}, {bad});
  REQUIRE(c.total_differences == 1);
  CHECK(c.differences[0].kind == DifferenceKind::Undecodable);
  CHECK(c.differences[0].got.starts_with("not geometry_msgs/msg/PoseStamped: "));
}
