// SPDX-License-Identifier: Apache-2.0
#pragma once
// A ROS 2 type's hash as rosidl computes it (REP 2011, "RIHS01"): SHA-256 of the type description
// (the type's fields and those of every type it uses, sorted by name) written as compact JSON
// with ", " and ": " separators, without default values. ROS 2 nodes put it in their writers'
// USER_DATA ("typehash=RIHS01_<hex>;") and rosbag2 in a channel's `topic_type_hash`.
//
//   type_hash(*parse_schema("std_msgs/msg/String", "string data"))
//     == "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"

#include <string>

#include "cerulion/ros2/msg_definition.hpp"

namespace cerulion::ros2 {

/// The JSON that is hashed (rosidl's hashable type description).
std::string type_description_json(const MessageSet& set);
/// "RIHS01_" and the SHA-256 of type_description_json() in lowercase hex.
std::string type_hash(const MessageSet& set);
/// The USER_DATA of a ROS 2 node's writer of that type: "typehash=RIHS01_...;".
std::string typehash_user_data(const MessageSet& set);

}  // namespace cerulion::ros2
