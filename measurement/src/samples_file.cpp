// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/samples_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cerulion::measurement {

Status write_samples_le_u64(const std::string& path, const std::vector<std::uint64_t>& samples_ns) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return {ErrorCode::SystemError, std::strerror(errno)};
  bool ok = true;
  for (std::uint64_t v : samples_ns) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    ok &= std::fwrite(b, 1, 8, f) == 8;
  }
  const int saved = errno;
  ok &= std::fclose(f) == 0;
  if (!ok) return {ErrorCode::SystemError, std::strerror(errno != 0 ? errno : saved)};
  return {};
}

Result<std::vector<std::uint64_t>> read_samples_le_u64(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return {errno == ENOENT ? ErrorCode::NotFound : ErrorCode::SystemError, std::strerror(errno)};
  std::vector<std::uint64_t> out;
  unsigned char b[8];
  std::size_t n = 0;
  while ((n = std::fread(b, 1, 8, f)) == 8) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t(b[i]) << (8 * i);
    out.push_back(v);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return {ErrorCode::SystemError, "read error"};
  if (n != 0) return {ErrorCode::Corrupted, "length is not a multiple of 8 bytes"};
  return out;
}

}  // namespace cerulion::measurement
