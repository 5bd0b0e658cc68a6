// SPDX-License-Identifier: Apache-2.0
#include "cerulion/flashback/dump.hpp"

#include <ctime>
#include <filesystem>
#include <map>
#include <set>

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


std::string default_dump_file_name(std::string_view domain, std::string_view name, std::uint64_t realtime_ns) {
  const std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1'000'000'000ull);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &utc);
  return fmt::format("flashback-{}-{}-{}.{:03}Z.mcap", domain, name, stamp, (realtime_ns / 1'000'000ull) % 1000);
}

namespace {

// One dump, step by step: the rings as they are at the request first (a fast topic's ring holds
// milliseconds), then the store (its chunks, then what is staged), then from the rings what the
// store lacks, then the counts.
class DumpWriter {
 public:
  DumpWriter(const Store& store, recorder::Writer& writer, const DumpOptions& options)
      : store_(store), impl_(detail::impl_of(store)), writer_(writer), options_(options),
        cutoff_(options.last_s > 0 ? realtime_ns() - static_cast<std::uint64_t>(options.last_s * 1e9) : 0) {}

  /// Copies the rings of the topics the keeper takes: those it registered, and those of its
  /// selection it has not (yet) attached.
  void copy_rings() {
    const auto status = store_.status();
    const std::string& domain = status.domain;
    std::set<std::string> topics;
    for (const auto& c : status.topics) topics.insert(c.topic);
    const auto settings = impl_.keeper_settings();
    if (settings.selection) {
      if (auto matcher = recording::TopicMatcher::compile(*settings.selection); matcher.ok()) {
        if (auto listing = list_topics(domain); listing.ok()) {
          for (const auto& t : listing->topics) {
            if (!matcher->matches(t.name) || topics.count(t.name)) continue;
            topics.insert(t.name);
            unregistered_.push_back(t);
          }
        }
      }
    }
    rings_ = detail::copy_rings(std::vector<std::string>(topics.begin(), topics.end()), domain);
  }

  /// Where each channel's stored messages ended before the store is copied: where catching up from
  /// its ring starts for a channel with nothing in the dump (anything stored after is in the copy).
  void note_store_ends() {
    const std::uint32_t count = std::min(impl_.header().channel_count.load(std::memory_order_acquire), impl_.header().max_channels);
    for (std::uint16_t id = 0; id < count; ++id) {
      const auto counts = impl_.channel_counts(id);
      store_end_[id] = {impl_.channel(id).next_sequence.load(std::memory_order_acquire), counts.lost};
    }
  }

  /// The closed chunks, then what is staged (kept in records_ for the last chunk).
  Status copy_store() {
    // The open chunk first: the chunks it follows are then all committed, and every channel its
    // messages use is registered (channels are registered before their first message).
    const detail::CopiedOpenChunk open = impl_.copy_open_chunk();
    status_ = store_.status();
    for (const auto& c : status_.topics) known_[c.channel_id] = c;
    // The ring holds at most chunk_slots chunks, whatever damaged counters claim.
    std::uint64_t first = impl_.header().tail.load();
    if (const std::uint64_t slots = impl_.header().chunk_slots; open.generation - std::min(first, open.generation) > slots) {
      summary_.skipped.push_back(fmt::format("chunks {} to {}: more than the store has slots for (its counters are damaged)",
                                             first, open.generation - slots - 1));
      first = open.generation - slots;
    }
    for (std::uint64_t n = first; n < open.generation; ++n) {
      if (auto st = copy_chunk(n); !st) return st;
    }
    if (const auto read = detail::unstage(open.staged, cutoff_, records_, newest_losses_); read.damage.any()) {
      // What read is kept; a staged message that fails its CRC is never passed on.
      summary_.skipped.push_back("the newest messages (not yet compressed): " + read.damage.describe());
    }
    return {};
  }

