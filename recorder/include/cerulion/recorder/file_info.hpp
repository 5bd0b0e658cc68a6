// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an MCAP file holds, like `mcap info`: `cerulion info` prints it (as text, or to_json's
// object, docs/json.md). Per-channel byte counts are not in a file's summary, so describe_file()
// reads every message (chunk by chunk); a file that was not finalized is described by what its
// complete chunks hold.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder {

/// One channel and what the file holds of it.
struct ChannelInfo {
  std::uint16_t id = 0;
  std::string topic;
  std::string message_encoding;
  struct SchemaInfo {
    std::string name;
    std::string encoding;
    std::uint64_t bytes = 0;
  };
  std::optional<SchemaInfo> schema;  ///< none: the channel has no schema
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;           ///< of its messages' payloads
  double rate_hz = 0;                ///< messages over the file's duration; 0 when it has none
  KeyValueMap metadata;
};

/// A file's description.
struct FileInfo {
  std::string path;
  std::uint64_t size_bytes = 0;
  bool finalized = false;  ///< footer and closing magic present: not cut short
  bool indexed = false;    ///< its summary section was used (else the file was scanned)
  std::string library;
  std::string profile;
  std::uint64_t messages = 0;
  std::uint64_t start_ns = 0;  ///< log time of the first message; 0 without messages
  std::uint64_t end_ns = 0;    ///< of the last
  double duration_s = 0;
  std::uint64_t chunks = 0;
  std::map<std::string, std::uint64_t> chunks_by_compression;  ///< "zstd", "lz4", "none"
  std::uint64_t stored_bytes = 0;        ///< of the chunks, as stored
  std::uint64_t uncompressed_bytes = 0;  ///< of the chunks, uncompressed
  double compression_ratio = 1;          ///< uncompressed / stored; 1 without chunks
  std::uint64_t attachments = 0;
  std::uint64_t metadata_records = 0;
  std::vector<ChannelInfo> channels;     ///< by id
  std::vector<Metadata> metadata;        ///< the Metadata records, in file order
  std::vector<std::string> problems;     ///< what was found wrong (bad chunks skipped, metadata unreadable)
};

/// Describes the file at `path`: Reader::open's errors (NotFound, Corrupted...), or what it holds.
Result<FileInfo> describe_file(const std::string& path);

/// The description as one JSON object (docs/json.md: `cerulion info --json`).
std::string to_json(const FileInfo& info);

}  // namespace cerulion::recorder
