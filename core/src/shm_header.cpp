// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/detail/shm_header.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace cerulion::detail {

ShmStamp make_stamp(const HeaderRule& rule) {
  ShmStamp stamp{};
  std::memcpy(stamp.magic, rule.magic.data(), std::min(rule.magic.size(), sizeof stamp.magic));
  stamp.version = rule.version;
  stamp.header_bytes = rule.header_bytes;
  return stamp;
}

std::uint32_t header_checksum(const void* header, const HeaderRule& rule) {
  return fnv1a(header, rule.checksum_offset);
}

Status check_header(const void* header, const HeaderRule& rule, std::string_view what) {
  auto bad = [&](const std::string& why) { return Status(ErrorCode::Corrupted, std::string(what) + ": " + why); };
  ShmStamp found{};
  std::memcpy(&found, header, sizeof found);
  const ShmStamp expected = make_stamp(rule);
  if (std::memcmp(found.magic, expected.magic, sizeof found.magic) != 0) {
    return bad("not a " + std::string(rule.noun) + " (bad magic)");
  }
  if (found.version != expected.version) {
    return bad("layout version " + std::to_string(found.version) + ", this build reads version " +
               std::to_string(expected.version) + " (mixed cerulion versions?)");
  }
  if (found.header_bytes != expected.header_bytes) return bad("header size mismatch");
  std::uint32_t checksum = 0;
  std::memcpy(&checksum, static_cast<const char*>(header) + rule.checksum_offset, sizeof checksum);
  if (checksum != header_checksum(header, rule)) return bad("header checksum mismatch (corrupted segment)");
  return Status::success();
}

}  // namespace cerulion::detail