  /// From the rings copied at the request, what the store does not hold, after what it does.
  void catch_up() {
    // In the same chunk as the staged messages, logged no earlier than anything before it.
    std::uint64_t newest = summary_.window_end_ns;
    for (std::size_t at = 0; at < records_.size();) {
      auto message = recorder::read_message_record(std::span(records_).subspan(at));
      if (!message) break;
      newest = std::max(newest, message->fields.log_time);
      at += static_cast<std::size_t>(message->record_size);
    }
    std::vector<detail::CatchUpChannel> channels;
    for (const auto& [id, c] : known_) {
      detail::CatchUpChannel from{id, c.topic, std::nullopt, 0};
      const detail::ChannelLoss* stored = nullptr;  // its newest message in the dump
      if (auto it = newest_losses_.find(id); it != newest_losses_.end()) {
        stored = &it->second;
      } else if (auto older = losses_.find(id); older != losses_.end()) {
        stored = &older->second;
      }
      if (stored) {
        from.next_sequence = stored->last_sequence + 1;
        from.lost = stored->last_lost;
      } else if (auto end = store_end_.find(id); end != store_end_.end() && end->second.first != 0) {
        from.next_sequence = static_cast<std::uint32_t>(end->second.first);
        from.lost = end->second.second;
      }
      channels.push_back(std::move(from));
    }
    // A topic of the keeper's selection it never attached: a channel of the dump's own. Every
    // sequence of it is accounted for when it was made after the keeper started (before that,
    // the keeper was not there to miss anything).
    const std::uint64_t keeper_started = impl_.header().keeper_started_realtime_ns.load();
    std::uint32_t next_id = impl_.header().max_channels;
    for (const auto& t : unregistered_) {
      if (next_id > 0xffff) break;
      const auto id = static_cast<std::uint16_t>(next_id++);
      TopicStatus c;
      c.topic = t.name;
      c.channel_id = id;
      c.mode = to_string(t.mode);
      c.depth = t.depth;
      c.max_payload = t.max_payload;
      known_[id] = c;
      unregistered_types_[id] = t.type;
      detail::CatchUpChannel from{id, t.name, std::nullopt, 0};
      if (keeper_started != 0 && t.created_realtime_ns >= keeper_started) from.next_sequence = 0;
      channels.push_back(std::move(from));
    }
    summary_.from_topics = detail::catch_up(channels, rings_, cutoff_, newest, records_, newest_losses_);
  }

  /// The staged and caught-up messages as the last chunk.
  Status write_newest() {
    if (!records_.empty()) {
      recorder::ChunkEncoder encoder;
      std::vector<std::byte> encoded;
      if (auto st = encoder.encode(records_, encoded); !st) {
        ++summary_.chunks_left_out;
        summary_.skipped.push_back("the newest messages (not yet compressed): " + st.message());
        return {};
      }
      auto described = recorder::describe_chunk(encoded);
      if (!described) return described.status();
      if (auto st = take(encoded, described->message_start_time, described->message_end_time); !st) {
        ++summary_.chunks_left_out;
        if (st.code() != ErrorCode::Corrupted) return st;
        summary_.skipped.push_back("the newest messages (not yet compressed): " + st.message());
        return {};
      }
    }
    add_losses(newest_losses_);
    add_unread_topics();
    // A channel with losses and no message here (its ring emptied before anyone read it) is shown.
    for (const auto& [id, loss] : losses_) {
      if (auto st = declare(id); !st && st.code() != ErrorCode::Corrupted) return st;
    }
    return {};
  }

  /// The metadata, and the summary of what was written.
  Status finish(const std::string& recorded_path) {
    recorder::profile::FlashbackSummary md;
    md.trigger = options_.trigger;
    md.details = options_.details;
    md.note = options_.note;
    md.domain = status_.domain;
    md.name = status_.name;
    md.keeper_pid = status_.keeper_pid;
    md.window_start_ns = summary_.window_start_ns;
    md.window_end_ns = summary_.window_end_ns;
    for (const auto& [id, c] : known_) {
      auto it = counts_.find(id);
      if (it == counts_.end()) continue;
      recorder::profile::TopicCount count{c.topic, it->second, lost_of(id)};
      md.topics.push_back(count);
      summary_.topics.push_back(std::move(count));
    }
    auto metadata = recorder::profile::flashback_metadata(md);
    // What damage left out, for whoever reads the dump later.
    if (!summary_.skipped.empty()) {
      std::string& skipped = metadata.metadata["skipped"];
      for (const auto& line : summary_.skipped) skipped += (skipped.empty() ? "" : "; ") + line;
    }
    if (auto st = writer_.write_metadata(metadata); !st) return st;
    if (auto st = writer_.close(); !st) return st;
    summary_.file_bytes = writer_.counters().file_bytes;
    impl_.record_dump({recorded_path.empty() ? summary_.path : recorded_path, options_.trigger, realtime_ns(), summary_.messages});
    return {};
  }

