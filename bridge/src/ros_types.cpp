// SPDX-License-Identifier: Apache-2.0
// ROS 2's names and the CDR of std_msgs/String and std_msgs/UInt8MultiArray, written by hand
// (fastddsgen is not in Debian). CDR aligns each primitive to its size, counted from the byte
// after the 4-byte encapsulation header.

#include "cerulion/bridge/ros_types.hpp"

#include <cstring>

namespace cerulion::bridge {
namespace {

constexpr std::string_view kStringType = "std_msgs::msg::dds_::String_";
constexpr std::string_view kByteArrayType = "std_msgs::msg::dds_::UInt8MultiArray_";
constexpr std::size_t kHeader = 4;

void put_u32(std::byte* at, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

/// Reads CDR primitives from a message body, in the byte order of its encapsulation header.
class Reader {
 public:
  Reader(std::span<const std::byte> body, bool little) : body_(body), little_(little) {}
  bool u32(std::uint32_t& v) noexcept {
    pos_ = (pos_ + 3) & ~std::size_t{3};
    if (pos_ + 4 > body_.size()) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const auto b = static_cast<std::uint32_t>(body_[pos_ + i]);
      v |= little_ ? b << (8 * i) : b << (8 * (3 - i));
    }
    pos_ += 4;
    return true;
  }
  bool bytes(std::uint32_t n, std::span<const std::byte>& out) noexcept {
    if (n > body_.size() - pos_) return false;
    out = body_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  std::span<const std::byte> body_;
  bool little_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string_view dds_type_name(WireType type) noexcept {
  switch (type) {
    case WireType::String: return kStringType;
    case WireType::ByteArray: return kByteArrayType;
    case WireType::Cdr: break;
  }
  return {};
}

std::optional<WireType> wire_type_of(std::string_view name) noexcept {
  if (name == kStringType) return WireType::String;
  if (name == kByteArrayType) return WireType::ByteArray;
  return std::nullopt;
}

WireType wire_type_for(const TopicType& type) noexcept {
  return type.message_encoding == "json" ? WireType::String : WireType::ByteArray;
}

std::string dds_topic_name(std::string_view topic) {
  std::string out = "rt";
  if (topic.empty() || topic.front() != '/') out += '/';
  out += topic;
  return out;
}

std::optional<std::string> local_topic_name(std::string_view dds_topic) {
  if (!dds_topic.starts_with("rt/") || dds_topic.size() <= 3) return std::nullopt;
  return std::string(dds_topic.substr(2));
}

std::size_t cdr_size(WireType type, std::size_t payload) noexcept {
  // String: length, characters, NUL. UInt8MultiArray: dim count (0), data_offset, length, data.
  if (type == WireType::Cdr) return payload;
  return type == WireType::String ? kHeader + 4 + payload + 1 : kHeader + 12 + payload;
}

void write_cdr(WireType type, std::span<const std::byte> payload, std::byte* out) noexcept {
  if (type == WireType::Cdr) {
    if (!payload.empty()) std::memcpy(out, payload.data(), payload.size());
    return;
  }
  static constexpr std::byte kCdrLe[4] = {std::byte{0x00}, std::byte{0x01}, std::byte{0x00}, std::byte{0x00}};
  std::memcpy(out, kCdrLe, kHeader);
  std::byte* at = out + kHeader;
  const auto n = static_cast<std::uint32_t>(payload.size());
  if (type == WireType::String) {
    put_u32(at, n + 1);  // a CDR string's length counts its NUL
    if (n) std::memcpy(at + 4, payload.data(), n);
    at[4 + n] = std::byte{0};
    return;
  }
  put_u32(at, 0);      // layout.dim: no dimensions
  put_u32(at + 4, 0);  // layout.data_offset
  put_u32(at + 8, n);  // data
  if (n) std::memcpy(at + 12, payload.data(), n);
}

std::optional<std::span<const std::byte>> read_cdr(WireType type, std::span<const std::byte> message) noexcept {
  if (message.size() < kHeader || message[0] != std::byte{0x00}) return std::nullopt;
  // 0x00 CDR big-endian, 0x01 little-endian (PL_CDR and XCDR2 are not what ROS 2 Humble sends).
  const auto kind = static_cast<unsigned>(message[1]);
  if (type == WireType::Cdr) {
    if (kind > 1 && kind != 6 && kind != 7) return std::nullopt;
    return message;
  }
  if (kind > 1) return std::nullopt;
  Reader in(message.subspan(kHeader), kind == 1);
  std::uint32_t n = 0;
  std::span<const std::byte> out;
  if (type == WireType::String) {
    if (!in.u32(n) || n == 0 || !in.bytes(n, out)) return std::nullopt;
    return out.first(n - 1);  // without the NUL
  }
  std::uint32_t dims = 0;
  if (!in.u32(dims)) return std::nullopt;
  for (std::uint32_t i = 0; i < dims; ++i) {
    std::uint32_t label = 0, size = 0, stride = 0;
    std::span<const std::byte> skipped;
    if (!in.u32(label) || !in.bytes(label, skipped) || !in.u32(size) || !in.u32(stride)) return std::nullopt;
  }
  std::uint32_t offset = 0;
  if (!in.u32(offset) || !in.u32(n) || !in.bytes(n, out)) return std::nullopt;
  return out;
}

}  // namespace cerulion::bridge
