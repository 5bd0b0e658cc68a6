// SPDX-License-Identifier: Apache-2.0
#pragma once
// ROS 2 message types read from their `.msg` text, without ROS: what `ros2msg` schemas (MCAP's
// registry) and `share/<pkg>/msg/<T>.msg` files say. A schema is the root type's text followed by
// one block per type it uses, as rosbag2 joins them:
//
//   std_msgs/Header header
//   float64 x
//   ================================================================================
//   MSG: std_msgs/Header
//   builtin_interfaces/Time stamp
//   string frame_id
//
// builtin_interfaces/msg/Time and Duration are known without a block (every ROS 2 install has
// them). `wstring` parses (a type hash covers it) but no CDR codec reads it (cdr.hpp).
//
//   auto set = cerulion::ros2::parse_schema("geometry_msgs/msg/Point", "float64 x\nfloat64 y\nfloat64 z\n");
//   set->root_type().fields[1].name == "y"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/status.hpp"

namespace cerulion::ros2 {

/// The primitive of a field (or of a container's elements); Nested for a message type.
enum class Kind : std::uint8_t {
  Bool, Byte, Char, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64,
  String, WString, Nested,
};
/// "bool", "byte", ..., "string", "wstring"; "" for Nested.
std::string_view to_string(Kind kind) noexcept;

/// What holds the values: one value, a fixed array `T[N]`, a bounded sequence `T[<=N]`, a sequence `T[]`.
enum class Container : std::uint8_t { None, Array, BoundedSequence, Sequence };

struct FieldType {
  Kind kind = Kind::Int32;
  std::string nested;               ///< Nested: the type's full name, "geometry_msgs/msg/Point"
  std::uint32_t string_bound = 0;   ///< `string<=N`: N; 0 unbounded
  Container container = Container::None;
  std::uint32_t size = 0;           ///< Array: its length; BoundedSequence: its bound
  /// As a .msg spells it, with the nested type's full name: "geometry_msgs/msg/Point[<=3]".
  std::string spelled() const;
  friend bool operator==(const FieldType&, const FieldType&) = default;
};

struct Field {
  std::string name;
  FieldType type;
  /// The default the .msg gives (`int32 x 5`), as JSON (numbers, bools, strings, arrays); null when none.
  nlohmann::json default_value;
};

struct Constant {
  std::string name;
  FieldType type;
  nlohmann::json value;
};

struct MessageDefinition {
  std::string name;  ///< "pkg/msg/T"
  std::vector<Field> fields;
  std::vector<Constant> constants;
};

/// A type with every type it uses, by full name.
struct MessageSet {
  std::string root;  ///< the root type's full name
  std::map<std::string, MessageDefinition, std::less<>> types;
  const MessageDefinition& root_type() const { return types.at(root); }
  const MessageDefinition* find(std::string_view name) const;
};

/// Reads a ros2msg schema of type `type_name` ("pkg/msg/T"): the root text and its dependency
/// blocks (`MSG: pkg/T` or `MSG: pkg/msg/T`). A reference `T` means a type of the block's own
/// package, `pkg/T` means `pkg/msg/T`; a bare `Header` with no block of its package is
/// std_msgs/msg/Header. InvalidArgument naming the line and column of what is malformed, or the
/// type that no block defines; a type name not of the form pkg/msg/T is refused by name.
Result<MessageSet> parse_schema(std::string_view type_name, std::string_view text);

/// One `.msg` file of package `package` on its own, its references resolved to full names but not
/// looked up (what a search path resolves, msg_path.hpp). `where`: how errors name the text.
Result<MessageDefinition> parse_message(std::string_view type_name, std::string_view text, std::string_view where);

/// The full names of the types `definition` uses directly, each once, in name order.
std::vector<std::string> dependencies(const MessageDefinition& definition);

}  // namespace cerulion::ros2
