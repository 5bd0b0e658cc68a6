// SPDX-License-Identifier: Apache-2.0
#include "cerulion/ros2/type_name.hpp"

#include <vector>

namespace cerulion::ros2 {
namespace {

bool identifier(std::string_view s) noexcept {
  if (s.empty() || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view text, std::string_view by) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(by);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + by.size());
  }
}

Status not_a_type(std::string_view text, std::string_view why) {
  return Status(ErrorCode::InvalidArgument,
                "type name '" + std::string(text) + "' is not of the form pkg/msg/T: " + std::string(why));
}

}  // namespace

Result<TypeName> parse_type_name(std::string_view text) {
  const auto parts = split(text, "/");
  if (parts.size() != 3) return not_a_type(text, "it has " + std::to_string(parts.size()) + " part(s), not 3");
  if (parts[1] != "msg") return not_a_type(text, "its middle part is '" + std::string(parts[1]) + "', not 'msg'");
  if (!identifier(parts[0]) || !identifier(parts[2])) {
    return not_a_type(text, "package and name are a letter then letters, digits and underscores");
  }
  return TypeName{std::string(parts[0]), "msg", std::string(parts[2])};
}

Result<TypeName> parse_reference(std::string_view text, std::string_view package) {
  const auto parts = split(text, "/");
  if (parts.size() == 1 && identifier(parts[0])) return TypeName{std::string(package), "msg", std::string(parts[0])};
  if (parts.size() == 2 && identifier(parts[0]) && identifier(parts[1])) {
    return TypeName{std::string(parts[0]), "msg", std::string(parts[1])};
  }
  return parse_type_name(text);
}

std::string dds_type_name(const TypeName& type) {
  return type.package + "::" + type.kind + "::dds_::" + type.name + "_";
}

std::optional<TypeName> from_dds_type_name(std::string_view dds_name) {
  const auto parts = split(dds_name, "::");
  if (parts.size() != 4 || parts[2] != "dds_" || parts[1] != "msg" || parts[3].size() < 2 || !parts[3].ends_with('_')) {
    return std::nullopt;
  }
  const std::string_view name = parts[3].substr(0, parts[3].size() - 1);
  if (!identifier(parts[0]) || !identifier(name)) return std::nullopt;
  return TypeName{std::string(parts[0]), "msg", std::string(name)};
}

}  // namespace cerulion::ros2
