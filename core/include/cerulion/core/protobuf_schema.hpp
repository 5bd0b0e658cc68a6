// SPDX-License-Identifier: Apache-2.0
#pragma once
// The message types a protobuf schema defines. MCAP's protobuf schema is a serialized
// google.protobuf.FileDescriptorSet (what `protoc --include_imports --descriptor_set_out=imu.desc
// imu.proto` writes), and the schema's name must be the fully qualified name of the topic's
// message type ("fb.Imu"): Foxglove looks that name up in the set, and fails on any other. Read
// without libprotobuf: only the files' names, packages and imports and the message types' names
// are looked into.
//
//   auto types = cerulion::read_protobuf_message_types(descriptor_set);
//   if (!types) ...;                                   // not a FileDescriptorSet
//   auto name = cerulion::sole_message_type(*types);   // "fb.Imu" when it defines one

#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion {

/// The message types of a FileDescriptorSet, fully qualified ("fb.Imu"; "Imu" in a file without a
/// package), in the set's order.
struct ProtobufMessageTypes {
  /// Every message type, nested ones too ("fb.Imu.Covariance").
  std::vector<std::string> all;
  /// The top-level message types of every file.
  std::vector<std::string> top_level;
  /// The top-level message types of the files that no other file of the set imports: of a set
  /// made with --include_imports, those of the .proto it was made for, not of its imports.
  std::vector<std::string> primary;
};

/// The message types `descriptor_set` defines. InvalidArgument, saying at which byte, when the
/// bytes are not a FileDescriptorSet: truncated, a length past the end, a wire type a descriptor
/// does not use, a message type without a name, types nested more than 100 deep, or more than
/// kMaxSchemaBytes of names.
[[nodiscard]] Result<ProtobufMessageTypes> read_protobuf_message_types(std::string_view descriptor_set);

/// The name a protobuf schema of these types takes when none is given: the set's one top-level
/// message type, or failing that its primary files' one. InvalidArgument otherwise, saying how many
/// there are and listing them ("defines 2 message types, not one: fb.Imu, fb.Gps").
[[nodiscard]] Result<std::string> sole_message_type(const ProtobufMessageTypes& types);

/// Ok when `name` is one of the message types (nested ones count); InvalidArgument listing them
/// otherwise.
[[nodiscard]] Status check_message_type(const ProtobufMessageTypes& types, std::string_view name);

}  // namespace cerulion
