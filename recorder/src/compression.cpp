// SPDX-License-Identifier: Apache-2.0
#include "compression.hpp"

#include <algorithm>

#include <lz4frame.h>
#include <zstd.h>

namespace cerulion::recorder::detail {
namespace {

// Output grows in steps of at most this much, so allocation tracks what really decompresses.
constexpr std::size_t kGrowStep = 4u << 20;

std::size_t next_capacity(std::size_t have, std::uint64_t expected) {
  std::uint64_t want = std::min<std::uint64_t>(expected, static_cast<std::uint64_t>(have) + kGrowStep);
  return static_cast<std::size_t>(std::max<std::uint64_t>(want, have));
}

bool finish(std::size_t produced, std::uint64_t expected, ByteVector& out, std::string& error) {
  if (produced != expected) {
    error = "chunk decompresses to " + std::to_string(produced) + " bytes, not the " +
            std::to_string(expected) + " its header says";
    return false;
  }
  out.resize(produced);
  return true;
}

bool zstd_decompress(std::span<const std::byte> in, std::uint64_t expected, ByteVector& out,
                     std::string& error) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (!ds) {
    error = "out of memory creating a zstd decoder";
    return false;
  }
  std::byte dummy[1];
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out.clear();
  std::size_t produced = 0;
  std::size_t r = 1;
  while (true) {
    if (produced == out.size() && out.size() < expected) out.resize(next_capacity(out.size(), expected));
    // With the output full, zstd can still finish a frame's epilogue; if it needs room, it stalls.
    ZSTD_outBuffer output{out.empty() ? dummy : out.data(), out.size(), produced};
    std::size_t before = input.pos;
    r = ZSTD_decompressStream(ds, &output, &input);
    if (ZSTD_isError(r)) {
      error = std::string("zstd: ") + ZSTD_getErrorName(r);
      ZSTD_freeDStream(ds);
      return false;
    }
    bool progressed = output.pos != produced || input.pos != before;
    produced = output.pos;
    if (r == 0 && input.pos == input.size) break;
    if (!progressed) break;
  }
  ZSTD_freeDStream(ds);
  if (r != 0 || input.pos != input.size) {
    error = produced >= expected ? "chunk decompresses to more than its uncompressed_size"
                                 : "zstd frame is truncated";
    return false;
  }
  return finish(produced, expected, out, error);
}

bool lz4_decompress(std::span<const std::byte> in, std::uint64_t expected, ByteVector& out,
                    std::string& error) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    error = "out of memory creating an lz4 decoder";
    return false;
  }
  std::byte dummy[1];
  out.clear();
  std::size_t produced = 0;
  std::size_t consumed = 0;
  std::size_t hint = 1;
  while (true) {
    if (produced == out.size() && out.size() < expected) out.resize(next_capacity(out.size(), expected));
    std::size_t dst = out.size() - produced;
    std::size_t src = in.size() - consumed;
    hint = LZ4F_decompress(dctx, out.empty() ? dummy : out.data() + produced, &dst,
                           in.data() + consumed, &src, nullptr);
    if (LZ4F_isError(hint)) {
      error = std::string("lz4: ") + LZ4F_getErrorName(hint);
      LZ4F_freeDecompressionContext(dctx);
      return false;
    }
    produced += dst;
    consumed += src;
    if (hint == 0 && consumed == in.size()) break;
    if (dst == 0 && src == 0) break;
  }
  LZ4F_freeDecompressionContext(dctx);
  if (hint != 0 || consumed != in.size()) {
    error = produced >= expected ? "chunk decompresses to more than its uncompressed_size"
                                 : "lz4 frame is truncated";
    return false;
  }
  return finish(produced, expected, out, error);
}

}  // namespace

bool decompress(const std::string& compression, std::span<const std::byte> stored,
                std::uint64_t expected_size, ByteVector& out, std::string& error) {
  if (compression.empty()) {
    if (stored.size() != expected_size) {
      error = "uncompressed chunk holds " + std::to_string(stored.size()) + " bytes, not " +
              std::to_string(expected_size);
      return false;
    }
    out.assign(stored.begin(), stored.end());
    return true;
  }
  if (compression == "zstd") return zstd_decompress(stored, expected_size, out, error);
  if (compression == "lz4") return lz4_decompress(stored, expected_size, out, error);
  error = "unsupported chunk compression '" + compression + "'";
  return false;
}

ZstdCompressor::ZstdCompressor() : cctx_(ZSTD_createCCtx()) {}
ZstdCompressor::~ZstdCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

bool ZstdCompressor::compress(std::span<const std::byte> in, int level, ByteVector& out) {
  if (!cctx_) return false;
  out.resize(ZSTD_compressBound(in.size()));
  std::size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(cctx_), out.data(), out.size(),
                                    in.data(), in.size(), level);
  if (ZSTD_isError(n)) return false;
  out.resize(n);
  return true;
}

}  // namespace cerulion::recorder::detail
