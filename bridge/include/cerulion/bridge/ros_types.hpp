// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a bridged topic is on the DDS wire, in ROS 2's words: its DDS name ("rt" + the topic) and
// one of two std_msgs types, serialized as little-endian CDR exactly as ROS 2 (rmw_fastrtps) does.
//
//   std_msgs/msg/String         DDS type std_msgs::msg::dds_::String_          text and JSON topics
//   std_msgs/msg/UInt8MultiArray  std_msgs::msg::dds_::UInt8MultiArray_        everything else (bytes)
//
// Both are in every ROS 2 install, so `ros2 topic echo /robot/camera` shows a bridged topic
// without custom packages. A ROS 2 message (message encoding cdr, a ros2msg or ros2idl schema named
// pkg/msg/T) travels as its own type instead, its CDR as it is (topic_wire.hpp in the engine).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::bridge {

/// The two wire types a bridge speaks.
enum class WireType : std::uint8_t {
  String,      ///< std_msgs/msg/String: struct { string data; }
  ByteArray,   ///< std_msgs/msg/UInt8MultiArray: { MultiArrayLayout layout; sequence<uint8> data; }
  Cdr,         ///< a ROS 2 type's own CDR, carried whole: the payload is the message, header included
};

/// "std_msgs::msg::dds_::String_", "std_msgs::msg::dds_::UInt8MultiArray_"; "" for Cdr (the name is
/// the message type's).
std::string_view dds_type_name(WireType type) noexcept;
/// The wire type of one of the two names; nullopt for any other type.
std::optional<WireType> wire_type_of(std::string_view dds_type_name) noexcept;
/// The wire type a local topic of `type` travels as: String for JSON, ByteArray otherwise.
WireType wire_type_for(const TopicType& type) noexcept;

/// "/robot/camera" -> "rt/robot/camera" (ROS 2's prefix for topics).
std::string dds_topic_name(std::string_view topic);
/// "rt/robot/camera" -> "/robot/camera"; nullopt for a name without the "rt/" prefix (services
/// "rq/", "rr/" and plain DDS topics are not ROS 2 topics).
std::optional<std::string> local_topic_name(std::string_view dds_topic);

/// Bytes of the CDR encoding of `payload` as `type`: the 4-byte encapsulation header included.
std::size_t cdr_size(WireType type, std::size_t payload) noexcept;
/// Writes the CDR encoding (header 00 01 00 00, then the fields with CDR alignment) into `out`,
/// which holds cdr_size() bytes. A String's payload is its characters (a NUL is appended); a Cdr
/// payload is copied as it is.
void write_cdr(WireType type, std::span<const std::byte> payload, std::byte* out) noexcept;
/// The payload inside a CDR message of `type`: the string's characters (without its NUL) or the
/// array's data. Both byte orders are read; dimensions of a layout are skipped. nullopt when the
/// message is malformed (truncated, lengths past its end, an unknown encapsulation). Cdr: the
/// whole message, when it starts with a plain CDR header (XCDR1 or XCDR2, either byte order).
std::optional<std::span<const std::byte>> read_cdr(WireType type, std::span<const std::byte> message) noexcept;

}  // namespace cerulion::bridge
