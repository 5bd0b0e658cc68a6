// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/message_record.hpp"

#include <cstring>

#include "wire.hpp"

namespace cerulion::recorder {

namespace {

// Offsets of the fixed fields in a record's content.
constexpr std::size_t kChannelAt = 0;
constexpr std::size_t kSequenceAt = 2;
constexpr std::size_t kLogTimeAt = 6;
constexpr std::size_t kPublishTimeAt = 14;

void store_le(std::byte* p, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

}  // namespace

void encode_message_record(std::span<std::byte> out, std::uint16_t channel_id, std::uint32_t sequence,
                           std::uint64_t log_time, std::uint64_t publish_time, std::span<const std::byte> data) {
  std::byte* p = out.data();
  store_le(p, static_cast<std::uint8_t>(Opcode::Message), 1);
  store_le(p + 1, kMessageFieldsSize + data.size(), 8);
  std::byte* content = p + kRecordPrefixSize;
  store_le(content + kChannelAt, channel_id, 2);
  store_le(content + kSequenceAt, sequence, 4);
  store_le(content + kLogTimeAt, log_time, 8);
  store_le(content + kPublishTimeAt, publish_time, 8);
  if (!data.empty()) std::memcpy(content + kMessageFieldsSize, data.data(), data.size());
}

void append_message_record(ByteVector& out, const MessageFields& f, std::span<const std::byte> data) {
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(message_record_size(data.size())));
  encode_message_record(std::span(out).subspan(at), f.channel_id, f.sequence, f.log_time, f.publish_time, data);
}

std::optional<MessageFields> decode_message_fields(std::span<const std::byte> content) noexcept {
  if (content.size() < kMessageFieldsSize) return std::nullopt;
  const std::byte* p = content.data();
  MessageFields f;
  f.channel_id = static_cast<std::uint16_t>(detail::load_le(p + kChannelAt, 2));
  f.sequence = static_cast<std::uint32_t>(detail::load_le(p + kSequenceAt, 4));
  f.log_time = detail::load_le(p + kLogTimeAt, 8);
  f.publish_time = detail::load_le(p + kPublishTimeAt, 8);
  return f;
}

std::optional<MessageRecordView> read_message_record(std::span<const std::byte> records) noexcept {
  if (records.size() < kRecordPrefixSize) return std::nullopt;
  if (static_cast<std::uint8_t>(records[0]) != static_cast<std::uint8_t>(Opcode::Message)) return std::nullopt;
  const std::uint64_t length = detail::load_le(records.data() + 1, 8);
  if (length < kMessageFieldsSize || length > records.size() - kRecordPrefixSize) return std::nullopt;
  auto content = records.subspan(kRecordPrefixSize, static_cast<std::size_t>(length));
  MessageRecordView view;
  view.fields = *decode_message_fields(content);
  view.data = content.subspan(kMessageFieldsSize);
  view.record_size = kRecordPrefixSize + length;
  return view;
}

}  // namespace cerulion::recorder
