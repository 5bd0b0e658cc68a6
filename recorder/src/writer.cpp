// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <map>
#include <unistd.h>

#include "cerulion/recorder/chunk.hpp"
#include "cerulion/recorder/sink.hpp"
#include "compression.hpp"
#include "records.hpp"
#include "wire.hpp"

#ifndef CERULION_RECORDER_VERSION
#define CERULION_RECORDER_VERSION "0"
#endif

namespace cerulion::recorder {

std::string library() { return std::string("cerulion ") + CERULION_RECORDER_VERSION; }

const char* to_string(Compression c) noexcept { return c == Compression::Zstd ? "zstd" : "none"; }

namespace detail {

class WriterImpl {
 public:
  WriterImpl(std::unique_ptr<ByteSink> sink, WriterOptions options)
      : path_(sink->name()), sink_(std::move(sink)), options_(std::move(options)),
        encoder_(options_.compression, options_.compression_level) {}
  ~WriterImpl() {
    try {
      if (sink_) (void)close();
    } catch (...) {
      // A destructor cannot report: the file stays readable up to its last complete chunk.
    }
  }

  Status start() {
    emit(kMagic, kMagicSize);
    ByteVector rec;
    Header h{options_.profile, options_.library.empty() ? library() : options_.library};
    append_record(rec, h);
    emit(rec.data(), rec.size());
    return flush_os();
  }

  Status add_schema(const Schema& s) {
    if (auto st = usable(); !st) return st;
    if (s.id == 0) return Status(ErrorCode::InvalidArgument, "schema id 0 is reserved");
    auto it = schemas_.find(s.id);
    if (it != schemas_.end()) {
      if (it->second.name == s.name && it->second.encoding == s.encoding && it->second.data == s.data) return {};
      return Status(ErrorCode::InvalidArgument, "schema id " + std::to_string(s.id) + " is already used");
    }
    schemas_[s.id] = s;
    top_level(s);
    return {};
  }

  Status add_channel(const Channel& c) {
    if (auto st = usable(); !st) return st;
    if (c.schema_id != 0 && !schemas_.count(c.schema_id)) {
      return Status(ErrorCode::InvalidArgument, "channel '" + c.topic + "' refers to unknown schema " +
                                                    std::to_string(c.schema_id));
    }
    auto it = channels_.find(c.id);
    if (it != channels_.end()) {
      const auto& o = it->second;
      if (o.topic == c.topic && o.schema_id == c.schema_id && o.message_encoding == c.message_encoding &&
          o.metadata == c.metadata)
        return {};
      return Status(ErrorCode::InvalidArgument, "channel id " + std::to_string(c.id) + " is already used");
    }
    channels_[c.id] = c;
    top_level(c);
    return {};
  }

  std::uint16_t next_schema_id() const {
    return schemas_.empty() ? 1 : static_cast<std::uint16_t>(schemas_.rbegin()->first + 1);
  }
  std::uint16_t next_channel_id() const {
    return channels_.empty() ? 0 : static_cast<std::uint16_t>(channels_.rbegin()->first + 1);
  }
  bool schema_ids_left() const { return schemas_.empty() || schemas_.rbegin()->first < 0xffff; }
  bool channel_ids_left() const { return channels_.empty() || channels_.rbegin()->first < 0xffff; }

  Status write(std::uint16_t channel_id, std::uint32_t sequence, std::uint64_t log_time,
               std::uint64_t publish_time, std::span<const std::byte> data) {
    if (auto st = usable(); !st) return st;
    if (!channels_.count(channel_id)) {
      return Status(ErrorCode::InvalidArgument, "message on unknown channel " + std::to_string(channel_id));
    }
    append_message_record(chunk_, {channel_id, sequence, log_time, publish_time}, data);
    if (stats_.message_count == 0 || log_time < stats_.message_start_time) stats_.message_start_time = log_time;
    if (stats_.message_count == 0 || log_time > stats_.message_end_time) stats_.message_end_time = log_time;
    ++stats_.message_count;
    ++stats_.channel_message_counts[channel_id];
    ++counters_.messages;
    counters_.message_bytes += data.size();
    if (chunk_.size() >= options_.chunk_size) return close_chunk();
    return {};
  }

