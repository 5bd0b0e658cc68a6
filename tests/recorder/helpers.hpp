// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared helpers of the recorder tests: temp paths, the shared reference folder, and records as
// the conformance suite's JSON.

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cerulion/recorder/types.hpp"
#include "temp_dir.hpp"

namespace rectest {

namespace fs = std::filesystem;
using namespace cerulion::recorder;

/// A fresh path in this process's own temp folder, so parallel ctest runs never collide.
inline std::string temp_path(const std::string& stem) { return cerulion::test::fresh_temp_path(stem); }

inline fs::path reference_dir() { return fs::path(CERULION_SHARED_REFERENCE); }

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline ByteVector bytes_of(const std::string& s) {
  ByteVector v(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) v[i] = static_cast<std::byte>(s[i]);
  return v;
}

inline nlohmann::json bytes_json(const ByteVector& b) {
  auto a = nlohmann::json::array();
  for (auto x : b) a.push_back(std::to_string(static_cast<unsigned>(x)));
  return a;
}
template <typename M>
nlohmann::json map_json(const M& m) {
  auto o = nlohmann::json::object();
  for (const auto& [k, v] : m) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) o[k] = v;
    else o[std::to_string(k)] = std::to_string(v);
  }
  return o;
}

/// A record in the conformance suite's reader-output shape; null for records it omits.
inline nlohmann::json to_conformance_json(const Record& r) {
  using nlohmann::json;
  auto s = [](auto v) { return std::to_string(v); };
  json fields = json::array();
  auto f = [&](const char* name, json value) { fields.push_back(json::array({name, std::move(value)})); };
  std::string type;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Header>) {
          type = "Header"; f("library", x.library); f("profile", x.profile);
        } else if constexpr (std::is_same_v<T, Footer>) {
          type = "Footer"; f("summary_crc", s(x.summary_crc)); f("summary_offset_start", s(x.summary_offset_start));
          f("summary_start", s(x.summary_start));
        } else if constexpr (std::is_same_v<T, Schema>) {
          type = "Schema"; f("data", bytes_json(x.data)); f("encoding", x.encoding); f("id", s(x.id)); f("name", x.name);
        } else if constexpr (std::is_same_v<T, Channel>) {
          type = "Channel"; f("id", s(x.id)); f("message_encoding", x.message_encoding); f("metadata", map_json(x.metadata));
          f("schema_id", s(x.schema_id)); f("topic", x.topic);
        } else if constexpr (std::is_same_v<T, Message>) {
          type = "Message"; f("channel_id", s(x.channel_id)); f("data", bytes_json(x.data)); f("log_time", s(x.log_time));
          f("publish_time", s(x.publish_time)); f("sequence", s(x.sequence));
        } else if constexpr (std::is_same_v<T, ChunkIndex>) {
          type = "ChunkIndex"; f("chunk_length", s(x.chunk_length)); f("chunk_start_offset", s(x.chunk_start_offset));
          f("compressed_size", s(x.compressed_size)); f("compression", x.compression);
          f("message_end_time", s(x.message_end_time)); f("message_index_length", s(x.message_index_length));
          f("message_index_offsets", map_json(x.message_index_offsets)); f("message_start_time", s(x.message_start_time));
          f("uncompressed_size", s(x.uncompressed_size));
        } else if constexpr (std::is_same_v<T, Attachment>) {
          type = "Attachment"; f("create_time", s(x.create_time)); f("data", bytes_json(x.data)); f("log_time", s(x.log_time));
          f("media_type", x.media_type); f("name", x.name);
        } else if constexpr (std::is_same_v<T, AttachmentIndex>) {
          type = "AttachmentIndex"; f("create_time", s(x.create_time)); f("data_size", s(x.data_size)); f("length", s(x.length));
          f("log_time", s(x.log_time)); f("media_type", x.media_type); f("name", x.name); f("offset", s(x.offset));
        } else if constexpr (std::is_same_v<T, Statistics>) {
          type = "Statistics"; f("attachment_count", s(x.attachment_count)); f("channel_count", s(x.channel_count));
          f("channel_message_counts", map_json(x.channel_message_counts)); f("chunk_count", s(x.chunk_count));
          f("message_count", s(x.message_count)); f("message_end_time", s(x.message_end_time));
          f("message_start_time", s(x.message_start_time)); f("metadata_count", s(x.metadata_count));
          f("schema_count", s(x.schema_count));
        } else if constexpr (std::is_same_v<T, Metadata>) {
          type = "Metadata"; f("metadata", map_json(x.metadata)); f("name", x.name);
        } else if constexpr (std::is_same_v<T, MetadataIndex>) {
          type = "MetadataIndex"; f("length", s(x.length)); f("name", x.name); f("offset", s(x.offset));
        } else if constexpr (std::is_same_v<T, SummaryOffset>) {
          type = "SummaryOffset"; f("group_length", s(x.group_length)); f("group_opcode", s(x.group_opcode));
          f("group_start", s(x.group_start));
        } else if constexpr (std::is_same_v<T, DataEnd>) {
          type = "DataEnd"; f("data_section_crc", s(x.data_section_crc));
        }
      },
      r);
  if (type.empty()) return nullptr;
  return json{{"type", type}, {"fields", fields}};
}

}  // namespace rectest
