// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fields of a topic's messages, for comparing them field by field: a json topic's messages
// parsed, a ROS 2 topic's (cdr with a ros2msg schema) decoded with its schema (byte arrays as
// base64); any other topic has none and is compared byte by byte.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/topic_type.hpp"
#include "cerulion/ros2/cdr.hpp"

namespace cerulion::verify::detail {

class MessageFields {
 public:
  /// A ROS 2 schema without text is looked up on $CERULION_MSG_PATH and $AMENT_PREFIX_PATH; one
  /// that cannot be decoded leaves the topic compared byte by byte.
  explicit MessageFields(const TopicType& type);
  /// Whether the topic's messages are compared field by field.
  bool structured() const noexcept { return json_ || codec_.has_value(); }
  /// The message's fields; nullopt when it does not parse or decode.
  std::optional<nlohmann::json> operator()(const std::vector<std::byte>& data) const;
  /// What a message that does not decode is not: "json", "sensor_msgs/msg/Image".
  std::string kind() const;

 private:
  bool json_ = false;
  std::optional<ros2::CdrCodec> codec_;
};

}  // namespace cerulion::verify::detail
