// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where .msg files are found without ROS sourced: directories given by the user, then
// $CERULION_MSG_PATH, then the prefixes of $AMENT_PREFIX_PATH (a sourced ROS 2 install). A type
// pkg/msg/T is DIR/share/pkg/msg/T.msg or DIR/pkg/msg/T.msg, the first found. A type's schema is
// its file's text followed by each type it uses, once, joined as rosbag2 joins them:
//
//   <text of T.msg>
//   ================================================================================
//   MSG: std_msgs/Header
//   <text of Header.msg>
//   ...

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/core/topic_type.hpp"

namespace cerulion::ros2 {

struct MsgPath {
  std::vector<std::string> directories;

  /// `given` first, then the directories of $CERULION_MSG_PATH and $AMENT_PREFIX_PATH (':'-separated).
  static MsgPath from_environment(std::vector<std::string> given = {});
  /// The file of `type_name` ("pkg/msg/T"), nullopt when no directory has it.
  std::optional<std::string> find(std::string_view type_name) const;
  /// "DIR1:DIR2..." for messages ("(empty)" when there is none).
  std::string describe() const;
};

/// The ros2msg schema of `type_name` ("pkg/msg/T") from the path, its dependencies joined as
/// rosbag2 does; builtin_interfaces Time and Duration need no file. InvalidArgument for a name
/// not of the form pkg/msg/T or a malformed file (its path, line and column); NotFound naming a
/// type (and what uses it) no directory has.
Result<Schema> load_schema(const MsgPath& path, std::string_view type_name);

}  // namespace cerulion::ros2
