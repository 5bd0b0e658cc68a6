// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/file_info.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cerulion/recorder/reader.hpp"

namespace cerulion::recorder {

Result<FileInfo> describe_file(const std::string& path) {
  auto reader = Reader::open(path);
  if (!reader) return reader.status();
  std::map<std::uint16_t, ChannelInfo> channels;
  if (Status read = reader->read_messages({}, [&](const MessageView& m) {
        auto& c = channels[m.message.channel_id];
        ++c.messages;
        c.bytes += m.message.data.size();
        return true;
      });
      !read.ok()) {
    return read;
  }
  const auto& sum = reader->summary();
  const auto& st = sum.statistics;
  FileInfo info;
  info.path = path;
  info.size_bytes = sum.file_size;
  info.finalized = sum.finalized;
  info.indexed = sum.indexed;
  info.library = sum.header.library;
  info.profile = sum.header.profile;
  for (const auto& [id, c] : channels) info.messages += c.messages;
  if (info.messages) {
    info.start_ns = st.message_start_time;
    info.end_ns = st.message_end_time;
  }
  info.duration_s = static_cast<double>(info.end_ns - info.start_ns) / 1e9;
  info.chunks = sum.chunk_indexes.size();
  for (const auto& ci : sum.chunk_indexes) {
    info.stored_bytes += ci.compressed_size;
    info.uncompressed_bytes += ci.uncompressed_size;
    ++info.chunks_by_compression[ci.compression.empty() ? "none" : ci.compression];
  }
  if (info.stored_bytes) {
    info.compression_ratio = static_cast<double>(info.uncompressed_bytes) / static_cast<double>(info.stored_bytes);
  }
  // A scanned file's indexes and an indexed file's statistics may each miss some: the larger.
  info.attachments = std::max<std::uint64_t>(sum.attachment_indexes.size(), st.attachment_count);
  info.metadata_records = std::max<std::uint64_t>(sum.metadata_indexes.size(), st.metadata_count);
  for (const auto& [id, ch] : sum.channels) {
    ChannelInfo c = channels[id];
    c.id = id;
    c.topic = ch.topic;
    c.message_encoding = ch.message_encoding;
    c.metadata = ch.metadata;
    if (auto schema = sum.schemas.find(ch.schema_id); schema != sum.schemas.end()) {
      c.schema = ChannelInfo::SchemaInfo{schema->second.name, schema->second.encoding, schema->second.data.size()};
    }
    c.rate_hz = info.duration_s > 0 ? static_cast<double>(c.messages) / info.duration_s : 0.0;
    info.channels.push_back(std::move(c));
  }
  info.problems = reader->problems();
  if (auto md = reader->read_metadata(); md.ok()) {
    info.metadata = std::move(*md);
  } else {
    info.problems.push_back("metadata records cannot be read: " + md.message());
  }
  return info;
}

std::string to_json(const FileInfo& info) {
  using json = nlohmann::ordered_json;
  json j;
  j["file"] = info.path;
  j["size_bytes"] = info.size_bytes;
  j["finalized"] = info.finalized;
  j["indexed"] = info.indexed;
  j["library"] = info.library;
  j["profile"] = info.profile;
  j["message_count"] = info.messages;
  j["start_log_time_ns"] = info.messages ? json(info.start_ns) : json(nullptr);
  j["end_log_time_ns"] = info.messages ? json(info.end_ns) : json(nullptr);
  j["duration_s"] = info.duration_s;
  j["chunk_count"] = info.chunks;
  j["compression_ratio"] = info.compression_ratio;
  j["compression"] = info.chunks_by_compression;
  j["attachment_count"] = info.attachments;
  j["metadata_count"] = info.metadata_records;
  json channels = json::array();
  for (const auto& c : info.channels) {
    channels.push_back({{"id", c.id},
                        {"topic", c.topic},
                        {"message_encoding", c.message_encoding},
                        {"schema", c.schema ? json{{"name", c.schema->name},
                                                   {"encoding", c.schema->encoding},
                                                   {"bytes", c.schema->bytes}}
                                            : json(nullptr)},
                        {"message_count", c.messages},
                        {"bytes", c.bytes},
                        {"rate_hz", c.rate_hz},
                        {"metadata", c.metadata}});
  }
  j["channels"] = channels;
  json metadata = json::array();
  for (const auto& m : info.metadata) metadata.push_back({{"name", m.name}, {"metadata", m.metadata}});
  j["metadata"] = metadata;
  j["problems"] = info.problems;
  // Topic names and metadata are the file's bytes: what is not UTF-8 is written with U+FFFD.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace cerulion::recorder
