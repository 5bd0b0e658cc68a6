// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading MCAP files. Reader::open() reads the summary when the file has a valid one (indexed
// reading), and otherwise scans the data section record by record (a file from a recording that
// was killed, or one whose summary is damaged). stream_records() walks every record in file order
// as a streaming reader would. Every CRC is checked; a chunk that fails is reported in problems()
// and skipped, never trusted. Nothing here throws.
//
//   auto reader = cerulion::recorder::Reader::open("run.mcap");
//   if (!reader) { /* reader.message() says why */ }
//   auto st = reader->read_messages({}, [](const MessageView& m) { ...; return true; });

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cerulion/recorder/errors.hpp"
#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder {

namespace detail {
class ReaderImpl;
}

/// How a file is read. Defaults: check every CRC, fall back to a linear scan when the summary is
/// missing or damaged.
struct ReaderOptions {
  /// Verify chunk, data-section, summary and attachment CRCs (non-zero ones).
  bool verify_crcs = true;
  /// Scan the data section when the summary cannot be used; false makes open() fail instead.
  bool allow_fallback_scan = true;
};

/// What open() learned about a file: from its summary, or rebuilt by scanning it.
struct FileSummary {
  Header header;
  std::uint64_t file_size = 0;            ///< bytes
  bool finalized = false;                 ///< Footer and closing magic are present and valid.
  bool indexed = false;                   ///< The summary section was used (no scan needed).
  std::map<std::uint16_t, Schema> schemas;
  std::map<std::uint16_t, Channel> channels;
  Statistics statistics;                  ///< From the file, or counted by the scan.
  std::vector<ChunkIndex> chunk_indexes;  ///< In file order; rebuilt (without message indexes) by a scan.
  std::vector<AttachmentIndex> attachment_indexes;
  std::vector<MetadataIndex> metadata_indexes;
  std::uint64_t unchunked_messages = 0;   ///< Messages found outside chunks (scan only).
  std::uint64_t valid_data_end = 0;       ///< Offset just past the last good data record (scan only).
};

/// One message as delivered to read_messages' callback; valid only during the call.
struct MessageView {
  const Message& message;
  const Channel& channel;
  const Schema* schema;  ///< nullptr when the channel has none
};

/// The order read_messages delivers messages in.
enum class ReadOrder : std::uint8_t {
  /// As they lie in the file (default; the fastest).
  File,
  /// By log_time, ties in file order, as the mcap CLI and Foxglove play files: chunks that overlap
  /// in time (several writers, chunks out of order) are merged through their indexes, holding only
  /// the chunks that overlap in memory. Messages outside chunks cannot be merged that way: they
  /// come in file order, with one problem line when that is not log-time order.
  LogTime,
};

/// Which messages read_messages delivers, and in which order. Default: all of them, file order.
struct ReadMessagesOptions {
  /// Only channels for which this returns true (all when empty).
  std::function<bool(const Channel&)> channel_filter;
  /// Inclusive log_time range, ns.
  std::uint64_t start_time = 0;
  std::uint64_t end_time = std::numeric_limits<std::uint64_t>::max();
  /// File (default) or LogTime.
  ReadOrder order = ReadOrder::File;
};

/// An MCAP file opened for reading. Move-only.
class Reader {
 public:
  /// Opens and summarizes `path`. Corrupted when it is not an MCAP file (empty, bad magic, bad
  /// header) or — without the fallback scan — when its summary is unusable.
  static Result<Reader> open(const std::string& path, ReaderOptions options = {});
  /// As open(), over bytes the caller keeps alive for the Reader's lifetime.
  static Result<Reader> open_memory(std::span<const std::byte> bytes, ReaderOptions options = {});

  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  /// What open() learned about the file.
  const FileSummary& summary() const noexcept;
  /// Things found wrong so far (bad chunks skipped, truncation, a damaged summary), one line each,
  /// each once however often it is met again (reading a file twice adds nothing).
  const std::vector<std::string>& problems() const noexcept;

  /// Log time (ns) before which every message of the file has been read whole, as far as it was
  /// read so far: the earliest a skipped chunk (by the time its header or index gives) or the
  /// cut-off end of a file cut short may have held. A cut-off end is placed at the cut chunk's
  /// start when its header is there, and at the latest message read at most (recorders write in
  /// log-time order, as cerulion's does). 0 when the damage cannot be placed (a record that does
  /// not decode, a data section CRC mismatch); the largest value when nothing was lost.
  std::uint64_t intact_before() const noexcept;

  /// Calls `on_message` for every matching message, in options.order, until it returns false.
  /// Bad chunks are reported in problems() and skipped; the call itself fails only on I/O errors.
  Status read_messages(const ReadMessagesOptions& options,
                       const std::function<bool(const MessageView&)>& on_message);

  /// Every Metadata record of the data section, in file order.
  Result<std::vector<Metadata>> read_metadata();
  /// Every Attachment record of the data section, in file order (CRCs checked).
  Result<std::vector<Attachment>> read_attachments();

 private:
  explicit Reader(std::unique_ptr<detail::ReaderImpl> impl);
  std::unique_ptr<detail::ReaderImpl> impl_;
};

/// How stream_records walks a file.
struct StreamOptions {
  /// Verify chunk, data-section and attachment CRCs (non-zero ones).
  bool verify_crcs = true;
};

/// Calls `on_record` for every record of the file in order, from Header to Footer, until it
/// returns false. A Chunk is delivered as ChunkInfo followed by the records it contains. A chunk
/// that fails its checks is added to `problems` and its records skipped. Fails (Corrupted) when
/// the file is not MCAP or ends early (truncated: no Footer and closing magic).
Status stream_records(const std::string& path, const std::function<bool(const Record&)>& on_record,
                      std::vector<std::string>* problems = nullptr, StreamOptions options = {});
/// As stream_records, over bytes in memory.
Status stream_records_memory(std::span<const std::byte> bytes,
                             const std::function<bool(const Record&)>& on_record,
                             std::vector<std::string>* problems = nullptr, StreamOptions options = {});

}  // namespace cerulion::recorder
