// SPDX-License-Identifier: Apache-2.0
#pragma once
// ROS 2 messages in the commands: decoded for those that print them (echo), the codec of the type
// made once and what cannot be decoded said once on stderr (the messages then print as bytes);
// encoded from JSON or YAML flow for pub.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cerulion/core/topic_type.hpp"
#include "cerulion/ros2/cdr.hpp"
#include "cerulion/ros2/msg_path.hpp"

namespace cerulion::cli {

class Ros2Decoder {
 public:
  /// `msg_path`: --msg-path folders (the environment's come after them).
  explicit Ros2Decoder(std::vector<std::string> msg_path) : path_(ros2::MsgPath::from_environment(std::move(msg_path))) {}

  /// The message decoded when `type` is a ROS 2 message; nullopt otherwise, or when it cannot be
  /// (then `error` says why; a type that cannot be decoded at all is said once on stderr).
  std::optional<nlohmann::ordered_json> decode(const TopicType& type, std::span<const std::byte> bytes, std::string& error);

 private:
  ros2::MsgPath path_;
  std::optional<TopicType> type_;
  std::optional<ros2::CdrCodec> codec_;
};

/// pub's messages to a ROS 2 topic: text (JSON or YAML flow) encoded as the topic's type.
class Ros2Encoder {
 public:
  /// Inactive unless `type` is a ROS 2 message; a type it cannot encode exits 1 naming why.
  Ros2Encoder(const TopicType& type, std::vector<std::string> msg_path);
  bool active() const noexcept { return codec_.has_value(); }
  /// The CDR of the message `text`; InvalidArgument saying what is wrong with it. A message that
  /// is CDR already (a NUL, then the rest of a CDR header) is taken as it is.
  Result<std::vector<std::byte>> encode(std::span<const std::byte> text) const;

 private:
  std::optional<ros2::CdrCodec> codec_;
};

/// The type `--type pkg/msg/T` names: cdr, with the definition found on the msg path (exit 1
/// naming what is missing, 2 for a name not of that form).
TopicType ros2_type_option(const std::string& type_name, std::vector<std::string> msg_path);

/// Adds --msg-path to a command that decodes ROS 2 messages.
void add_msg_path_option(CLI::App& cmd, std::vector<std::string>& folders);

}  // namespace cerulion::cli