  Status write_attachment(Attachment a) {
    if (auto st = usable(); !st) return st;
    if (auto st = close_chunk(); !st) return st;
    a.crc = attachment_crc(a);
    ByteVector rec;
    append_record(rec, a);
    attachment_indexes_.push_back({position_, rec.size(), a.log_time, a.create_time, a.data.size(), a.name, a.media_type});
    emit(rec.data(), rec.size());
    return flush_os();
  }

  Status write_metadata(const Metadata& m) {
    if (auto st = usable(); !st) return st;
    if (auto st = close_chunk(); !st) return st;
    ByteVector rec;
    append_record(rec, m);
    metadata_indexes_.push_back({position_, rec.size(), m.name});
    emit(rec.data(), rec.size());
    return flush_os();
  }

  Status flush() {
    if (auto st = usable(); !st) return st;
    if (auto st = close_chunk(); !st) return st;
    return flush_os();
  }

  Status close() {
    if (!sink_) return Status(ErrorCode::InvalidArgument, "writer is closed");
    Status st = finish();
    if (st) {
      st = sink_->close();
    } else {
      sink_->abandon();
    }
    sink_.reset();
    return st;
  }

  void abandon() noexcept {
    if (!sink_) return;
    sink_->abandon();
    sink_.reset();
  }

  Status write_chunk(std::span<const std::byte> encoded) {
    if (auto st = usable(); !st) return st;
    auto summary = describe_chunk(encoded);
    if (!summary) return summary.status();
    for (const auto& [channel, where] : summary->channels) {
      if (!channels_.count(channel)) {
        return Status(ErrorCode::InvalidArgument, "chunk has messages on unknown channel " + std::to_string(channel));
      }
    }
    if (auto st = close_chunk(); !st) return st;
    for (const auto& [channel, where] : summary->channels) {
      stats_.channel_message_counts[channel] += where.second;
    }
    if (summary->message_count > 0) {
      if (stats_.message_count == 0 || summary->message_start_time < stats_.message_start_time) {
        stats_.message_start_time = summary->message_start_time;
      }
      if (stats_.message_count == 0 || summary->message_end_time > stats_.message_end_time) {
        stats_.message_end_time = summary->message_end_time;
      }
    }
    stats_.message_count += summary->message_count;
    counters_.messages += summary->message_count;
    emit_chunk(encoded, *summary);
    return flush_os();
  }

  WriterCounters counters_;
  std::string path_;

 private:
  Status usable() const {
    if (!sink_) return Status(ErrorCode::InvalidArgument, "writer is closed");
    if (!error_.ok()) return error_;
    return {};
  }

  // Schemas and channels go into the data section outside chunks, so one damaged chunk never
  // takes the definitions later chunks depend on with it.
  void top_level(const Record& r) {
    ByteVector rec;
    append_record(rec, r);
    emit(rec.data(), rec.size());
  }

  void emit(const void* data, std::size_t size) {
    if (!in_summary_) data_crc_ = crc32_update(data_crc_, data, size);
    else summary_crc_ = crc32_update(summary_crc_, data, size);
    const auto* p = static_cast<const std::byte*>(data);
    buffer_.insert(buffer_.end(), p, p + size);
    position_ += size;
    counters_.file_bytes = position_;
    if (buffer_.size() >= (4u << 20)) (void)flush_os();
  }

  Status flush_os() {
    if (!buffer_.empty() && error_.ok()) error_ = sink_->write(buffer_);
    buffer_.clear();
    return error_;
  }

  Status close_chunk() {
    if (chunk_.empty()) return {};
    if (auto st = encoder_.encode(chunk_, encoded_); !st) return st;
    auto summary = describe_chunk(encoded_);
    if (!summary) return summary.status();
    emit_chunk(encoded_, *summary);
    chunk_.clear();
    return flush_os();
  }

