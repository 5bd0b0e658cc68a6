// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/chunk.hpp"

#include <exception>
#include <vector>

#include "compression.hpp"
#include "records.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

using detail::Decoder;

Result<ChunkSummary> describe_chunk(std::span<const std::byte> encoded) {
  auto bad = [](const std::string& what) { return Status(ErrorCode::Corrupted, "encoded chunk: " + what); };
  Decoder d(encoded);
  if (d.u8() != static_cast<std::uint8_t>(Opcode::Chunk)) return bad("does not start with a Chunk record");
  const std::uint64_t content = d.u64();
  if (d.failed() || content > d.remaining()) return bad("Chunk record longer than the bytes");
  ChunkSummary s;
  s.chunk_record_length = kRecordPrefixSize + content;
  Decoder c(encoded.subspan(kRecordPrefixSize, static_cast<std::size_t>(content)));
  s.message_start_time = c.u64();
  s.message_end_time = c.u64();
  s.uncompressed_size = c.u64();
  (void)c.u32();
  s.compression = c.str();
  s.compressed_size = c.u64();
  if (c.failed() || s.compressed_size != c.remaining()) return bad("Chunk record fields do not add up");
  if (s.compression != "" && s.compression != "zstd" && s.compression != "lz4") {
    return bad("unknown compression '" + s.compression + "'");
  }
  std::uint64_t at = s.chunk_record_length;
  while (at < encoded.size()) {
    Decoder m(encoded.subspan(static_cast<std::size_t>(at)));
    if (m.u8() != static_cast<std::uint8_t>(Opcode::MessageIndex)) return bad("a record after the Chunk is not a MessageIndex");
    const std::uint64_t len = m.u64();
    if (m.failed() || len > m.remaining()) return bad("MessageIndex record longer than the bytes");
    Decoder body(encoded.subspan(static_cast<std::size_t>(at + kRecordPrefixSize), static_cast<std::size_t>(len)));
    const std::uint16_t channel = body.u16();
    const std::uint32_t entries_bytes = body.u32();
    if (body.failed() || entries_bytes % 16 != 0 || entries_bytes > body.remaining()) {
      return bad("MessageIndex of channel " + std::to_string(channel) + " is malformed");
    }
    if (!s.channels.emplace(channel, std::pair{at, entries_bytes / 16}).second) {
      return bad("two MessageIndex records for channel " + std::to_string(channel));
    }
    s.message_count += entries_bytes / 16;
    at += kRecordPrefixSize + len;
  }
  return s;
}

namespace detail {

class ChunkEncoderImpl {
 public:
  ChunkEncoderImpl(Compression compression, int level) : compression_(compression), level_(level) {}

  Status encode(std::span<const std::byte> records, ByteVector& out) {
    index_.clear();
    std::uint64_t start = 0, end = 0, count = 0;
    for (std::size_t at = 0; at < records.size();) {
      auto message = read_message_record(records.subspan(at));
      if (!message) {
        return Status(ErrorCode::InvalidArgument,
                      "chunk records: no whole Message record at offset " + std::to_string(at));
      }
      const std::uint64_t log_time = message->fields.log_time;
      index_[message->fields.channel_id].emplace_back(log_time, at);
      if (count == 0 || log_time < start) start = log_time;
      if (count == 0 || log_time > end) end = log_time;
      ++count;
      at += static_cast<std::size_t>(message->record_size);
    }
    ChunkInfo info;
    info.message_start_time = start;
    info.message_end_time = end;
    info.uncompressed_size = records.size();
    info.uncompressed_crc = crc32_of(records);
    std::span<const std::byte> stored = records;
    if (compression_ == Compression::Zstd && zstd_.compress(records, level_, compressed_) &&
        compressed_.size() < records.size()) {
      info.compression = "zstd";
      stored = compressed_;
    }
    out.clear();
    append_chunk(out, info, stored);
    for (auto& [channel, entries] : index_) append_record(out, MessageIndex{channel, std::move(entries)});
    return {};
  }

 private:
  Compression compression_;
  int level_;
  ZstdCompressor zstd_;
  ByteVector compressed_;
  std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> index_;
};

}  // namespace detail

ChunkEncoder::ChunkEncoder(Compression compression, int level)
    : impl_(std::make_unique<detail::ChunkEncoderImpl>(compression, level)) {}
ChunkEncoder::ChunkEncoder(ChunkEncoder&&) noexcept = default;
ChunkEncoder& ChunkEncoder::operator=(ChunkEncoder&&) noexcept = default;
ChunkEncoder::~ChunkEncoder() = default;

Status ChunkEncoder::encode(std::span<const std::byte> records, ByteVector& out) {
  if (!impl_) return Status(ErrorCode::InvalidArgument, "chunk encoder was moved from");
  try {
    return impl_->encode(records, out);
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("cannot encode chunk: ") + e.what());
  }
}

}  // namespace cerulion::recorder
