// SPDX-License-Identifier: Apache-2.0
// The type of an imported topic of a ROS 2 type. A far cerulion bridge announces its topic's type
// with its writer; a ROS 2 node says only the type's name (and hash), so its definition comes
// from the msg path, as rosbag2 finds it; without one the topic is carried all the same, its
// schema the type's name with no definition (what it holds cannot be decoded, only recorded).

#include "importer.hpp"

#include "cerulion/ros2/msg_path.hpp"

namespace cerulion::bridge::detail {

TopicType Importer::ros2_type(const Topic& t, const TypeAnnouncement& announced) {
  if (announced.type.message_encoding == "cdr" && !announced.type.schema.empty() &&
      announced.type.schema.name == t.wire.ros_type && check_topic_type(announced.type).ok()) {
    return announced.type;
  }
  auto schema = ros2::load_schema(msg_path_, t.wire.ros_type);
  if (schema) return TopicType{"cdr", std::move(*schema)};
  std::string why = schema.message();
  if (!announced.omitted.empty()) {
    why = "the exporting bridge left out its schema (" + std::to_string(announced.omitted_bytes) +
          " B, larger than a DDS writer's discovery carries), and " + why;
  }
  recording::report(&events_, recording::EventKind::Warning, t.name,
                    t.name + ": the definition of " + t.wire.ros_type + " is unknown (" + why +
                        "): imported as cdr without it (give --msg-path DIR to decode it)");
  return TopicType{"cdr", Schema{t.wire.ros_type, "ros2msg", ""}};
}

}  // namespace cerulion::bridge::detail
