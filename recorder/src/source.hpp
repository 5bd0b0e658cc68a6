// SPDX-License-Identifier: Apache-2.0
#pragma once
// Random access to the bytes of a recording (a file or a memory buffer), and the record lexer both
// the reader and recovery walk files with. Every length read from the file is checked against
// what the file can still hold before anything is allocated.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder::detail {

/// Bytes addressable by offset.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  /// Reads exactly `n` bytes at `offset` into `out`; false on short read or I/O error.
  virtual bool read(std::uint64_t offset, std::size_t n, std::byte* out) = 0;
};

/// Opens a file for reading; NotFound / PermissionDenied / SystemError with a message.
Result<std::shared_ptr<Source>> open_file_source(const std::string& path);
/// A view of memory the caller keeps alive.
std::shared_ptr<Source> memory_source(std::span<const std::byte> bytes);

/// One top-level record as found in the file.
struct RawRecord {
  std::uint8_t opcode = 0;
  std::uint64_t offset = 0;   ///< of the opcode byte
  std::uint64_t length = 0;   ///< whole record, prefix included
  ByteVector content;
};

/// Walks records from `start` up to `end`; stops at the first record that does not fit.
class Lexer {
 public:
  Lexer(Source& source, std::uint64_t start, std::uint64_t end)
      : source_(source), pos_(start), end_(end) {}
  /// The next record, or nullopt at the end or at a truncated/unreadable record (see error()).
  std::optional<RawRecord> next();
  /// Why next() stopped early ("" when it reached `end` cleanly).
  const std::string& error() const { return error_; }
  std::uint64_t position() const { return pos_; }

 private:
  Source& source_;
  std::uint64_t pos_;
  std::uint64_t end_;
  std::string error_;
};

/// Decompresses a Chunk's stored records and checks its CRC. Returns false with `error` set.
bool load_chunk(const ChunkInfo& info, std::span<const std::byte> stored, bool verify_crc,
                ByteVector& records, std::string& error);

/// Calls `fn(opcode, offset_in_chunk, content)` for every record of decompressed chunk records.
/// Returns false with `error` set when a record is cut short.
bool for_each_in_chunk(std::span<const std::byte> records,
                       const std::function<bool(std::uint8_t, std::uint64_t, std::span<const std::byte>)>& fn,
                       std::string& error);

/// "offset N", for messages.
std::string at(std::uint64_t offset);
/// Continues a CRC over a record's prefix and content, as they lie in the file.
std::uint32_t prefix_crc(std::uint32_t crc, const RawRecord& record);

/// Whether the first 8 bytes are the MCAP magic.
bool has_magic(Source& source, std::uint64_t offset);

}  // namespace cerulion::recorder::detail