  // Writes an encoded chunk as it is, indexing it where it lands.
  void emit_chunk(std::span<const std::byte> encoded, const ChunkSummary& summary) {
    ChunkIndex ci;
    ci.message_start_time = summary.message_start_time;
    ci.message_end_time = summary.message_end_time;
    ci.chunk_start_offset = position_;
    ci.chunk_length = summary.chunk_record_length;
    for (const auto& [channel, where] : summary.channels) ci.message_index_offsets[channel] = position_ + where.first;
    ci.message_index_length = encoded.size() - summary.chunk_record_length;
    ci.compression = summary.compression;
    ci.compressed_size = summary.compressed_size;
    ci.uncompressed_size = summary.uncompressed_size;
    emit(encoded.data(), encoded.size());
    chunk_indexes_.push_back(std::move(ci));
    ++counters_.chunks;
    counters_.uncompressed_chunk_bytes += summary.uncompressed_size;
    counters_.compressed_chunk_bytes += summary.compressed_size;
  }

  Status finish() {
    if (auto st = usable(); !st) return st;
    if (auto st = close_chunk(); !st) return st;
    ByteVector rec;
    append_record(rec, DataEnd{data_crc_});
    emit(rec.data(), rec.size());
    in_summary_ = true;
    const std::uint64_t summary_start = position_;
    std::vector<SummaryOffset> offsets;
    auto group = [&](Opcode op, auto&& write_records) {
      std::uint64_t start = position_;
      write_records();
      if (position_ > start) offsets.push_back({static_cast<std::uint8_t>(op), start, position_ - start});
    };
    auto put = [&](const Record& r) {
      rec.clear();
      append_record(rec, r);
      emit(rec.data(), rec.size());
    };
    stats_.schema_count = static_cast<std::uint16_t>(schemas_.size());
    stats_.channel_count = static_cast<std::uint32_t>(channels_.size());
    stats_.attachment_count = static_cast<std::uint32_t>(attachment_indexes_.size());
    stats_.metadata_count = static_cast<std::uint32_t>(metadata_indexes_.size());
    stats_.chunk_count = static_cast<std::uint32_t>(chunk_indexes_.size());
    group(Opcode::Schema, [&] { for (const auto& [id, s] : schemas_) put(s); });
    group(Opcode::Channel, [&] { for (const auto& [id, c] : channels_) put(c); });
    group(Opcode::Statistics, [&] { put(stats_); });
    group(Opcode::MetadataIndex, [&] { for (const auto& m : metadata_indexes_) put(m); });
    group(Opcode::AttachmentIndex, [&] { for (const auto& a : attachment_indexes_) put(a); });
    group(Opcode::ChunkIndex, [&] { for (const auto& c : chunk_indexes_) put(c); });
    const std::uint64_t offsets_start = position_;
    for (const auto& o : offsets) put(o);
    ByteVector footer;
    Encoder e(footer);
    e.u8(static_cast<std::uint8_t>(Opcode::Footer));
    e.u64(20);
    e.u64(summary_start);
    e.u64(offsets.empty() ? 0 : offsets_start);
    emit(footer.data(), footer.size());
    std::uint32_t crc = summary_crc_;
    in_summary_ = false;
    Encoder tail(buffer_);
    tail.u32(crc);
    tail.raw(kMagic, kMagicSize);
    position_ += 4 + kMagicSize;
    counters_.file_bytes = position_;
    return flush_os();
  }

