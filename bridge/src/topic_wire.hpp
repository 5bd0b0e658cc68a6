// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a bridged topic is on the DDS wire, whatever its type:
//
//   a ROS 2 message (cdr, ros2msg/ros2idl schema "pkg/msg/T")  pkg::msg::dds_::T_, its CDR as it is
//   json                                                       std_msgs::msg::dds_::String_
//   anything else                                              std_msgs::msg::dds_::UInt8MultiArray_
//
// and, the other way, what a DDS type name that another participant writes is imported as.

#include <optional>
#include <string>
#include <string_view>

#include "cerulion/bridge/ros_types.hpp"
#include "cerulion/core/topic_type.hpp"

namespace cerulion::bridge::detail {

struct TopicWire {
  WireType type = WireType::ByteArray;
  std::string dds_type;   ///< "sensor_msgs::msg::dds_::Image_"
  std::string ros_type;   ///< "sensor_msgs/msg/Image" (Cdr only)
  /// "RIHS01_<hex>" of a Cdr topic whose ros2msg schema parses; "" otherwise (ros2idl, or a
  /// schema that does not parse: the topic still goes out, without a hash).
  std::string type_hash;
};

/// How a local topic of `type` travels.
TopicWire wire_for_topic(const TopicType& type);
/// How writers of DDS type `dds_type` are imported: the two std_msgs types as they always were,
/// any other `pkg::msg::dds_::T_` as Cdr; nullopt for a name of another form (not a ROS 2 type).
std::optional<TopicWire> wire_for_dds_type(std::string_view dds_type);

}  // namespace cerulion::bridge::detail
