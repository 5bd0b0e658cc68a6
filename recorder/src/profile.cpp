// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/profile.hpp"

#include <charconv>
#include <limits>
#include <map>

namespace cerulion::recorder::profile {
namespace {

constexpr std::string_view kReceivedPrefix = "received:";
constexpr std::string_view kLostPrefix = "lost:";
constexpr std::string_view kMessagesPrefix = "messages:";

/// A decimal unsigned number that fits `T`, the whole of `text` (no sign, no spaces, no suffix).
template <typename T>
Result<T> parse_number(std::string_view record, const std::string& key, const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end) {
    return Status(ErrorCode::InvalidArgument,
                  std::string(record) + ": '" + key + "' is '" + text + "', not a number" +
                      (ec == std::errc::result_out_of_range ? " in range" : ""));
  }
  return value;
}

/// Reads `key` into `out` when present; absent keeps `out`.
template <typename T>
Status read_number(std::string_view record, const KeyValueMap& map, const std::string& key, T& out) {
  auto it = map.find(key);
  if (it == map.end()) return {};
  auto value = parse_number<T>(record, key, it->second);
  if (!value) return value.status();
  out = *value;
  return {};
}

std::string text_of(const KeyValueMap& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? std::string() : it->second;
}

/// Per-topic counts under "<count_prefix><topic>" and "lost:<topic>", in topic order.
Status read_topic_counts(std::string_view record, const KeyValueMap& map, std::string_view count_prefix,
                         std::vector<TopicCount>& out) {
  std::map<std::string, TopicCount> topics;
  for (const auto& [key, value] : map) {
    std::string_view k = key;
    const bool counted = k.starts_with(count_prefix);
    if (!counted && !k.starts_with(kLostPrefix)) continue;
    const std::string topic(k.substr(counted ? count_prefix.size() : kLostPrefix.size()));
    auto number = parse_number<std::uint64_t>(record, key, value);
    if (!number) return number.status();
    auto& count = topics[topic];
    count.topic = topic;
    (counted ? count.messages : count.lost) = *number;
  }
  for (auto& [topic, count] : topics) out.push_back(std::move(count));
  return {};
}

void write_topic_counts(KeyValueMap& map, std::string_view count_prefix, const std::vector<TopicCount>& topics) {
  for (const auto& t : topics) {
    map[std::string(count_prefix) + t.topic] = std::to_string(t.messages);
    map[std::string(kLostPrefix) + t.topic] = std::to_string(t.lost);
  }
}

Status expect_name(const Metadata& metadata, std::string_view name) {
  if (metadata.name == name) return {};
  return Status(ErrorCode::InvalidArgument,
                "metadata record '" + metadata.name + "' is not a '" + std::string(name) + "' record");
}

}  // namespace

ChannelType channel_type(const cerulion::TopicType& type) {
  ChannelType out;
  out.message_encoding = type.message_encoding.empty() ? std::string(kMessageEncoding) : type.message_encoding;
  if (!type.schema.empty()) {
    Schema schema;
    schema.name = type.schema.name;
    schema.encoding = type.schema.encoding;
    const auto* bytes = reinterpret_cast<const std::byte*>(type.schema.data.data());
    schema.data.assign(bytes, bytes + type.schema.data.size());
    out.schema = std::move(schema);
  }
  return out;
}

cerulion::TopicType topic_type(const Channel& channel, const Schema* schema) {
  cerulion::TopicType type;
  if (channel.message_encoding != kMessageEncoding) type.message_encoding = channel.message_encoding;
  if (schema) {
    type.schema.name = schema->name;
    type.schema.encoding = schema->encoding;
    type.schema.data.assign(reinterpret_cast<const char*>(schema->data.data()), schema->data.size());
  }
  return type;
}

