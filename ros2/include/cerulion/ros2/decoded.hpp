// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decoded ROS 2 messages for people and tools: the codec of a topic's schema (its own text, or
// the msg path's when the schema came without one), plain JSON (bytes as base64), and text as
// `ros2 topic echo` prints it.
//
//   header:
//     stamp:
//       sec: 3
//     frame_id: map
//   data: <6 bytes: 01 02 03 04 05 06>
//   ranges: [1.0, 2.0, 3.0, '... 997 more']

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "cerulion/core/status.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/ros2/cdr.hpp"
#include "cerulion/ros2/msg_path.hpp"

namespace cerulion::ros2 {

/// Whether `type` is a ROS 2 message cerulion can decode: message encoding cdr, a ros2msg schema.
bool decodable(const TopicType& type) noexcept;

/// The codec of a cdr topic's ros2msg schema; a schema without text (an imported topic whose
/// definition was not known) is looked up on `path` by its name. InvalidArgument / NotFound saying
/// why not (another encoding, a malformed or unknown definition).
Result<CdrCodec> codec_for(const TopicType& type, const MsgPath& path);

/// The value with every bytes field as a base64 string: what JSON output carries.
nlohmann::ordered_json plain_json(const nlohmann::ordered_json& value);

struct TextOptions {
  /// Elements of an array shown before it is shortened ("'... N more'"); 0: all.
  std::size_t array_limit = 16;
  /// Bytes of a uint8[] shown in its hex preview; 0: all.
  std::size_t bytes_limit = 16;
};
/// The value as indented `key: value` lines, each ending in a newline.
std::string message_text(const nlohmann::ordered_json& value, const TextOptions& options = {});

}  // namespace cerulion::ros2
