// SPDX-License-Identifier: Apache-2.0
#include "message_fields.hpp"

#include "cerulion/ros2/decoded.hpp"

namespace cerulion::verify::detail {

MessageFields::MessageFields(const TopicType& type) : json_(type.message_encoding == "json") {
  if (!ros2::decodable(type)) return;
  if (auto codec = ros2::codec_for(type, ros2::MsgPath::from_environment())) codec_.emplace(std::move(*codec));
}

std::optional<nlohmann::json> MessageFields::operator()(const std::vector<std::byte>& data) const {
  if (codec_) {
    auto value = codec_->decode(data);
    if (!value) return std::nullopt;
    return nlohmann::json(ros2::plain_json(*value));
  }
  const auto* begin = reinterpret_cast<const char*>(data.data());
  nlohmann::json parsed = nlohmann::json::parse(begin, begin + data.size(), nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

std::string MessageFields::kind() const { return codec_ ? codec_->type_name() : "json"; }

}  // namespace cerulion::verify::detail
