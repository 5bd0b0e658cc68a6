// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writing MCAP files: Header, chunked messages with message indexes, schemas and channels,
// attachments and metadata, then on close() the DataEnd, a summary (schemas, channels, statistics,
// metadata/attachment/chunk indexes), summary offsets and the Footer, with data-section and
// summary CRCs. Each chunk is handed to the OS as soon as it is complete, so a process killed
// mid-recording leaves a file whose complete chunks can still be read and recovered.
//
//   auto w = cerulion::recorder::Writer::create("run.mcap");
//   auto ch = w->add_channel("/imu", "cdr");
//   w->write(*ch, seq, log_ns, pub_ns, bytes);
//   w->close();

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/sink.hpp"
#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder {

/// Chunk compression the writer produces (the reader also reads lz4).
enum class Compression : std::uint8_t { None = 0, Zstd = 1 };

/// "none" / "zstd".
const char* to_string(Compression c) noexcept;

/// Header.library of every file cerulion writes, recorded, dumped or recovered alike:
/// "cerulion <version>".
[[nodiscard]] std::string library();

/// Writer settings; the defaults are the recommended setup.
struct WriterOptions {
  /// zstd (default) or none. A chunk that does not shrink is stored uncompressed either way.
  Compression compression = Compression::Zstd;
  /// zstd level (1 = fast, the default; up to 19; negative = faster still).
  int compression_level = 1;
  /// A chunk is closed once its uncompressed records reach this many bytes (default 1 MiB).
  std::uint64_t chunk_size = 1u << 20;
  /// Header.profile ("" by default; "ros2" for rosbag2 files).
  std::string profile;
  /// Header.library; empty: library(), "cerulion <version>".
  std::string library;
  /// Replace an existing file instead of failing with InvalidArgument (create(path) only).
  bool overwrite = false;
};

/// Counters of what a writer has written so far.
struct WriterCounters {
  std::uint64_t messages = 0;
  std::uint64_t message_bytes = 0;   ///< payload bytes
  std::uint64_t file_bytes = 0;      ///< bytes written to the file (buffered ones included)
  std::uint64_t chunks = 0;
  std::uint64_t uncompressed_chunk_bytes = 0;
  std::uint64_t compressed_chunk_bytes = 0;
};

namespace detail {
class WriterImpl;
}

/// Writes one MCAP file. Not thread-safe: one thread writes. Move-only; the destructor closes the
/// file if close() was not called.
class Writer {
 public:
  /// Creates `path` (refusing to replace an existing file unless options.overwrite) and writes the
  /// magic and Header. InvalidArgument, PermissionDenied, NotFound or SystemError on failure.
  static Result<Writer> create(const std::string& path, WriterOptions options = {});
  /// Writes into `sink` (a file, memory...). The writer owns it and closes it on close().
  static Result<Writer> create(std::unique_ptr<ByteSink> sink, WriterOptions options = {});

  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  ~Writer();

  /// Adds a schema and returns its new id (1, 2, ...).
  Result<std::uint16_t> add_schema(std::string_view name, std::string_view encoding,
                                   std::span<const std::byte> data);
  /// Adds a channel and returns its new id (0, 1, ...); `schema_id` 0 = no schema.
  Result<std::uint16_t> add_channel(std::string_view topic, std::string_view message_encoding,
                                    std::uint16_t schema_id = 0, const KeyValueMap& metadata = {});
  /// Adds a schema/channel keeping its id (copying a file). InvalidArgument if the id is taken by
  /// a different record; an identical one is accepted once.
  Status add_schema(const Schema& schema);
  Status add_channel(const Channel& channel);

  /// Writes one message on a channel added before. Times are ns.
  Status write(std::uint16_t channel_id, std::uint32_t sequence, std::uint64_t log_time,
               std::uint64_t publish_time, std::span<const std::byte> data);
  Status write(const Message& message);
  /// Writes an attachment (outside chunks); its CRC is computed here.
  Status write_attachment(const Attachment& attachment);
  /// Writes a Metadata record (outside chunks).
  Status write_metadata(const Metadata& metadata);

  /// Writes a chunk encoded by a ChunkEncoder as it is (no recompression), after closing the
  /// open chunk. Its channels must have been added. Corrupted if its framing is wrong.
  Status write_chunk(std::span<const std::byte> encoded);

  /// Closes the open chunk and hands everything written so far to the OS.
  Status flush();
  /// Finishes the file (DataEnd, summary, Footer) and closes it. Further calls fail.
  Status close();
  /// Gives up on the file: the sink is abandoned (a dump's file then leaves nothing behind).
  void abandon() noexcept;

  const WriterCounters& counters() const noexcept;
  const std::string& path() const noexcept;

 private:
  explicit Writer(std::unique_ptr<detail::WriterImpl> impl);
  std::unique_ptr<detail::WriterImpl> impl_;
};

}  // namespace cerulion::recorder
