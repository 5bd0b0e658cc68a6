// SPDX-License-Identifier: Apache-2.0
#pragma once
// Protobuf FileDescriptorSets built byte by byte (protobuf's wire format, descriptor.proto's field
// numbers), so that tests need neither protoc nor libprotobuf. imu_descriptor_set() is also checked
// in as tests/cli/data/imu.desc (a test compares the two).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cerulion::test::pb {

inline std::string varint(std::uint64_t value) {
  std::string out;
  do {
    const auto low = static_cast<char>(value & 0x7f);
    value >>= 7;
    out += static_cast<char>(low | (value != 0 ? 0x80 : 0));
  } while (value != 0);
  return out;
}

/// A length-delimited field (wire type 2).
inline std::string field(std::uint32_t number, std::string_view contents) {
  return varint((std::uint64_t{number} << 3) | 2) + varint(contents.size()) + std::string(contents);
}

/// A DescriptorProto: name = 1, nested_type = 3.
inline std::string message_type(std::string_view name, const std::vector<std::string>& nested = {}) {
  std::string out = field(1, name);
  for (const auto& n : nested) out += field(3, n);
  return out;
}

/// A FileDescriptorProto: name = 1, package = 2, dependency = 3, message_type = 4, and syntax = 12
/// ("proto3"), a field the reader skips.
inline std::string file(std::string_view name, std::string_view package, const std::vector<std::string>& messages,
                        const std::vector<std::string>& dependencies = {}) {
  std::string out = field(1, name);
  if (!package.empty()) out += field(2, package);
  for (const auto& d : dependencies) out += field(3, d);
  for (const auto& m : messages) out += field(4, m);
  return out + field(12, "proto3");
}

/// A FileDescriptorSet: file = 1.
inline std::string set(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += field(1, f);
  return out;
}

/// imu.proto, package fb: message Imu { message Covariance {} }.
inline std::string imu_descriptor_set() {
  return set({file("imu.proto", "fb", {message_type("Imu", {message_type("Covariance")})})});
}

}  // namespace cerulion::test::pb