  std::unique_ptr<ByteSink> sink_;
  WriterOptions options_;
  ChunkEncoder encoder_;
  ByteVector encoded_;
  Status error_;
  ByteVector buffer_;
  std::uint64_t position_ = 0;
  std::uint32_t data_crc_ = 0;
  std::uint32_t summary_crc_ = 0;
  bool in_summary_ = false;
  std::map<std::uint16_t, Schema> schemas_;
  std::map<std::uint16_t, Channel> channels_;
  ByteVector chunk_;
  Statistics stats_;
  std::vector<ChunkIndex> chunk_indexes_;
  std::vector<AttachmentIndex> attachment_indexes_;
  std::vector<MetadataIndex> metadata_indexes_;
};

}  // namespace detail

Writer::Writer(std::unique_ptr<detail::WriterImpl> impl) : impl_(std::move(impl)) {}
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;
Writer::~Writer() = default;

Result<Writer> Writer::create(const std::string& path, WriterOptions options) {
  auto sink = open_file_sink(path, FileSinkOptions{.overwrite = options.overwrite});
  if (!sink) return sink.status();
  return create(std::move(*sink), std::move(options));
}

Result<Writer> Writer::create(std::unique_ptr<ByteSink> sink, WriterOptions options) {
  try {
    if (!sink) return Status(ErrorCode::InvalidArgument, "no sink given");
    if (options.chunk_size == 0) {
      sink->abandon();
      return Status(ErrorCode::InvalidArgument, "chunk size must be positive");
    }
    auto impl = std::make_unique<detail::WriterImpl>(std::move(sink), std::move(options));
    if (auto st = impl->start(); !st) {
      impl->abandon();
      return st;
    }
    return Writer(std::move(impl));
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("cannot create writer: ") + e.what());
  }
}

#define CERULION_GUARD(...)                                                         \
  try {                                                                              \
    if (!impl_) return Status(ErrorCode::InvalidArgument, "writer was moved from"); \
    __VA_ARGS__;                                                                     \
  } catch (const std::exception& e) {                                                \
    return Status(ErrorCode::SystemError, std::string("write failed: ") + e.what()); \
  }

Result<std::uint16_t> Writer::add_schema(std::string_view name, std::string_view encoding,
                                         std::span<const std::byte> data) {
  CERULION_GUARD({
    if (!impl_->schema_ids_left()) return Status(ErrorCode::InvalidArgument, "no schema ids left");
    Schema s{impl_->next_schema_id(), std::string(name), std::string(encoding), ByteVector(data.begin(), data.end())};
    if (auto st = impl_->add_schema(s); !st) return st;
    return s.id;
  })
}

Result<std::uint16_t> Writer::add_channel(std::string_view topic, std::string_view message_encoding,
                                          std::uint16_t schema_id, const KeyValueMap& metadata) {
  CERULION_GUARD({
    if (!impl_->channel_ids_left()) return Status(ErrorCode::InvalidArgument, "no channel ids left");
    Channel c{impl_->next_channel_id(), schema_id, std::string(topic), std::string(message_encoding), metadata};
    if (auto st = impl_->add_channel(c); !st) return st;
    return c.id;
  })
}

Status Writer::add_schema(const Schema& schema) { CERULION_GUARD(return impl_->add_schema(schema)) }
Status Writer::add_channel(const Channel& channel) { CERULION_GUARD(return impl_->add_channel(channel)) }

Status Writer::write(std::uint16_t channel_id, std::uint32_t sequence, std::uint64_t log_time,
                     std::uint64_t publish_time, std::span<const std::byte> data) {
  CERULION_GUARD(return impl_->write(channel_id, sequence, log_time, publish_time, data))
}
Status Writer::write(const Message& m) {
  CERULION_GUARD(return impl_->write(m.channel_id, m.sequence, m.log_time, m.publish_time, m.data))
}
Status Writer::write_attachment(const Attachment& a) { CERULION_GUARD(return impl_->write_attachment(a)) }
Status Writer::write_metadata(const Metadata& m) { CERULION_GUARD(return impl_->write_metadata(m)) }
Status Writer::flush() { CERULION_GUARD(return impl_->flush()) }
Status Writer::close() { CERULION_GUARD(return impl_->close()) }
Status Writer::write_chunk(std::span<const std::byte> encoded) { CERULION_GUARD(return impl_->write_chunk(encoded)) }
void Writer::abandon() noexcept {
  if (impl_) impl_->abandon();
}

const WriterCounters& Writer::counters() const noexcept { return impl_->counters_; }
const std::string& Writer::path() const noexcept { return impl_->path_; }

}  // namespace cerulion::recorder
