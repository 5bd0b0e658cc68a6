#include "cerulion/recorder/writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <map>
#include <unistd.h>

#include "compression.hpp"
#include "records.hpp"
#include "wire.hpp"

#ifndef CERULION_RECORDER_VERSION
#define CERULION_RECORDER_VERSION "0"
#endif

namespace cerulion::recorder {

const char* to_string(Compression c) noexcept { return c == Compression::Zstd ? "zstd" : "none"; }

namespace detail {

class WriterImpl {
 public:
  WriterImpl(int fd, std::string path, WriterOptions options)
      : path_(std::move(path)), fd_(fd), options_(std::move(options)) {}
  ~WriterImpl() {
    try {
      if (fd_ >= 0) (void)close();
    } catch (...) {
      // A destructor cannot report: the file stays readable up to its last complete chunk.
    }
  }

  Status start() {
    emit(kMagic, kMagicSize);
    ByteVector rec;
    Header h{options_.profile, options_.library.empty()
                                   ? std::string("cerulion-recorder ") + CERULION_RECORDER_VERSION
                                   : options_.library};
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
    std::uint64_t offset = chunk_.size();
    Encoder e(chunk_);
    e.u8(static_cast<std::uint8_t>(Opcode::Message));
    e.u64(22 + data.size());
    e.u16(channel_id);
    e.u32(sequence);
    e.u64(log_time);
    e.u64(publish_time);
    e.raw(data.data(), data.size());
    chunk_index_[channel_id].emplace_back(log_time, offset);
    if (chunk_messages_ == 0 || log_time < chunk_start_) chunk_start_ = log_time;
    if (chunk_messages_ == 0 || log_time > chunk_end_) chunk_end_ = log_time;
    ++chunk_messages_;
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
    if (fd_ < 0) return Status(ErrorCode::InvalidArgument, "writer is closed");
    Status st = finish();
    if (::close(fd_) != 0 && st) st = Status(ErrorCode::SystemError, path_ + ": close: " + std::strerror(errno));
    fd_ = -1;
    return st;
  }

  WriterCounters counters_;
  std::string path_;

 private:
  Status usable() const {
    if (fd_ < 0) return Status(ErrorCode::InvalidArgument, "writer is closed");
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
    std::size_t done = 0;
    while (done < buffer_.size()) {
      ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = Status(ErrorCode::SystemError, path_ + ": write: " + std::strerror(errno));
        buffer_.clear();
        return error_;
      }
      done += static_cast<std::size_t>(n);
    }
    buffer_.clear();
    return error_;
  }

  Status close_chunk() {
    if (chunk_.empty()) return {};
    ChunkInfo info;
    info.message_start_time = chunk_messages_ ? chunk_start_ : 0;
    info.message_end_time = chunk_messages_ ? chunk_end_ : 0;
    info.uncompressed_size = chunk_.size();
    info.uncompressed_crc = crc32_of(chunk_);
    std::span<const std::byte> stored = chunk_;
    if (options_.compression == Compression::Zstd &&
        zstd_.compress(chunk_, options_.compression_level, compressed_) && compressed_.size() < chunk_.size()) {
      info.compression = "zstd";
      stored = compressed_;
    }
    ByteVector head;
    Encoder e(head);
    const std::uint64_t content = 8 + 8 + 8 + 4 + 4 + info.compression.size() + 8 + stored.size();
    e.u8(static_cast<std::uint8_t>(Opcode::Chunk));
    e.u64(content);
    e.u64(info.message_start_time);
    e.u64(info.message_end_time);
    e.u64(info.uncompressed_size);
    e.u32(info.uncompressed_crc);
    e.str(info.compression);
    e.u64(stored.size());
    ChunkIndex ci;
    ci.message_start_time = info.message_start_time;
    ci.message_end_time = info.message_end_time;
    ci.chunk_start_offset = position_;
    ci.chunk_length = kRecordPrefixSize + content;
    ci.compression = info.compression;
    ci.compressed_size = stored.size();
    ci.uncompressed_size = info.uncompressed_size;
    emit(head.data(), head.size());
    emit(stored.data(), stored.size());
    std::uint64_t index_start = position_;
    ByteVector rec;
    for (auto& [channel, entries] : chunk_index_) {
      rec.clear();
      ci.message_index_offsets[channel] = position_;
      append_record(rec, MessageIndex{channel, std::move(entries)});
      emit(rec.data(), rec.size());
    }
    ci.message_index_length = position_ - index_start;
    chunk_indexes_.push_back(std::move(ci));
    ++counters_.chunks;
    counters_.uncompressed_chunk_bytes += info.uncompressed_size;
    counters_.compressed_chunk_bytes += stored.size();
    chunk_.clear();
    chunk_index_.clear();
    chunk_messages_ = 0;
    return flush_os();
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

  int fd_;
  WriterOptions options_;
  Status error_;
  ByteVector buffer_;
  std::uint64_t position_ = 0;
  std::uint32_t data_crc_ = 0;
  std::uint32_t summary_crc_ = 0;
  bool in_summary_ = false;
  std::map<std::uint16_t, Schema> schemas_;
  std::map<std::uint16_t, Channel> channels_;
  ByteVector chunk_;
  ByteVector compressed_;
  ZstdCompressor zstd_;
  std::map<std::uint16_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> chunk_index_;
  std::uint64_t chunk_start_ = 0, chunk_end_ = 0, chunk_messages_ = 0;
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
  try {
    if (options.chunk_size == 0) return Status(ErrorCode::InvalidArgument, "chunk size must be positive");
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options.overwrite ? O_TRUNC : O_EXCL);
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) {
      int err = errno;
      if (err == EEXIST) {
        return Status(ErrorCode::InvalidArgument, path + " already exists (use --force to overwrite)");
      }
      ErrorCode code = err == ENOENT ? ErrorCode::NotFound
                       : err == EACCES ? ErrorCode::PermissionDenied
                                       : ErrorCode::SystemError;
      return Status(code, path + ": " + std::strerror(err));
    }
    auto impl = std::make_unique<detail::WriterImpl>(fd, path, std::move(options));
    if (auto st = impl->start(); !st) return st;
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

const WriterCounters& Writer::counters() const noexcept { return impl_->counters_; }
const std::string& Writer::path() const noexcept { return impl_->path_; }

}  // namespace cerulion::recorder
