// SPDX-License-Identifier: Apache-2.0
#pragma once
// Little-endian encoding and bounds-checked decoding of MCAP primitives. Decoding never reads
// past its span and never allocates more than the span holds, whatever a length field says.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder::detail {

/// zlib's CRC-32 (IEEE), continuing from `crc` (start with 0).
inline std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {
    // zlib takes uInt lengths; feed huge buffers in pieces.
    uInt n = size > (1u << 30) ? (1u << 30) : static_cast<uInt>(size);
    crc = static_cast<std::uint32_t>(::crc32(crc, p, n));
    p += n;
    size -= n;
  }
  return crc;
}
inline std::uint32_t crc32_of(std::span<const std::byte> bytes) {
  return crc32_update(0, bytes.data(), bytes.size());
}

/// Appends little-endian primitives to a byte buffer.
class Encoder {
 public:
  explicit Encoder(ByteVector& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void bytes32(std::span<const std::byte> b) {
    u32(static_cast<std::uint32_t>(b.size()));
    raw(b.data(), b.size());
  }
  void bytes64(std::span<const std::byte> b) {
    u64(b.size());
    raw(b.data(), b.size());
  }
  /// Reserves a u32 length and returns its position; finish_u32 fills it with the bytes since.
  std::size_t begin_u32() {
    std::size_t at = out_.size();
    u32(0);
    return at;
  }
  void finish_u32(std::size_t at) { put_at(at, out_.size() - at - 4, 4); }
  std::size_t begin_u64() {
    std::size_t at = out_.size();
    u64(0);
    return at;
  }
  void finish_u64(std::size_t at) { put_at(at, out_.size() - at - 8, 8); }
  std::size_t size() const { return out_.size(); }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  }
  void put_at(std::size_t at, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
  }
  ByteVector& out_;
};

inline std::uint64_t load_le(const std::byte* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}

/// Reads primitives from a span; any read past the end sets failed() and yields zero/empty.
class Decoder {
 public:
  explicit Decoder(std::span<const std::byte> in) : in_(in) {}
  bool failed() const { return failed_; }
  std::size_t remaining() const { return failed_ ? 0 : in_.size() - pos_; }
  std::size_t position() const { return pos_; }
  std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(take(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(take(4)); }
  std::uint64_t u64() { return take(8); }
  std::span<const std::byte> span(std::uint64_t n) {
    if (failed_ || n > in_.size() - pos_) {
      failed_ = true;
      return {};
    }
    auto s = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  std::string str() {
    auto s = span(u32());
    return std::string(reinterpret_cast<const char*>(s.data()), s.size());
  }
  ByteVector bytes32() {
    auto s = span(u32());
    return ByteVector(s.begin(), s.end());
  }
  ByteVector bytes64() {
    auto s = span(u64());
    return ByteVector(s.begin(), s.end());
  }
  ByteVector rest() {
    auto s = span(remaining());
    return ByteVector(s.begin(), s.end());
  }

 private:
  std::uint64_t take(int n) {
    if (failed_ || static_cast<std::size_t>(n) > in_.size() - pos_) {
      failed_ = true;
      return 0;
    }
    std::uint64_t v = load_le(in_.data() + pos_, n);
    pos_ += n;
    return v;
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace cerulion::recorder::detail
