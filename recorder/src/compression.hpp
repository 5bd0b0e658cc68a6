// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chunk compression. Decompression grows its output as real bytes come out, so a lying
// uncompressed_size field can never make it allocate more than the data actually expands to.

#include <span>
#include <string>

#include "cerulion/recorder/types.hpp"

namespace cerulion::recorder::detail {

/// Decompresses `stored` ("" / "zstd" / "lz4" frame) into `out`, which must end up exactly
/// `expected_size` bytes. False with `error` set otherwise.
bool decompress(const std::string& compression, std::span<const std::byte> stored,
                std::uint64_t expected_size, ByteVector& out, std::string& error);

/// A reusable zstd compressor.
class ZstdCompressor {
 public:
  ZstdCompressor();
  ~ZstdCompressor();
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;
  /// Compresses `in` at `level` into `out` (resized); false on failure.
  bool compress(std::span<const std::byte> in, int level, ByteVector& out);

 private:
  void* cctx_ = nullptr;
};

}  // namespace cerulion::recorder::detail
