// SPDX-License-Identifier: Apache-2.0
#pragma once
// CDR as ROS 2 puts messages on the wire, read and written with a type read from its .msg text
// (msg_definition.hpp), no generated code. A message is a 4-byte encapsulation header, then the
// fields in order, each primitive aligned to its size counted from the byte after the header:
//
//   00 01 00 00  XCDR1 little-endian (what rmw_fastrtps and rmw_cyclonedds send)
//   00 00 00 00  XCDR1 big-endian
//   00 07 00 00  XCDR2 little-endian, 00 06 big-endian: final types, 8-byte values aligned to 4,
//                and a sequence or array of strings or messages preceded by its size in bytes
//
// Decoded, a message is a JSON object in field order: numbers, bools, strings, arrays, nested
// objects; `uint8[]` and `byte[]` (of any length kind) are JSON binary values, so that a
// 1 MiB image stays one copy of its bytes. Malformed input is an InvalidArgument naming the field
// (`pose.position.y`, `points[3]`) and what is wrong; never a crash, whatever the bytes.
//
//   auto codec = cerulion::ros2::CdrCodec::create(*parse_schema("std_msgs/msg/String", "string data"));
//   auto value = codec->decode(bytes);   // {"data": "hi"}
//   auto bytes = codec->encode({{"data", "hi"}});

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/status.hpp"
#include "cerulion/ros2/msg_definition.hpp"

namespace cerulion::ros2 {

enum class Encapsulation : std::uint8_t { Xcdr1Le, Xcdr1Be, Xcdr2Le, Xcdr2Be };

/// The encapsulation of a message's header. InvalidArgument for a message under 4 bytes or a
/// header of another kind (parameter lists, mutable types), naming its bytes.
Result<Encapsulation> read_encapsulation(std::span<const std::byte> message);
/// Ok for a message with the header ROS 2 nodes send and read (00 01: XCDR1 little-endian);
/// InvalidArgument saying what it has instead.
Status check_ros2_wire(std::span<const std::byte> message);

class CdrCodec {
 public:
  /// InvalidArgument for a type no CDR reader here takes: a wstring field (named), or a type that
  /// contains itself.
  static Result<CdrCodec> create(const MessageSet& set);

  /// The message as JSON (see above).
  Result<nlohmann::ordered_json> decode(std::span<const std::byte> message) const;
  /// The message of `value` (an object: a field left out takes its .msg default, or zero / empty;
  /// a field of no such name, or a value of the wrong kind, is an InvalidArgument naming it).
  /// Numbers, and for uint8[] / byte[] also a binary value or a base64 string.
  Result<std::vector<std::byte>> encode(const nlohmann::json& value,
                                        Encapsulation encapsulation = Encapsulation::Xcdr1Le) const;
  /// The root type's name, "pkg/msg/T".
  const std::string& type_name() const noexcept;

  struct Compiled;

 private:
  explicit CdrCodec(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace cerulion::ros2