  DumpSummary summary_;

 private:
  // Lost on a channel within the dump: since its newest message evicted from the store (so that a
  // dump of everything held and status agree), or, for a dump of the last seconds only, between
  // its first and last message here.
  std::uint64_t lost_of(std::uint16_t id) const {
    const auto loss = losses_.find(id);
    if (loss == losses_.end()) return 0;
    std::uint64_t base = loss->second.first_lost;
    if (cutoff_ == 0) {
      const std::uint64_t evicted = id < impl_.header().max_channels ? impl_.channel(id).lost_evicted.load() : 0;
      base = std::min(base, evicted);
    }
    return loss->second.last_lost - std::min(loss->second.last_lost, base);
  }

  // A topic that came and went before the keeper's taps could open it has a channel that never
  // had a message, its loss counted at its removal: in a dump whose window holds that moment.
  void add_unread_topics() {
    const std::uint64_t now = realtime_ns();
    const std::uint64_t from = cutoff_ != 0 ? cutoff_ : now - std::min(now, impl_.header().window_ns.load());
    for (const auto& [id, c] : known_) {
      if (c.messages != 0 || c.lost == 0 || losses_.count(id) || c.last_realtime_ns < from) continue;
      losses_[id] = detail::ChannelLoss{0, 0, c.lost, 0};
    }
  }

  void add_losses(const detail::LossTable& table) {
    for (const auto& [id, loss] : table) {
      auto [it, fresh] = losses_.try_emplace(id, loss);
      if (!fresh) {
        it->second.last_lost = loss.last_lost;
        it->second.last_sequence = loss.last_sequence;
        it->second.messages += loss.messages;
      }
    }
  }

  // The type a channel's messages have: as the keeper kept it, or, when it did not fit the store
  // (or the keeper never attached the topic), as the topic says if it is still there.
  Result<TopicType> type_of(const TopicStatus& channel) const {
    if (auto it = unregistered_types_.find(channel.channel_id); it != unregistered_types_.end()) return it->second;
    auto kept = impl_.channel_type(channel.channel_id);
    if (!kept) return kept.status();
    if (*kept) return std::move(**kept);
    if (auto info = inspect_topic(channel.topic, status_.domain); info.ok()) return info->type;
    return TopicType{};
  }

  // A channel is written just before the first chunk with its messages: a topic with nothing in
  // the window (one gone long ago) is left out rather than shown with no messages.
  Status declare(std::uint16_t id) {
    if (counts_.count(id)) return {};
    auto it = known_.find(id);
    if (it == known_.end()) {
      return Status(ErrorCode::Corrupted, fmt::format("a chunk names channel {}, which the store never registered", id));
    }
    const TopicStatus& c = it->second;
    if (c.name_damaged) {
      summary_.skipped.push_back(fmt::format("the name of channel {}: damaged (failing its CRC); its messages are dumped on {}",
                                             id, c.topic));
    }
    auto type = type_of(c);
    if (!type) {
      // Its messages are still worth more than their schema: kept, as raw bytes.
      if (type.code() != ErrorCode::Corrupted) return type.status();
      summary_.skipped.push_back(fmt::format("the type of {}: {}; its messages are dumped as raw bytes", c.topic,
                                             type.message()));
      type = TopicType{};
    }
    const auto channel_type = recorder::profile::channel_type(*type);
    auto schema = recorder::profile::schema_id(writer_, schema_ids_, channel_type.schema);
    if (!schema) return schema.status();
    recorder::Channel channel;
    channel.id = c.channel_id;
    channel.schema_id = *schema;
    channel.topic = c.topic;
    channel.message_encoding = channel_type.message_encoding;
    channel.metadata = recorder::profile::channel_metadata({status_.domain, c.mode, c.depth, c.max_payload});
    if (auto st = writer_.add_channel(channel); !st) return st;
    counts_[id] = 0;
    return {};
  }