Result<std::uint16_t> schema_id(Writer& writer, SchemaIds& ids, const std::optional<Schema>& schema) {
  if (!schema) return std::uint16_t{0};
  auto key = std::make_tuple(schema->name, schema->encoding, schema->data);
  if (auto it = ids.find(key); it != ids.end()) return it->second;
  auto id = writer.add_schema(schema->name, schema->encoding, schema->data);
  if (!id) return id.status();
  ids.emplace(std::move(key), *id);
  return *id;
}

KeyValueMap channel_metadata(const TopicSettings& settings) {
  KeyValueMap md;
  if (!settings.domain.empty()) md["domain"] = settings.domain;
  if (!settings.mode.empty()) md["mode"] = settings.mode;
  if (settings.depth) md["depth"] = std::to_string(settings.depth);
  if (settings.max_payload) md["max_payload"] = std::to_string(settings.max_payload);
  return md;
}

Result<TopicSettings> parse_channel_metadata(const KeyValueMap& metadata) {
  TopicSettings settings;
  settings.domain = text_of(metadata, "domain");
  settings.mode = text_of(metadata, "mode");
  constexpr std::string_view kRecord = "channel metadata";
  if (Status st = read_number(kRecord, metadata, "depth", settings.depth); !st) return st;
  if (Status st = read_number(kRecord, metadata, "max_payload", settings.max_payload); !st) return st;
  return settings;
}

Metadata recording_metadata(const RecordingSummary& summary) {
  Metadata md;
  md.name = std::string(kRecordingMetadataName);
  md.metadata["host"] = summary.host;
  md.metadata["cerulion_version"] = summary.cerulion_version;
  md.metadata["domain"] = summary.domain;
  write_topic_counts(md.metadata, kReceivedPrefix, summary.topics);
  return md;
}

Result<RecordingSummary> parse_recording_metadata(const Metadata& metadata) {
  if (Status st = expect_name(metadata, kRecordingMetadataName); !st) return st;
  RecordingSummary summary;
  summary.host = text_of(metadata.metadata, "host");
  summary.cerulion_version = text_of(metadata.metadata, "cerulion_version");
  summary.domain = text_of(metadata.metadata, "domain");
  if (Status st = read_topic_counts(kRecordingMetadataName, metadata.metadata, kReceivedPrefix, summary.topics); !st) {
    return st;
  }
  return summary;
}

Metadata flashback_metadata(const FlashbackSummary& summary) {
  Metadata md;
  md.name = std::string(kFlashbackMetadataName);
  md.metadata["trigger"] = summary.trigger;
  md.metadata["details"] = summary.details;
  md.metadata["note"] = summary.note;
  md.metadata["domain"] = summary.domain;
  md.metadata["name"] = summary.name;
  md.metadata["keeper_pid"] = std::to_string(summary.keeper_pid);
  md.metadata["window_start_ns"] = std::to_string(summary.window_start_ns);
  md.metadata["window_end_ns"] = std::to_string(summary.window_end_ns);
  write_topic_counts(md.metadata, kMessagesPrefix, summary.topics);
  return md;
}

Result<FlashbackSummary> parse_flashback_metadata(const Metadata& metadata) {
  if (Status st = expect_name(metadata, kFlashbackMetadataName); !st) return st;
  const auto& map = metadata.metadata;
  FlashbackSummary summary;
  summary.trigger = text_of(map, "trigger");
  summary.details = text_of(map, "details");
  summary.note = text_of(map, "note");
  summary.domain = text_of(map, "domain");
  summary.name = text_of(map, "name");
  constexpr std::string_view kRecord = kFlashbackMetadataName;
  if (Status st = read_number(kRecord, map, "keeper_pid", summary.keeper_pid); !st) return st;
  if (Status st = read_number(kRecord, map, "window_start_ns", summary.window_start_ns); !st) return st;
  if (Status st = read_number(kRecord, map, "window_end_ns", summary.window_end_ns); !st) return st;
  if (Status st = read_topic_counts(kRecord, map, kMessagesPrefix, summary.topics); !st) return st;
  return summary;
}

}  // namespace cerulion::recorder::profile
