// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API: shared by cerulion's own libraries (a topic segment's declared type, a
// flashback store's kept types).
//
// A TopicType as bytes: its four strings, each as a little-endian u32 length and the bytes.

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::detail {

inline std::string encode_topic_type(const TopicType& type) {
  std::string out;
  for (const std::string* field : {&type.message_encoding, &type.schema.name, &type.schema.encoding, &type.schema.data}) {
    const auto size = static_cast<std::uint32_t>(field->size());
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out += *field;
  }
  return out;
}

/// nullopt when `bytes` are not exactly four such strings (damaged).
inline std::optional<TopicType> decode_topic_type(std::string_view bytes) {
  TopicType type;
  for (std::string* field : {&type.message_encoding, &type.schema.name, &type.schema.encoding, &type.schema.data}) {
    std::uint32_t size = 0;
    if (bytes.size() < sizeof size) return std::nullopt;
    std::memcpy(&size, bytes.data(), sizeof size);
    bytes.remove_prefix(sizeof size);
    if (bytes.size() < size) return std::nullopt;
    field->assign(bytes.substr(0, size));
    bytes.remove_prefix(size);
  }
  if (!bytes.empty()) return std::nullopt;
  return type;
}

}  // namespace cerulion::detail
