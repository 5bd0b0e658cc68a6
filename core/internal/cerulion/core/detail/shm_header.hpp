// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API, and not installed: the header every binary object in /dev/shm begins with (a
// magic, a layout version and the header's size) and the checksum over its fixed part, checked
// one way for every kind (shm_file.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cerulion/core/status.hpp"

namespace cerulion::detail {

/// FNV-1a, 32 bits: the checksum of what an object keeps immutable (a header's fixed fields, a
/// topic's declared type), and a stable hash of a name.
inline std::uint32_t fnv1a(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint32_t hash = 2166136261u;
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 16777619u;
  return hash;
}
inline std::uint32_t fnv1a(std::string_view bytes) { return fnv1a(bytes.data(), bytes.size()); }

/// The first 16 bytes of every binary object's header.
struct ShmStamp {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;  ///< the size of the kind's header
};
static_assert(sizeof(ShmStamp) == 16);

/// What a kind's header must say, and where its checksum lies: a u32 at `checksum_offset`, the
/// FNV-1a of every byte before it.
struct HeaderRule {
  std::string_view magic;  ///< 8 characters
  std::uint32_t version;   ///< bumped whenever the kind's layout changes
  std::uint32_t header_bytes;
  std::size_t checksum_offset;
  std::string_view noun;   ///< "not a <noun> (bad magic)"
};

/// The stamp of a new header of `rule`.
ShmStamp make_stamp(const HeaderRule& rule);

/// The checksum of `header` (at least rule.checksum_offset bytes) under `rule`.
std::uint32_t header_checksum(const void* header, const HeaderRule& rule);

/// Ok when `header` (a copy of an object's first rule.header_bytes bytes, never a mapping another
/// process may change meanwhile) has the kind's magic, version, size and checksum; otherwise
/// Corrupted, "<what>: " and which of them is wrong.
Status check_header(const void* header, const HeaderRule& rule, std::string_view what);

}  // namespace cerulion::detail
