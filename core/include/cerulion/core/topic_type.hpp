// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a topic's bytes are, in MCAP's words: a message encoding and, optionally, a schema. The
// first participant to declare it (usually the publisher that creates the topic) fixes it for the
// topic's life; a later participant that declares another is refused. A topic nobody declared
// carries raw bytes.
//
//   cerulion::PublisherOptions options;
//   options.topic.type = cerulion::TopicType{"json", {"Imu", "jsonschema", schema_text}};

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion {

/// A message schema, as an MCAP Schema record carries it. An empty name means no schema.
struct Schema {
  std::string name;      ///< e.g. "geometry_msgs/msg/Pose", "robot.Imu"
  std::string encoding;  ///< schema encoding: "jsonschema", "protobuf", "ros2msg", ...
  std::string data;      ///< the schema itself (text, or a serialized FileDescriptorSet)
  bool empty() const noexcept { return name.empty() && encoding.empty() && data.empty(); }
  friend bool operator==(const Schema&, const Schema&) = default;
};

/// A topic's message encoding and schema. The default, {} ("" and no schema), is raw bytes.
struct TopicType {
  /// MCAP message encoding: "json", "protobuf", "cdr", "flatbuffer", "cbor", "ros1", or a custom
  /// "x-..." name; "" for raw bytes.
  std::string message_encoding;
  Schema schema;
  bool raw() const noexcept { return message_encoding.empty() && schema.empty(); }
  friend bool operator==(const TopicType&, const TopicType&) = default;
};

/// Largest schema a topic carries, in bytes (address space is reserved for it; memory only for
/// what a schema uses).
inline constexpr std::size_t kMaxSchemaBytes = 16u << 20;

/// The message encodings MCAP defines, in the order they are listed to a user.
const std::vector<std::string_view>& known_message_encodings() noexcept;
/// The schema encodings MCAP defines.
const std::vector<std::string_view>& known_schema_encodings() noexcept;
/// The schema encodings MCAP's registry pairs with `message_encoding` ("json": jsonschema; "cdr":
/// ros2msg, ros2idl, omgidl...); empty for one that takes no schema (cbor), a custom x-... name
/// (any schema encoding fits it) and an unknown one.
std::vector<std::string_view> schema_encodings_for(std::string_view message_encoding);

/// Ok when `type` is something a topic may declare: a known (or "x-" custom) message encoding, a
/// schema whose encoding fits it as MCAP's registry says (protobuf needs a protobuf schema, cdr a
/// ros2msg/ros2idl/omgidl one, json a jsonschema or none...), a JSON Schema that parses, and
/// nothing over kMaxSchemaBytes. InvalidArgument, saying what does not fit, otherwise.
[[nodiscard]] Status check_topic_type(const TopicType& type);

/// Ok when `payload` is a well-formed message of `type` as far as cerulion can tell without the
/// user's code: a JSON message must be one JSON value in UTF-8. Other encodings are not inspected.
/// InvalidArgument with where and why otherwise.
[[nodiscard]] Status check_payload(const TopicType& type, std::span<const std::byte> payload);

/// One line for listings: "raw bytes", "json", "json, schema Imu (jsonschema, 312 B)".
std::string describe(const TopicType& type);
/// "schema Imu (jsonschema, 312 B)", or "no schema".
std::string describe(const Schema& schema);

}  // namespace cerulion
