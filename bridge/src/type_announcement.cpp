// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bridge/type_announcement.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace cerulion::bridge {
namespace {

constexpr std::string_view kEncodingKey = "cerulion.encoding=";
constexpr std::string_view kSchemaKey = "cerulion.schema=";
constexpr std::string_view kOmittedKey = "cerulion.schema-omitted=";
constexpr std::string_view kTypeHashKey = "typehash=";

void put_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

/// The next length-prefixed field of `in`, consumed; nullopt when malformed.
std::optional<std::string_view> take_field(std::string_view& in) {
  const auto colon = in.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 9) return std::nullopt;
  std::size_t length = 0;
  const auto parsed = std::from_chars(in.data(), in.data() + colon, length);
  if (parsed.ec != std::errc{} || parsed.ptr != in.data() + colon || length > in.size() - colon - 1) return std::nullopt;
  const std::string_view field = in.substr(colon + 1, length);
  in.remove_prefix(colon + 1 + length);
  return field;
}

/// Three fields and nothing after them.
std::optional<Schema> take_schema(std::string_view in) {
  auto name = take_field(in);
  auto encoding = name ? take_field(in) : std::nullopt;
  auto data = encoding ? take_field(in) : std::nullopt;
  if (!data || !in.empty()) return std::nullopt;
  return Schema{std::string(*name), std::string(*encoding), std::string(*data)};
}

std::vector<unsigned char> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace

std::vector<unsigned char> announce_type(const TopicType& type, std::size_t ceiling, const std::string& type_hash) {
  const std::string hash = type_hash.empty() ? std::string() : std::string(kTypeHashKey) + type_hash + ";";
  if (hash.size() > ceiling) return {};
  if (type.raw()) return bytes_of(hash);
  const std::string encoding = hash + std::string(kEncodingKey) + type.message_encoding;
  if (encoding.size() > ceiling) return bytes_of(hash);
  if (type.schema.empty()) return bytes_of(encoding);
  std::string whole = encoding + '\0' + std::string(kSchemaKey);
  put_field(whole, type.schema.name);
  put_field(whole, type.schema.encoding);
  put_field(whole, type.schema.data);
  if (whole.size() <= ceiling) return bytes_of(whole);
  std::string omitted = encoding + '\0' + std::string(kOmittedKey);
  put_field(omitted, type.schema.name);
  put_field(omitted, type.schema.encoding);
  put_field(omitted, std::to_string(type.schema.data.size()));
  return bytes_of(omitted.size() <= ceiling ? omitted : encoding);
}

TypeAnnouncement read_type_announcement(std::span<const unsigned char> user_data) {
  std::string_view text(reinterpret_cast<const char*>(user_data.data()), user_data.size());
  TypeAnnouncement out;
  if (text.starts_with(kTypeHashKey)) {
    const auto end = text.find(';');
    out.type_hash = std::string(text.substr(kTypeHashKey.size(), end - kTypeHashKey.size()));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  if (!text.starts_with(kEncodingKey)) return out;
  std::string_view rest = text.substr(kEncodingKey.size());
  const auto end = rest.find('\0');
  out.type.message_encoding = std::string(rest.substr(0, end));
  if (end == std::string_view::npos) return out;
  rest.remove_prefix(end + 1);
  // What cannot be read leaves the encoding alone: a bridge of a later version may say more.
  if (rest.starts_with(kSchemaKey)) {
    if (auto schema = take_schema(rest.substr(kSchemaKey.size()))) out.type.schema = std::move(*schema);
  } else if (rest.starts_with(kOmittedKey)) {
    auto schema = take_schema(rest.substr(kOmittedKey.size()));
    std::uint64_t size = 0;
    const char* end_of_size = schema ? schema->data.data() + schema->data.size() : nullptr;
    if (schema && !schema->data.empty()) {
      const auto parsed = std::from_chars(schema->data.data(), end_of_size, size);
      if (parsed.ec == std::errc{} && parsed.ptr == end_of_size) {
        out.omitted = Schema{std::move(schema->name), std::move(schema->encoding), {}};
        out.omitted_bytes = size;
      }
    }
  }
  return out;
}

}  // namespace cerulion::bridge
