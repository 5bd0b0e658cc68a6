// SPDX-License-Identifier: Apache-2.0
#pragma once
// Encoding and decoding of single records' content. Decoding is strict about the fields it knows,
// tolerant of trailing bytes (MCAP lets records grow), and never trusts a length field.

#include <optional>
#include <span>
#include <string>

#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder::detail {

/// Appends `<op><len><content>` for any record except ChunkInfo/UnknownRecord-with-chunk.
void append_record(ByteVector& out, const Record& record);
/// Appends a Chunk record whose stored (maybe compressed) records are `stored`.
void append_chunk(ByteVector& out, const ChunkInfo& info, std::span<const std::byte> stored);
/// Appends an opcode and a u64 length prefix.
void append_prefix(ByteVector& out, Opcode op, std::uint64_t length);

/// Decodes a record's content. A Chunk decodes to ChunkInfo (sizes and compression; file_offset
/// and record_length are left 0); `chunk_records` then receives the stored records' span.
/// Returns nullopt and sets `error` when the content is malformed.
std::optional<Record> decode_record(std::uint8_t opcode, std::span<const std::byte> content,
                                    std::string& error,
                                    std::span<const std::byte>* chunk_records = nullptr);

/// Attachment CRC over the fields before it, as the writer stores it.
std::uint32_t attachment_crc(const Attachment& a);

}  // namespace cerulion::recorder::detail
