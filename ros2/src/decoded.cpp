// SPDX-License-Identifier: Apache-2.0
#include "cerulion/ros2/decoded.hpp"

#include <cmath>
#include <cstdio>

#include "cerulion/core/base64.hpp"

namespace cerulion::ros2 {
namespace {

/// A scalar as YAML prints it: strings quoted only when they would read as something else.
std::string scalar_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    const bool plain = !s.empty() && s.find_first_of(":#'\"\n{}[],&*!|>%@`") == std::string::npos &&
                       s.front() != ' ' && s.back() != ' ' && s != "true" && s != "false" && s != "null" &&
                       !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '-' || s.front() == '.');
    if (plain) return s;
    return nlohmann::ordered_json(s).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
    std::string out = v.dump();
    return out;
  }
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string bytes_text(const std::vector<std::uint8_t>& bytes, std::size_t limit) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "<" + std::to_string(bytes.size()) + " byte" + (bytes.size() == 1 ? "" : "s") + (bytes.empty() ? "" : ":");
  const std::size_t shown = limit == 0 ? bytes.size() : std::min(limit, bytes.size());
  for (std::size_t i = 0; i < shown; ++i) {
    out += ' ';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  if (shown < bytes.size()) out += " ...";
  return out + ">";
}

bool flat(const nlohmann::ordered_json& array) {
  for (const auto& item : array) {
    if (item.is_object() || item.is_array()) return false;
  }
  return true;
}

/// A value that fits on its key's line: a scalar, bytes, an empty message, an array of scalars.
std::string inline_text(const nlohmann::ordered_json& v, const TextOptions& o) {
  if (v.is_binary()) return bytes_text(v.get_binary(), o.bytes_limit);
  if (v.is_object()) return "{}";
  if (!v.is_array()) return scalar_text(v);
  const std::size_t shown = o.array_limit == 0 ? v.size() : std::min(o.array_limit, v.size());
  std::string out = "[";
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + scalar_text(v[i]);
  if (shown < v.size()) out += std::string(shown ? ", " : "") + "'... " + std::to_string(v.size() - shown) + " more'";
  return out + "]";
}

void put_object(std::string& out, const nlohmann::ordered_json& object, std::size_t indent, const TextOptions& o);

/// A list of messages: one "- " item each, at its key's indent, as `ros2 topic echo` writes it.
void put_list(std::string& out, const nlohmann::ordered_json& a, std::size_t indent, const TextOptions& o) {
  const std::size_t shown = o.array_limit == 0 ? a.size() : std::min(o.array_limit, a.size());
  for (std::size_t i = 0; i < shown; ++i) {
    if (a[i].is_object() && !a[i].empty()) {
      std::string item;
      put_object(item, a[i], indent + 2, o);
      item.replace(indent, 2, "- ");
      out += item;
    } else {
      out += std::string(indent, ' ') + "- " + inline_text(a[i], o) + "\n";
    }
  }
  if (shown < a.size()) out += std::string(indent, ' ') + "- '... " + std::to_string(a.size() - shown) + " more'\n";
}

void put_object(std::string& out, const nlohmann::ordered_json& object, std::size_t indent, const TextOptions& o) {
  for (const auto& [key, v] : object.items()) {
    out += std::string(indent, ' ') + key + ":";
    if (v.is_object() && !v.empty()) {
      out += "\n";
      put_object(out, v, indent + 2, o);
    } else if (v.is_array() && !flat(v)) {
      out += "\n";
      put_list(out, v, indent, o);
    } else {
      out += " " + inline_text(v, o) + "\n";
    }
  }
}

}  // namespace

bool decodable(const TopicType& type) noexcept {
  return type.message_encoding == "cdr" && type.schema.encoding == "ros2msg";
}

Result<CdrCodec> codec_for(const TopicType& type, const MsgPath& path) {
  if (!decodable(type)) {
    return Status(ErrorCode::InvalidArgument, describe(type) + " is not a ROS 2 message with a ros2msg schema");
  }
  std::string text = type.schema.data;
  if (text.empty()) {
    // An empty definition is an empty message, or one whose definition never came: the msg path
    // tells them apart.
    if (path.find(type.schema.name)) {
      auto schema = load_schema(path, type.schema.name);
      if (!schema) return schema.status();
      text = std::move(schema->data);
    }
  }
  auto set = parse_schema(type.schema.name, text);
  if (!set) return set.status();
  return CdrCodec::create(*set);
}

nlohmann::ordered_json plain_json(const nlohmann::ordered_json& value) {
  if (value.is_binary()) {
    const auto& bytes = value.get_binary();
    return base64_encode({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()});
  }
  if (value.is_object()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [key, v] : value.items()) out[key] = plain_json(v);
    return out;
  }
  if (value.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& v : value) out.push_back(plain_json(v));
    return out;
  }
  return value;
}

std::string message_text(const nlohmann::ordered_json& value, const TextOptions& options) {
  if (!value.is_object()) return inline_text(value, options) + "\n";
  if (value.empty()) return "{}\n";
  std::string out;
  put_object(out, value, 0, options);
  return out;
}

}  // namespace cerulion::ros2
