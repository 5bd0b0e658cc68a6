// SPDX-License-Identifier: Apache-2.0
#include "source.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compression.hpp"
#include "records.hpp"
#include "wire.hpp"

namespace cerulion::recorder::detail {
namespace {

class FileSource final : public Source {
 public:
  FileSource(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  std::uint64_t size() const override { return size_; }
  bool read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    if (offset > size_ || n > size_ - offset) return false;
    while (n > 0) {
      ssize_t r = ::pread(fd_, out, n, static_cast<off_t>(offset));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      out += r;
      offset += static_cast<std::uint64_t>(r);
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }

 private:
  int fd_;
  std::uint64_t size_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  bool read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) return false;
    if (n) std::memcpy(out, bytes_.data() + offset, n);
    return true;
  }

 private:
  std::span<const std::byte> bytes_;
};

}  // namespace

Result<std::shared_ptr<Source>> open_file_source(const std::string& path) {
  // Non-blocking, so a FIFO (or a device) in place of a file is refused below rather than waited on
  // until a writer opens it; reads of a regular file are the same either way.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    ErrorCode code = err == ENOENT ? ErrorCode::NotFound
                     : err == EACCES ? ErrorCode::PermissionDenied
                                     : ErrorCode::SystemError;
    return Status(code, path + ": " + std::strerror(err), Subject::path(path));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(ErrorCode::InvalidArgument, path + ": not a regular file", Subject::path(path));
  }
  return std::shared_ptr<Source>(std::make_shared<FileSource>(fd, static_cast<std::uint64_t>(st.st_size)));
}

std::shared_ptr<Source> memory_source(std::span<const std::byte> bytes) {
  return std::make_shared<MemorySource>(bytes);
}

std::string at(std::uint64_t offset) { return "offset " + std::to_string(offset); }

std::uint32_t prefix_crc(std::uint32_t crc, const RawRecord& r) {
  ByteVector prefix;
  append_prefix(prefix, static_cast<Opcode>(r.opcode), r.content.size());
  crc = crc32_update(crc, prefix.data(), prefix.size());
  return crc32_update(crc, r.content.data(), r.content.size());
}

bool has_magic(Source& source, std::uint64_t offset) {
  std::byte m[kMagicSize];
  if (!source.read(offset, kMagicSize, m)) return false;
  return std::memcmp(m, kMagic, kMagicSize) == 0;
}

std::optional<RawRecord> Lexer::next() {
  if (pos_ >= end_) return std::nullopt;
  if (end_ - pos_ < kRecordPrefixSize) {
    error_ = "truncated record at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  std::byte prefix[kRecordPrefixSize];
  if (!source_.read(pos_, kRecordPrefixSize, prefix)) {
    error_ = "cannot read at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  RawRecord r;
  r.opcode = static_cast<std::uint8_t>(prefix[0]);
  std::uint64_t len = load_le(prefix + 1, 8);
  if (len > end_ - pos_ - kRecordPrefixSize) {
    error_ = "record at offset " + std::to_string(pos_) + " claims " + std::to_string(len) +
             " bytes but only " + std::to_string(end_ - pos_ - kRecordPrefixSize) + " remain";
    return std::nullopt;
  }
  r.offset = pos_;
  r.length = kRecordPrefixSize + len;
  try {
    r.content.resize(static_cast<std::size_t>(len));
  } catch (const std::exception&) {
    error_ = "out of memory reading record at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  if (!source_.read(pos_ + kRecordPrefixSize, static_cast<std::size_t>(len), r.content.data())) {
    error_ = "cannot read record at offset " + std::to_string(pos_);
    return std::nullopt;
  }
  pos_ += r.length;
  return r;
}

bool load_chunk(const ChunkInfo& info, std::span<const std::byte> stored, bool verify_crc,
                ByteVector& records, std::string& error) {
  if (!decompress(info.compression, stored, info.uncompressed_size, records, error)) return false;
  if (verify_crc && info.uncompressed_crc != 0) {
    std::uint32_t crc = crc32_of(records);
    if (crc != info.uncompressed_crc) {
      error = "chunk CRC mismatch";
      return false;
    }
  }
  return true;
}

bool for_each_in_chunk(std::span<const std::byte> records,
                       const std::function<bool(std::uint8_t, std::uint64_t, std::span<const std::byte>)>& fn,
                       std::string& error) {
  std::uint64_t pos = 0;
  while (pos < records.size()) {
    if (records.size() - pos < kRecordPrefixSize) {
      error = "record cut short inside chunk";
      return false;
    }
    auto op = static_cast<std::uint8_t>(records[pos]);
    std::uint64_t len = load_le(records.data() + pos + 1, 8);
    if (len > records.size() - pos - kRecordPrefixSize) {
      error = "record inside chunk overruns the chunk";
      return false;
    }
    if (!fn(op, pos, records.subspan(pos + kRecordPrefixSize, static_cast<std::size_t>(len)))) return true;
    pos += kRecordPrefixSize + len;
  }
  return true;
}

}  // namespace cerulion::recorder::detail
