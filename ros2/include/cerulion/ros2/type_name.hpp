// SPDX-License-Identifier: Apache-2.0
#pragma once
// ROS 2 type names and the names the middleware gives them on the DDS wire:
//
//   sensor_msgs/msg/Image  <->  sensor_msgs::msg::dds_::Image_

#include <optional>
#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"

namespace cerulion::ros2 {

/// A message type: package, interface kind ("msg") and name.
struct TypeName {
  std::string package;
  std::string kind = "msg";
  std::string name;
  /// "pkg/msg/T"
  std::string full() const { return package + "/" + kind + "/" + name; }
  friend bool operator==(const TypeName&, const TypeName&) = default;
};

/// "pkg/msg/T" (package and name: a letter, then letters, digits and underscores). InvalidArgument
/// saying what a name of another form lacks ("image" is not pkg/msg/T).
Result<TypeName> parse_type_name(std::string_view text);
/// A reference inside a .msg of package `package`: "T", "pkg/T" or "pkg/msg/T".
Result<TypeName> parse_reference(std::string_view text, std::string_view package);

/// "pkg::msg::dds_::T_", what rmw_fastrtps and rmw_cyclonedds call the type.
std::string dds_type_name(const TypeName& type);
/// The type of a DDS type name of that form; nullopt for any other name.
std::optional<TypeName> from_dds_type_name(std::string_view dds_name);

}  // namespace cerulion::ros2
