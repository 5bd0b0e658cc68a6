// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cerulion MCAP profile: how a cerulion recording (and a flashback dump) describes topics and
// what it counted. Defined once here; record, flashback, play and info all use it.
//
// - The Header's library is "cerulion <version>" (recorder::library()), whoever wrote the file.
// - A channel carries its topic's type (cerulion::TopicType): the topic's message encoding and, when
//   the topic has a schema, a Schema record with the schema's name, encoding and data byte for byte
//   (channels whose schemas are identical share one record). A raw topic (nobody declared a type)
//   has message encoding "x-cerulion-bytes" (payloads are the publisher's bytes) and no schema, and
//   "x-cerulion-bytes" without a schema reads back as raw. channel_type() and topic_type() are this
//   mapping, both ways; nothing else spells it.
// - Every channel has metadata keys "domain", "mode" ("lockstep"/"free-run"), "depth" and
//   "max_payload".
// - A recording closes with a Metadata record "cerulion.recording": "host", "cerulion_version",
//   "domain", and per topic "received:<topic>" and "lost:<topic>".
// - A flashback dump carries a Metadata record "flashback": "trigger", "details", "note",
//   "window_start_ns", "window_end_ns", "keeper_pid", "domain", "name", and per topic
//   "messages:<topic>" and "lost:<topic>".

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <string_view>
#include <vector>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/core/topic_type.hpp"
#include "cerulion/recorder/types.hpp"
#include "cerulion/recorder/writer.hpp"

namespace cerulion::recorder::profile {

/// Message encoding of the channel of a raw topic.
inline constexpr std::string_view kMessageEncoding = "x-cerulion-bytes";
/// Name of the Metadata record that closes a recording.
inline constexpr std::string_view kRecordingMetadataName = "cerulion.recording";
/// Name of the Metadata record of a flashback dump.
inline constexpr std::string_view kFlashbackMetadataName = "flashback";

/// A topic's type as a channel carries it.
struct ChannelType {
  std::string message_encoding;
  std::optional<Schema> schema;  ///< id 0: the file gives it one (schema_id())
};
ChannelType channel_type(const cerulion::TopicType& type);
/// The topic type a channel (with its schema, nullptr when it has none) describes. Not checked:
/// a foreign file may carry what cerulion::check_topic_type refuses.
cerulion::TopicType topic_type(const Channel& channel, const Schema* schema);

/// The Schema records of one file being written, by content.
using SchemaIds = std::map<std::tuple<std::string, std::string, ByteVector>, std::uint16_t>;
/// The id of `schema` in the file `writer` writes: its Schema record is added the first time, and
/// channels with an identical schema share it. 0 (no schema) for nullopt.
Result<std::uint16_t> schema_id(Writer& writer, SchemaIds& ids, const std::optional<Schema>& schema);

/// A topic's settings as a channel carries them. Empty / 0 = not known.
struct TopicSettings {
  std::string domain;
  std::string mode;              ///< "lockstep" or "free-run"
  std::uint32_t depth = 0;
  std::uint64_t max_payload = 0;
};

/// The channel metadata of a topic (keys with unknown values are left out).
KeyValueMap channel_metadata(const TopicSettings& settings);
/// Reads it back. A key that is absent stays empty/0; a number that does not parse is an
/// InvalidArgument naming the key and value (never silently ignored).
Result<TopicSettings> parse_channel_metadata(const KeyValueMap& metadata);

/// What was counted on one topic.
struct TopicCount {
  std::string topic;
  std::uint64_t messages = 0;  ///< received (recording) / kept (flashback)
  std::uint64_t lost = 0;      ///< missed by the tap plus dropped by the sink
};

/// The closing Metadata record of a recording.
struct RecordingSummary {
  std::string host;
  std::string cerulion_version;
  std::string domain;
  std::vector<TopicCount> topics;
};
Metadata recording_metadata(const RecordingSummary& summary);
/// InvalidArgument if the record is not one, or a count does not parse.
Result<RecordingSummary> parse_recording_metadata(const Metadata& metadata);

/// The Metadata record of a flashback dump.
struct FlashbackSummary {
  std::string trigger;   ///< "request", "signal", "topic", "death", "stall"
  std::string details;   ///< e.g. "publisher 1234 of /camera died"
  std::string note;
  std::string domain;
  std::string name;      ///< the keeper's name
  std::uint32_t keeper_pid = 0;
  std::uint64_t window_start_ns = 0;  ///< realtime, first message kept
  std::uint64_t window_end_ns = 0;    ///< realtime, last message kept
  std::vector<TopicCount> topics;
};
Metadata flashback_metadata(const FlashbackSummary& summary);
Result<FlashbackSummary> parse_flashback_metadata(const Metadata& metadata);

}  // namespace cerulion::recorder::profile