  // A chunk that does not frame as one, or names a channel never registered, is damage (Corrupted):
  // left out. Anything else ends the dump.
  Status take(std::span<const std::byte> encoded, std::uint64_t start, std::uint64_t end) {
    auto described = recorder::describe_chunk(encoded);
    if (!described) return described.status();
    for (const auto& [channel, where] : described->channels) {
      if (auto st = declare(channel); !st) return st;
    }
    if (auto st = writer_.write_chunk(encoded); !st) return st;
    for (const auto& [channel, where] : described->channels) counts_[channel] += where.second;
    summary_.messages += described->message_count;
    ++summary_.chunks;
    if (summary_.window_start_ns == 0 || start < summary_.window_start_ns) summary_.window_start_ns = start;
    if (end > summary_.window_end_ns) summary_.window_end_ns = end;
    return {};
  }

  Status copy_chunk(std::uint64_t n) {
    if (!impl_.copy_chunk(n, chunk_)) {
      // Evicted before or while we copied it, or damaged: left out whole. Still committed and
      // not evicted afterwards, it was its bytes (or where the slot says they are) that failed.
      if (impl_.slot(n).length.load() > 0) ++summary_.chunks_left_out;
      if (impl_.header().tail.load() <= n && impl_.slot(n).end_ns.load() >= cutoff_) {
        if (const std::string why = impl_.why_left_out(n); !why.empty()) summary_.skipped.push_back(fmt::format("chunk {}: {}", n, why));
      }
      return {};
    }
    if (chunk_.end_ns < cutoff_) return {};
    if (chunk_.damaged_messages > 0) {
      summary_.skipped.push_back(fmt::format("chunk {}: {} damaged message{} (failing {} CRC) left out when it was made", n,
                                             chunk_.damaged_messages, chunk_.damaged_messages == 1 ? "" : "s",
                                             chunk_.damaged_messages == 1 ? "its" : "their"));
    }
    if (auto st = take(chunk_.bytes, chunk_.start_ns, chunk_.end_ns); !st) {
      // A chunk that copied whole but does not frame as one: damage, not a torn copy.
      ++summary_.chunks_left_out;
      if (st.code() != ErrorCode::Corrupted) return st;
      summary_.skipped.push_back(fmt::format("chunk {}: {}", n, st.message()));
      return {};
    }
    add_losses(chunk_.losses);
    return {};
  }

  const Store& store_;
  detail::StoreImpl& impl_;
  recorder::Writer& writer_;
  const DumpOptions& options_;
  const std::uint64_t cutoff_;
  StoreStatus status_;
  std::map<std::uint16_t, TopicStatus> known_;  // the dump's channels
  std::map<std::uint16_t, TopicType> unregistered_types_;
  std::vector<TopicInfo> unregistered_;
  std::map<std::string, detail::RingCopy> rings_;
  std::map<std::uint16_t, std::pair<std::uint64_t, std::uint64_t>> store_end_;  // next sequence, lost
  std::map<std::uint16_t, std::uint64_t> counts_;  // the channels written, with their messages
  detail::LossTable losses_;          // per channel: its lost counter at its first and last message written
  detail::LossTable newest_losses_;   // the same for the last chunk (staged and caught up)
  std::vector<std::byte> records_;    // the last chunk's Message records
  detail::CopiedChunk chunk_;
  recorder::profile::SchemaIds schema_ids_;
};

Result<DumpSummary> dump_into(const Store& store, std::unique_ptr<recorder::ByteSink> sink, const DumpOptions& options,
                              const std::string& recorded_path) {
  const std::string path = sink ? sink->name() : "";
  auto writer = recorder::Writer::create(std::move(sink), recorder::WriterOptions{});
  if (!writer) return writer.status();
  DumpWriter dump(store, *writer, options);
  dump.summary_.path = path;
  if (options.from_topics) dump.copy_rings();
  dump.note_store_ends();
  Status st = dump.copy_store();
  if (st && options.from_topics) dump.catch_up();
  if (st) st = dump.write_newest();
  if (st) st = dump.finish(recorded_path);
  if (!st) {
    writer->abandon();
    return st;
  }
  return std::move(dump.summary_);
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
