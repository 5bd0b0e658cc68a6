// SPDX-License-Identifier: Apache-2.0
#include "cerulion/flashback/dump.hpp"

#include <ctime>
#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/recorder/chunk.hpp"
#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recorder/writer.hpp"
#include "dump_catch_up.hpp"
#include "store_impl.hpp"

#ifndef CERULION_FLASHBACK_VERSION
#define CERULION_FLASHBACK_VERSION "0"
#endif

namespace cerulion::flashback {

namespace {

// The type a channel's messages have: as the keeper kept it, or, when it did not fit the store, as
// the topic says if it is still there.
Result<TopicType> topic_type_of(const detail::StoreImpl& impl, const TopicStatus& channel, const std::string& domain) {
  auto kept = impl.channel_type(channel.channel_id);
  if (!kept) return kept.status();
  if (*kept) return std::move(**kept);
  if (auto info = inspect_topic(channel.topic, domain); info.ok()) return info->type;
  return TopicType{};
}

}  // namespace

std::string default_dump_file_name(std::string_view domain, std::string_view name, std::uint64_t realtime_ns) {
  const std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1'000'000'000ull);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &utc);
  return fmt::format("flashback-{}-{}-{}.{:03}Z.mcap", domain, name, stamp, (realtime_ns / 1'000'000ull) % 1000);
}

namespace {

Result<DumpSummary> dump_into(const Store& store, std::unique_ptr<recorder::ByteSink> sink, const DumpOptions& options,
                              const std::string& recorded_path) {
  auto& impl = detail::impl_of(store);
  DumpSummary summary;
  summary.path = sink ? sink->name() : "";
  recorder::WriterOptions writer_options;
  auto writer = recorder::Writer::create(std::move(sink), writer_options);
  if (!writer) return writer.status();
  auto fail = [&](Status st) -> Result<DumpSummary> {
    writer->abandon();
    return st;
  };

  // Where each channel's stored messages ended before the copy: where catching up from its ring
  // starts for a channel with nothing in the dump (anything stored after this is in the copy).
  std::map<std::uint16_t, std::uint64_t> next_before;
  const std::uint32_t channel_count = std::min(impl.header().channel_count.load(std::memory_order_acquire), impl.header().max_channels);
  for (std::uint16_t id = 0; id < channel_count; ++id) next_before[id] = impl.channel(id).next_sequence.load(std::memory_order_acquire);
  // The open chunk first: the chunks it follows are then all committed, and every channel its
  // messages use is registered (channels are registered before their first message).
  const detail::CopiedOpenChunk open = impl.copy_open_chunk();
  const auto status = store.status();
  std::map<std::uint16_t, const TopicStatus*> known;
  for (const auto& c : status.topics) known[c.channel_id] = &c;
  // A channel is written just before the first chunk with its messages: a topic with nothing in
  // the window (one gone long ago) is left out rather than shown with no messages.
  std::map<std::uint16_t, std::uint64_t> counts;  // the channels written, with their messages
  detail::LossTable losses;  // per channel: its lost counter at its first and last message written
  auto add_losses = [&](const detail::LossTable& table) {
    for (const auto& [id, loss] : table) {
      auto [it, fresh] = losses.try_emplace(id, loss);
      if (!fresh) {
        it->second.last_lost = loss.last_lost;
        it->second.last_sequence = loss.last_sequence;
      }
    }
  };
  recorder::profile::SchemaIds schema_ids;
  auto declare = [&](std::uint16_t id) -> Status {
    if (counts.count(id)) return {};
    auto it = known.find(id);
    if (it == known.end()) {
      return Status(ErrorCode::Corrupted, fmt::format("a chunk names channel {}, which the store never registered", id));
    }
    const TopicStatus& c = *it->second;
    if (c.name_damaged) {
      summary.skipped.push_back(fmt::format("the name of channel {}: damaged (failing its CRC); its messages are dumped on {}",
                                            id, c.topic));
    }
    auto type = topic_type_of(impl, c, status.domain);
    if (!type) {
      // Its messages are still worth more than their schema: kept, as raw bytes.
      if (type.code() != ErrorCode::Corrupted) return type.status();
      summary.skipped.push_back(fmt::format("the type of {}: {}; its messages are dumped as raw bytes", c.topic,
                                            type.message()));
      type = TopicType{};
    }
    const auto channel_type = recorder::profile::channel_type(*type);
    auto schema = recorder::profile::schema_id(*writer, schema_ids, channel_type.schema);
    if (!schema) return schema.status();
    recorder::Channel channel;
    channel.id = c.channel_id;
    channel.schema_id = *schema;
    channel.topic = c.topic;
    channel.message_encoding = channel_type.message_encoding;
    channel.metadata = recorder::profile::channel_metadata({status.domain, c.mode, c.depth, c.max_payload});
    if (auto st = writer->add_channel(channel); !st) return st;
    counts[id] = 0;
    return {};
  };
  const std::uint64_t cutoff =
      options.last_s > 0 ? realtime_ns() - static_cast<std::uint64_t>(options.last_s * 1e9) : 0;
  // A chunk that does not frame as one, or names a channel never registered, is damage (Corrupted):
  // left out. Anything else ends the dump.
  auto take = [&](std::span<const std::byte> encoded, std::uint64_t start, std::uint64_t end) -> Status {
    auto described = recorder::describe_chunk(encoded);
    if (!described) return described.status();
    for (const auto& [channel, where] : described->channels) {
      if (auto st = declare(channel); !st) return st;
    }
    if (auto st = writer->write_chunk(encoded); !st) return st;
    for (const auto& [channel, where] : described->channels) counts[channel] += where.second;
    summary.messages += described->message_count;
    ++summary.chunks;
    if (summary.window_start_ns == 0 || start < summary.window_start_ns) summary.window_start_ns = start;
    if (end > summary.window_end_ns) summary.window_end_ns = end;
    return {};
  };
  detail::CopiedChunk chunk;
  // The ring holds at most chunk_slots chunks, whatever damaged counters claim.
  std::uint64_t first = impl.header().tail.load();
  if (const std::uint64_t slots = impl.header().chunk_slots; open.generation - std::min(first, open.generation) > slots) {
    summary.skipped.push_back(fmt::format("chunks {} to {}: more than the store has slots for (its counters are damaged)",
                                          first, open.generation - slots - 1));
    first = open.generation - slots;
  }
  for (std::uint64_t n = first; n < open.generation; ++n) {
    if (!impl.copy_chunk(n, chunk)) {
      // Evicted before or while we copied it, or damaged: left out whole. Still committed and
      // not evicted afterwards, it was its bytes (or where the slot says they are) that failed.
      if (impl.slot(n).length.load() > 0) ++summary.chunks_left_out;
      if (impl.header().tail.load() <= n && impl.slot(n).end_ns.load() >= cutoff) {
        if (const std::string why = impl.why_left_out(n); !why.empty()) summary.skipped.push_back(fmt::format("chunk {}: {}", n, why));
      }
      continue;
    }
    if (chunk.end_ns < cutoff) continue;
    if (chunk.damaged_messages > 0) {
      summary.skipped.push_back(fmt::format("chunk {}: {} damaged message{} (failing {} CRC) left out when it was made", n,
                                            chunk.damaged_messages, chunk.damaged_messages == 1 ? "" : "s",
                                            chunk.damaged_messages == 1 ? "its" : "their"));
    }
    if (auto st = take(chunk.bytes, chunk.start_ns, chunk.end_ns); !st) {
      // A chunk that copied whole but does not frame as one: damage, not a torn copy.
      ++summary.chunks_left_out;
      if (st.code() != ErrorCode::Corrupted) return fail(st);
      summary.skipped.push_back(fmt::format("chunk {}: {}", n, st.message()));
    } else {
      add_losses(chunk.losses);
    }
  }
  std::vector<std::byte> records;
  detail::LossTable staged_losses;
  if (const auto read = detail::unstage(open.staged, cutoff, records, staged_losses); read.damage.any()) {
    // What read is kept; a staged message that fails its CRC is never passed on.
    summary.skipped.push_back("the newest messages (not yet compressed): " + read.damage.describe());
  }
  if (options.from_topics) {
    // What the keeper has not stored yet, from the topics' rings, after what it has: in the same
    // chunk as the open one, logged no earlier than anything before it.
    std::uint64_t newest = summary.window_end_ns;
    for (std::size_t at = 0; at < records.size();) {
      auto message = recorder::read_message_record(std::span(records).subspan(at));
      if (!message) break;
      newest = std::max(newest, message->fields.log_time);
      at += static_cast<std::size_t>(message->record_size);
    }
    std::vector<detail::CatchUpChannel> channels;
    for (const auto& c : status.topics) {
      detail::CatchUpChannel from{c.channel_id, c.topic, std::nullopt, 0};
      const detail::ChannelLoss* stored = nullptr;  // its newest message in the dump
      if (auto it = staged_losses.find(c.channel_id); it != staged_losses.end()) {
        stored = &it->second;
      } else if (auto older = losses.find(c.channel_id); older != losses.end()) {
        stored = &older->second;
      }
      if (stored) {
        from.next_sequence = stored->last_sequence + 1;
        from.lost = stored->last_lost;
      } else if (const std::uint64_t next = next_before[c.channel_id]; next != 0) {
        from.next_sequence = static_cast<std::uint32_t>(next);
      }
      channels.push_back(std::move(from));
    }
    summary.from_topics = detail::catch_up(channels, status.domain, cutoff, newest, records, staged_losses);
  }
  if (!records.empty()) {
    recorder::ChunkEncoder encoder;
    std::vector<std::byte> encoded;
    if (auto st = encoder.encode(records, encoded); !st) {
      ++summary.chunks_left_out;
      summary.skipped.push_back("the newest messages (not yet compressed): " + st.message());
    } else {
      auto described = recorder::describe_chunk(encoded);
      if (!described) return fail(described.status());
      if (auto st = take(encoded, described->message_start_time, described->message_end_time); !st) {
        ++summary.chunks_left_out;
        if (st.code() != ErrorCode::Corrupted) return fail(st);
        summary.skipped.push_back("the newest messages (not yet compressed): " + st.message());
      } else {
        add_losses(staged_losses);
      }
    }
  }

  recorder::profile::FlashbackSummary md;
  md.trigger = options.trigger;
  md.details = options.details;
  md.note = options.note;
  md.domain = status.domain;
  md.name = status.name;
  md.keeper_pid = status.keeper_pid;
  md.window_start_ns = summary.window_start_ns;
  md.window_end_ns = summary.window_end_ns;
  for (const auto& c : status.topics) {
    auto it = counts.find(c.channel_id);
    if (it == counts.end()) continue;
    // Lost between its first and last message here, as the keeper counted them when it knew: the
    // gaps in the dump's sequences, never losses from before its window.
    const auto loss = losses.find(c.channel_id);
    const std::uint64_t lost = loss == losses.end() ? 0 : loss->second.last_lost - std::min(loss->second.last_lost, loss->second.first_lost);
    recorder::profile::TopicCount count{c.topic, it->second, lost};
    md.topics.push_back(count);
    summary.topics.push_back(std::move(count));
  }
  auto metadata = recorder::profile::flashback_metadata(md);
  // What damage left out, for whoever reads the dump later.
  if (!summary.skipped.empty()) {
    std::string& skipped = metadata.metadata["skipped"];
    for (const auto& line : summary.skipped) skipped += (skipped.empty() ? "" : "; ") + line;
  }
  if (auto st = writer->write_metadata(metadata); !st) return fail(st);
  if (auto st = writer->close(); !st) return st;
  summary.file_bytes = writer->counters().file_bytes;
  impl.record_dump({recorded_path.empty() ? summary.path : recorded_path, options.trigger, realtime_ns(), summary.messages});
  return summary;
}

}  // namespace

Result<DumpSummary> dump(const Store& store, std::unique_ptr<recorder::ByteSink> sink, const DumpOptions& options) {
  return dump_into(store, std::move(sink), options, {});
}

Result<DumpSummary> dump_to_file(const Store& store, const std::string& path, const DumpOptions& options) {
  auto sink = recorder::open_file_sink(path, {.overwrite = false, .appear_on_close = true});
  if (!sink) return sink.status();
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  return dump_into(store, std::move(*sink), options, ec ? path : absolute.lexically_normal().string());
}

}  // namespace cerulion::flashback
