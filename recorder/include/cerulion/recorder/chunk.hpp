// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chunks as values: Message records (message_record.hpp) are encoded into a caller's buffer (shared
// memory, say), then compressed once into a Chunk record followed by its MessageIndex records. Such an encoded chunk
// can be kept, copied and later written into a file as it is (Writer::write_chunk), without being
// decompressed or compressed again. This is how a flashback store keeps and dumps its history.

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recorder/types.hpp"
#include "cerulion/recorder/writer.hpp"

namespace cerulion::recorder {

/// What an encoded chunk holds, read from its bytes.
struct ChunkSummary {
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint64_t compressed_size = 0;   ///< stored records, bytes
  std::string compression;             ///< "" or "zstd"
  std::uint64_t chunk_record_length = 0;  ///< the Chunk record; MessageIndex records follow
  std::uint64_t message_count = 0;
  /// Per channel: where its MessageIndex record starts (from the first byte) and its messages.
  std::map<std::uint16_t, std::pair<std::uint64_t, std::uint64_t>> channels;
};

/// Reads the summary of an encoded chunk, checking its framing (not its compressed content):
/// InvalidArgument / Corrupted saying what is wrong.
Result<ChunkSummary> describe_chunk(std::span<const std::byte> encoded);

namespace detail {
class ChunkEncoderImpl;
}

/// Turns Message records into an encoded chunk. Reusable; one thread at a time.
class ChunkEncoder {
 public:
  explicit ChunkEncoder(Compression compression = Compression::Zstd, int level = 1);
  ChunkEncoder(ChunkEncoder&&) noexcept;
  ChunkEncoder& operator=(ChunkEncoder&&) noexcept;
  ~ChunkEncoder();

  /// Encodes `records` (Message records back to back) into `out` (replaced): the Chunk record,
  /// compressed unless that does not shrink it, then one MessageIndex record per channel.
  /// InvalidArgument if `records` holds anything but whole Message records.
  [[nodiscard]] Status encode(std::span<const std::byte> records, ByteVector& out);

 private:
  std::unique_ptr<detail::ChunkEncoderImpl> impl_;
};

}  // namespace cerulion::recorder
