// SPDX-License-Identifier: Apache-2.0
#include "topic_wire.hpp"

#include "cerulion/ros2/msg_definition.hpp"
#include "cerulion/ros2/type_hash.hpp"
#include "cerulion/ros2/type_name.hpp"

namespace cerulion::bridge::detail {

TopicWire wire_for_topic(const TopicType& type) {
  TopicWire wire;
  const auto& schema = type.schema;
  if (type.message_encoding == "cdr" && (schema.encoding == "ros2msg" || schema.encoding == "ros2idl")) {
    if (auto name = ros2::parse_type_name(schema.name)) {
      wire.type = WireType::Cdr;
      wire.dds_type = ros2::dds_type_name(*name);
      wire.ros_type = name->full();
      if (schema.encoding == "ros2msg" && !schema.data.empty()) {
        if (auto set = ros2::parse_schema(schema.name, schema.data)) wire.type_hash = ros2::type_hash(*set);
      }
      return wire;
    }
  }
  wire.type = wire_type_for(type);
  wire.dds_type = std::string(dds_type_name(wire.type));
  return wire;
}

std::optional<TopicWire> wire_for_dds_type(std::string_view dds_type) {
  TopicWire wire;
  wire.dds_type = std::string(dds_type);
  if (auto known = wire_type_of(dds_type)) {
    wire.type = *known;
    return wire;
  }
  auto name = ros2::from_dds_type_name(dds_type);
  if (!name) return std::nullopt;
  wire.type = WireType::Cdr;
  wire.ros_type = name->full();
  return wire;
}

}  // namespace cerulion::bridge::detail
