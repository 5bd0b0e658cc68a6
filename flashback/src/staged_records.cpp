// SPDX-License-Identifier: Apache-2.0
// The records of the staging area and the loss tables of chunks (store_layout.hpp): written by the
// tap and the compressing thread, read back by them, by dumps, and by a keeper taking over.

#include <cstring>

#include <fmt/core.h>

#include "store_impl.hpp"

namespace cerulion::flashback::detail {

namespace {

constexpr std::uint64_t kLossEntrySize = 32;

// A staged record at the start of `bytes`: its parts when it frames as one, and whether its CRC
// checks. nullopt: it does not even frame (too short, or no Message record after the prefix).
struct StagedRecord {
  std::uint64_t lost = 0;
  recorder::MessageRecordView message;
  std::uint64_t size = 0;  // prefix included
  bool sound = false;
};

std::optional<StagedRecord> frame_staged(std::span<const std::byte> bytes) {
  if (bytes.size() < kStagedPrefix) return std::nullopt;
  auto message = recorder::read_message_record(bytes.subspan(kStagedPrefix));
  if (!message) return std::nullopt;
  StagedRecord out;
  out.message = *message;
  out.size = kStagedPrefix + message->record_size;
  std::uint32_t crc = 0;
  std::memcpy(&crc, bytes.data(), sizeof crc);
  std::memcpy(&out.lost, bytes.data() + 8, sizeof out.lost);
  out.sound = stored_crc(bytes.subspan(kStagedCrcFrom, out.size - kStagedCrcFrom)) == crc;
  return out;
}

}  // namespace

std::string StagedDamage::describe() const {
  std::string out;
  if (messages > 0) {
    out = fmt::format("{} damaged message{} (failing {} CRC) left out", messages, messages == 1 ? "" : "s",
                      messages == 1 ? "its" : "their");
  }
  if (unreadable_bytes > 0) {
    out += fmt::format("{}the last {} bytes do not read as messages: left out", out.empty() ? "" : "; ", unreadable_bytes);
  }
  return out;
}

Unstaged unstage(std::span<const std::byte> staged, std::uint64_t cutoff, std::vector<std::byte>& records,
                 LossTable& losses) {
  Unstaged out;
  std::uint64_t newest = 0;  // staged log times never decrease: an older one is a stale record
  std::size_t at = 0;
  while (at < staged.size()) {
    auto record = frame_staged(staged.subspan(at));
    if (record && record->sound && record->message.fields.log_time < newest) record.reset();
    if (record && !record->sound) {
      // Left out alone when the next one is sound where this one says it ends (so its length, at
      // least, was right); otherwise nothing after it can be trusted.
      const std::size_t next = at + static_cast<std::size_t>(record->size);
      auto after = next < staged.size() ? frame_staged(staged.subspan(next)) : std::nullopt;
      if (next == staged.size() || (after && after->sound)) {
        ++out.damage.messages;
        at = next;
        continue;
      }
      record.reset();
    }
    if (!record) {
      out.damage.unreadable_bytes = staged.size() - at;
      break;
    }
    const auto& fields = record->message.fields;
    newest = fields.log_time;
    if (fields.log_time >= cutoff) {
      const auto* message = staged.data() + at + kStagedPrefix;
      records.insert(records.end(), message, message + record->message.record_size);
      auto [it, fresh] = losses.try_emplace(fields.channel_id);
      if (fresh) it->second.first_lost = record->lost;
      it->second.last_lost = record->lost;
      it->second.last_sequence = fields.sequence;
      ++it->second.messages;
      if (out.messages++ == 0) out.start_ns = fields.log_time;
      out.end_ns = fields.log_time;
    }
    at += static_cast<std::size_t>(record->size);
  }
  return out;
}

void append_loss_table(const LossTable& losses, std::vector<std::byte>& out) {
  const auto count = static_cast<std::uint32_t>(losses.size());
  const std::size_t at = out.size();
  out.resize(at + 8 + losses.size() * kLossEntrySize);
  std::byte* p = out.data() + at;
  std::memset(p, 0, 8 + losses.size() * kLossEntrySize);
  std::memcpy(p, &count, sizeof count);
  p += 8;
  for (const auto& [channel, loss] : losses) {
    const auto messages = static_cast<std::uint32_t>(loss.messages);
    std::memcpy(p, &channel, sizeof channel);
    std::memcpy(p + 4, &messages, sizeof messages);
    std::memcpy(p + 8, &loss.first_lost, 8);
    std::memcpy(p + 16, &loss.last_lost, 8);
    std::memcpy(p + 24, &loss.last_sequence, 4);
    p += kLossEntrySize;
  }
}

std::optional<LossTable> read_loss_table(std::span<const std::byte> bytes) {
  std::uint32_t count = 0;
  if (bytes.size() < 8) return std::nullopt;
  std::memcpy(&count, bytes.data(), sizeof count);
  if ((bytes.size() - 8) / kLossEntrySize != count || (bytes.size() - 8) % kLossEntrySize != 0) return std::nullopt;
  LossTable out;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::byte* p = bytes.data() + 8 + i * kLossEntrySize;
    std::uint16_t channel = 0;
    std::uint32_t messages = 0;
    ChannelLoss loss;
    std::memcpy(&channel, p, sizeof channel);
    std::memcpy(&messages, p + 4, sizeof messages);
    std::memcpy(&loss.first_lost, p + 8, 8);
    std::memcpy(&loss.last_lost, p + 16, 8);
    std::memcpy(&loss.last_sequence, p + 24, 4);
    loss.messages = messages;
    out[channel] = loss;
  }
  return out;
}

void write_staged(std::span<std::byte> out, std::uint64_t lost, std::uint32_t payload_crc,
                  const recorder::MessageFields& fields, std::span<const std::byte> data) {
  std::byte* p = out.data();
  std::memset(p, 0, kStagedPrefix);
  std::memcpy(p + 8, &lost, sizeof lost);
  recorder::encode_message_record(out.subspan(kStagedPrefix), fields.channel_id, fields.sequence, fields.log_time,
                                  fields.publish_time, data);
  const std::uint64_t head = out.size() - kStagedCrcFrom - data.size();
  const std::uint32_t crc =
      stored_crc_combined(stored_crc(std::span<const std::byte>(p + kStagedCrcFrom, head)), payload_crc, data.size());
  std::memcpy(p, &crc, sizeof crc);
}

}  // namespace cerulion::flashback::detail
