// SPDX-License-Identifier: Apache-2.0
// Topic types in the store: the keeper appends one record per distinct type to the types area
// (never changing one), and anyone reads a channel's back, even after its topic is gone, so that a
// dump carries each topic's message encoding and schema.

#include <cstring>


#include "cerulion/core/detail/topic_type_bytes.hpp"
#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {

constexpr std::uint64_t kRecordPrefix = 8;  // u32 length, u32 crc

std::span<const std::byte> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

Result<TopicType> StoreImpl::type_at(std::uint64_t offset) const {
  const auto& h = header();
  const std::uint64_t length = std::min(h.types_length.load(std::memory_order_acquire), h.types_capacity);
  const std::byte* area = types_area();
  std::uint32_t size = 0, crc = 0;
  if (offset > length || length - offset < kRecordPrefix) {
    return Status(ErrorCode::Corrupted, path_ + ": a topic type lies past the types written (damaged)");
  }
  std::memcpy(&size, area + offset, sizeof size);
  std::memcpy(&crc, area + offset + 4, sizeof crc);
  if (length - offset - kRecordPrefix < size) {
    return Status(ErrorCode::Corrupted, path_ + ": a topic type runs past the types written (damaged)");
  }
  std::string body(reinterpret_cast<const char*>(area + offset + kRecordPrefix), size);
  if (stored_crc(bytes_of(body)) != crc) {
    return Status(ErrorCode::Corrupted, path_ + ": a topic type fails its checksum (damaged)");
  }
  auto type = cerulion::detail::decode_topic_type(body);
  if (!type) return Status(ErrorCode::Corrupted, path_ + ": a topic type does not read back (damaged)");
  return std::move(*type);
}

Result<std::optional<TopicType>> StoreImpl::channel_type(std::uint16_t id) const {
  const std::uint64_t ref = channel(id).type_ref.load(std::memory_order_acquire);
  if (ref == kTypeNotKept) return std::optional<TopicType>{};
  if (ref == 0) return std::optional<TopicType>(TopicType{});
  auto type = type_at(ref - 1);
  if (!type) return type.status();
  return std::optional<TopicType>(std::move(*type));
}

std::uint64_t StoreImpl::keep_type(const TopicType& type) {
  if (type.raw()) return 0;
  auto& h = header();
  const std::string body = cerulion::detail::encode_topic_type(type);
  // A type kept before (by this keeper or one before it) is shared.
  const std::uint64_t length = h.types_length.load(std::memory_order_relaxed);
  for (std::uint64_t at = 0; at + kRecordPrefix <= length;) {
    std::uint32_t size = 0;
    std::memcpy(&size, types_area() + at, sizeof size);
    if (size > length - at - kRecordPrefix) break;  // damaged: append after what reads
    if (size == body.size() && std::memcmp(types_area() + at + kRecordPrefix, body.data(), size) == 0) return at + 1;
    at += kRecordPrefix + size;
  }
  const std::uint64_t need = kRecordPrefix + body.size();
  if (need > h.types_capacity - length) return kTypeNotKept;
  if (const std::uint64_t reserved = h.types_reserved.load(); length + need > reserved) {
    const std::uint64_t want = std::min(h.types_capacity, round_to_page(length + need));
    if (!cerulion::detail::reserve(fd(), h.types_offset + reserved, want - reserved, path_)) return kTypeNotKept;
    h.types_reserved.store(want);
  }
  const auto size = static_cast<std::uint32_t>(body.size());
  const std::uint32_t crc = stored_crc(bytes_of(body));
  std::memcpy(types_area() + length, &size, sizeof size);
  std::memcpy(types_area() + length + 4, &crc, sizeof crc);
  std::memcpy(types_area() + length + kRecordPrefix, body.data(), body.size());
  h.types_length.store(length + need, std::memory_order_release);
  return length + 1;
}

}  // namespace cerulion::flashback::detail
