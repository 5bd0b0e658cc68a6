// SPDX-License-Identifier: Apache-2.0
#pragma once
// The MCAP records, as plain structs. Field names and units follow the MCAP specification (format
// major version 0): every time is a uint64 of nanoseconds since the Unix epoch, every offset and
// length is in bytes, and ids are the file's own channel/schema numbers.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace cerulion::recorder {

/// Bytes owned by a record (schema data, message payload, attachment data).
using ByteVector = std::vector<std::byte>;
/// MCAP Map<String,String>; ordered so that files are reproducible.
using KeyValueMap = std::map<std::string, std::string>;

/// The 8 bytes that open and close every MCAP file (major version '0').
inline constexpr std::uint8_t kMagic[8] = {0x89, 'M', 'C', 'A', 'P', 0x30, '\r', '\n'};
/// Size of the magic, in bytes.
inline constexpr std::size_t kMagicSize = 8;
/// Size of a record's prefix: opcode (1 byte) and content length (8 bytes).
inline constexpr std::size_t kRecordPrefixSize = 9;
/// Size of a whole Footer record including its prefix, in bytes.
inline constexpr std::size_t kFooterRecordSize = 29;

/// The record opcodes of MCAP major version 0. 0x80..0xFF belong to applications and are skipped.
enum class Opcode : std::uint8_t {
  Header = 0x01,
  Footer = 0x02,
  Schema = 0x03,
  Channel = 0x04,
  Message = 0x05,
  Chunk = 0x06,
  MessageIndex = 0x07,
  ChunkIndex = 0x08,
  Attachment = 0x09,
  AttachmentIndex = 0x0A,
  Statistics = 0x0B,
  Metadata = 0x0C,
  MetadataIndex = 0x0D,
  SummaryOffset = 0x0E,
  DataEnd = 0x0F,
};

/// The record's name as the conformance suite spells it ("ChunkIndex"), or "Unknown".
const char* to_string(Opcode op) noexcept;

/// First record of a file: the profile ("" or "ros2"...) and the writing library's name.
struct Header {
  std::string profile;
  std::string library;
};

/// Last record: where the summary and its offsets start (0 = absent) and the summary CRC (0 = none).
struct Footer {
  std::uint64_t summary_start = 0;
  std::uint64_t summary_offset_start = 0;
  std::uint32_t summary_crc = 0;
};

/// A message schema. `id` is never 0; `encoding` "" means schemaless (and `data` is empty).
struct Schema {
  std::uint16_t id = 0;
  std::string name;
  std::string encoding;
  ByteVector data;
};

/// A channel: one topic with its message encoding; `schema_id` 0 means no schema.
struct Channel {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;
  KeyValueMap metadata;
};

/// One message. `log_time` is when it was recorded, `publish_time` when it was sent (both ns).
struct Message {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
  ByteVector data;
};

/// A Chunk's header fields (its records are delivered separately, decompressed).
struct ChunkInfo {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t uncompressed_crc = 0;
  std::string compression;          ///< "", "zstd" or "lz4".
  std::uint64_t compressed_size = 0; ///< Size of the records as stored, bytes.
  std::uint64_t file_offset = 0;     ///< Where the Chunk record's opcode sits in the file.
  std::uint64_t record_length = 0;   ///< Whole record, prefix included, bytes.
};

/// The (log_time, offset-in-uncompressed-chunk) pairs of one channel's messages in one chunk.
struct MessageIndex {
  std::uint16_t channel_id = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> records;
};

/// Summary entry locating one chunk and its message indexes.
struct ChunkIndex {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t chunk_start_offset = 0;
  std::uint64_t chunk_length = 0;
  std::map<std::uint16_t, std::uint64_t> message_index_offsets;
  std::uint64_t message_index_length = 0;
  std::string compression;
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
};

/// A file stored in the recording (outside chunks). `crc` covers the record's earlier fields.
struct Attachment {
  std::uint64_t log_time = 0;
  std::uint64_t create_time = 0;
  std::string name;
  std::string media_type;
  ByteVector data;
  std::uint32_t crc = 0;
};

/// Summary entry locating one Attachment record.
struct AttachmentIndex {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t log_time = 0;
  std::uint64_t create_time = 0;
  std::uint64_t data_size = 0;
  std::string name;
  std::string media_type;
};

/// Counts over the whole file (at most one per file, in the summary).
struct Statistics {
  std::uint64_t message_count = 0;
  std::uint16_t schema_count = 0;
  std::uint32_t channel_count = 0;
  std::uint32_t attachment_count = 0;
  std::uint32_t metadata_count = 0;
  std::uint32_t chunk_count = 0;
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::map<std::uint16_t, std::uint64_t> channel_message_counts;
};

/// Named key/value pairs stored in the data section.
struct Metadata {
  std::string name;
  KeyValueMap metadata;
};

/// Summary entry locating one Metadata record.
struct MetadataIndex {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string name;
};

/// Where one group of summary records (all of one opcode) lies.
struct SummaryOffset {
  std::uint8_t group_opcode = 0;
  std::uint64_t group_start = 0;
  std::uint64_t group_length = 0;
};

/// Last data-section record, with the CRC of everything before it (0 = not computed).
struct DataEnd {
  std::uint32_t data_section_crc = 0;
};

/// A record whose opcode this library does not know (skipped by readers, kept for tools).
struct UnknownRecord {
  std::uint8_t opcode = 0;
  ByteVector content;
};

/// Any one record. Chunk records appear as ChunkInfo, followed by the records they contain.
using Record = std::variant<Header, Footer, Schema, Channel, Message, ChunkInfo, MessageIndex,
                            ChunkIndex, Attachment, AttachmentIndex, Statistics, Metadata,
                            MetadataIndex, SummaryOffset, DataEnd, UnknownRecord>;

}  // namespace cerulion::recorder
