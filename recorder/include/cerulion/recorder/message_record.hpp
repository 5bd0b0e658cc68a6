// SPDX-License-Identifier: Apache-2.0
#pragma once
// The MCAP Message record, the one record written once per message: encoded and read here only.
// The writer, the chunk encoder, the reader and flashback's store all go through these, so the
// layout (opcode, length, then channel_id u16, sequence u32, log_time u64, publish_time u64 and the
// payload, little-endian) is written down once.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder {

/// Bytes of a Message record's fixed fields: channel_id (2), sequence (4), log_time (8) and
/// publish_time (8). The payload follows them.
inline constexpr std::size_t kMessageFieldsSize = 2 + 4 + 8 + 8;

/// Bytes of one Message record (prefix included) carrying `payload_size` bytes.
constexpr std::uint64_t message_record_size(std::uint64_t payload_size) noexcept {
  return kRecordPrefixSize + kMessageFieldsSize + payload_size;
}

/// A Message record's fixed fields.
struct MessageFields {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;      ///< ns
  std::uint64_t publish_time = 0;  ///< ns
};

/// Writes one Message record into `out`, which holds exactly message_record_size(data.size()).
void encode_message_record(std::span<std::byte> out, std::uint16_t channel_id, std::uint32_t sequence,
                           std::uint64_t log_time, std::uint64_t publish_time, std::span<const std::byte> data);
/// Appends one Message record to `out`.
void append_message_record(ByteVector& out, const MessageFields& fields, std::span<const std::byte> data);

/// The fixed fields of a Message record's content (the bytes after its opcode and length);
/// nullopt when the content is shorter than they are.
std::optional<MessageFields> decode_message_fields(std::span<const std::byte> content) noexcept;

/// A whole Message record, read in place.
struct MessageRecordView {
  MessageFields fields;
  std::span<const std::byte> data;  ///< the payload, in the bytes read
  std::uint64_t record_size = 0;    ///< prefix included: where the next record starts
};

/// The Message record `records` starts with; nullopt when `records` does not start with a whole
/// one (another opcode, a length shorter than the fixed fields or longer than the bytes).
std::optional<MessageRecordView> read_message_record(std::span<const std::byte> records) noexcept;

}  // namespace cerulion::recorder
