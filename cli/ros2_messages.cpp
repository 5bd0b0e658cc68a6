// SPDX-License-Identifier: Apache-2.0
#include "ros2_messages.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cerulion/ros2/decoded.hpp"
#include "cerulion/ros2/message_input.hpp"
#include "errors.hpp"

namespace cerulion::cli {

std::optional<nlohmann::ordered_json> Ros2Decoder::decode(const TopicType& type, std::span<const std::byte> bytes,
                                                          std::string& error) {
  if (!ros2::decodable(type)) return std::nullopt;
  if (!type_ || *type_ != type) {
    type_ = type;
    codec_.reset();
    auto codec = ros2::codec_for(type, path_);
    if (codec) {
      codec_.emplace(std::move(*codec));
    } else {
      fmt::print(stderr, "cerulion: warning: cannot decode {}: {}; messages are printed as bytes\n", type.schema.name,
                 codec.message());
    }
  }
  if (!codec_) return std::nullopt;
  auto value = codec_->decode(bytes);
  if (!value) {
    error = value.message();
    return std::nullopt;
  }
  return std::move(*value);
}

Ros2Encoder::Ros2Encoder(const TopicType& type, std::vector<std::string> msg_path) {
  if (!ros2::decodable(type)) return;
  auto codec = ros2::codec_for(type, ros2::MsgPath::from_environment(std::move(msg_path)));
  if (!codec) throw Exit{kExitFailure, fmt::format("cannot encode {}: {}", type.schema.name, codec.message())};
  codec_.emplace(std::move(*codec));
}

Result<std::vector<std::byte>> Ros2Encoder::encode(std::span<const std::byte> text) const {
  // Text never starts with a NUL: a message that does, with a CDR header, is CDR already (a file
  // of an encoded message), and goes out as it is.
  if (!text.empty() && text[0] == std::byte{0} && ros2::read_encapsulation(text).ok()) {
    return std::vector<std::byte>(text.begin(), text.end());
  }
  auto value = ros2::parse_message_input({reinterpret_cast<const char*>(text.data()), text.size()});
  if (!value) return value.status();
  return codec_->encode(*value);
}

TopicType ros2_type_option(const std::string& type_name, std::vector<std::string> msg_path) {
  auto path = ros2::MsgPath::from_environment(std::move(msg_path));
  auto schema = ros2::load_schema(path, type_name);
  if (!schema) {
    throw Exit{schema.code() == ErrorCode::InvalidArgument && !path.find(type_name) ? kExitUsage : kExitFailure,
               fmt::format("--type: {}", schema.message())};
  }
  return TopicType{"cdr", std::move(*schema)};
}

void add_msg_path_option(CLI::App& cmd, std::vector<std::string>& folders) {
  cmd.add_option("--msg-path", folders,
                 "Folder of .msg files (DIR/<pkg>/msg/<T>.msg or DIR/share/<pkg>/msg/<T>.msg) for ROS 2 types whose "
                 "definition a topic lacks; repeatable, before $CERULION_MSG_PATH and $AMENT_PREFIX_PATH");
}

}  // namespace cerulion::cli
