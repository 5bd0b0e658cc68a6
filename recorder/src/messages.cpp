// SPDX-License-Identifier: Apache-2.0
// ReaderImpl::read_messages: messages in file order, or merged into log-time order.
//
// Log-time order merges chunks the way the mcap C++ library's LogTimeOrder reading does: the chunks
// are taken by their indexes' message_start_time, and a chunk is decompressed only once the
// earliest message waiting is not earlier than its first message (before that, nothing in it can
// be due). Its messages wait in a heap, in place in its records, and the chunk is freed with its
// last message; so memory holds the chunks that overlap in time, never the whole file.

#include <algorithm>
#include <exception>
#include <optional>
#include <queue>
#include <tuple>

#include "cerulion/recorder/message_record.hpp"
#include "cerulion/recorder/reader.hpp"
#include "reader_impl.hpp"
#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

using detail::at;
using detail::Lexer;

namespace {

// A message waiting in the merge, in place in its open chunk's records.
struct Pending {
  std::uint64_t log_time;
  std::uint64_t chunk_offset;   // equal log times go in file order
  std::uint64_t record_offset;
  std::size_t chunk;            // which open chunk holds it
  std::span<const std::byte> content;
};

// std::priority_queue puts its greatest element on top: "greater" puts the earliest there.
struct EarliestOnTop {
  bool operator()(const Pending& a, const Pending& b) const {
    return std::tie(a.log_time, a.chunk_offset, a.record_offset) >
           std::tie(b.log_time, b.chunk_offset, b.record_offset);
  }
};

struct OpenChunk {
  ByteVector records;
  std::size_t waiting = 0;  // messages of it still in the heap
};

}  // namespace

namespace detail {

bool ReaderImpl::chunk_wanted(const ChunkIndex& ci, const ReadMessagesOptions& options) const {
  if (ci.message_end_time < options.start_time || ci.message_start_time > options.end_time) return false;
  if (!options.channel_filter || ci.message_index_offsets.empty()) return true;
  for (const auto& [id, off] : ci.message_index_offsets) {
    auto ch = summary_.channels.find(id);
    if (ch == summary_.channels.end() || options.channel_filter(ch->second)) return true;
  }
  return false;
}

bool ReaderImpl::load_indexed_chunk(const ChunkIndex& ci, ByteVector& records) {
  Lexer lexer(*source_, ci.chunk_start_offset, ci.chunk_start_offset + ci.chunk_length);
  auto rec = lexer.next();
  std::string error;
  std::span<const std::byte> stored;
  std::optional<Record> decoded;
  if (rec && rec->opcode == static_cast<std::uint8_t>(Opcode::Chunk) && rec->length == ci.chunk_length) {
    decoded = detail::decode_record(rec->opcode, rec->content, error, &stored);
  }
  if (!decoded) {
    report("chunk index points at no valid chunk at " + at(ci.chunk_start_offset) + "; skipped");
    damaged_from(ci.message_start_time);
    return false;
  }
  if (!detail::load_chunk(std::get<ChunkInfo>(*decoded), stored, options_.verify_crcs, records, error)) {
    report("chunk at " + at(ci.chunk_start_offset) + ": " + error + "; skipped");
    damaged_from(ci.message_start_time);
    return false;
  }
  return true;
}

bool ReaderImpl::deliver_message(std::span<const std::byte> content, const ReadMessagesOptions& options,
                             std::map<std::uint16_t, bool>& wanted,
                             const std::function<bool(const MessageView&)>& on_message) {
  // Channel and time are read in place, so messages filtered out are never copied.
  auto fields = decode_message_fields(content);
  if (!fields || fields->log_time < options.start_time || fields->log_time > options.end_time) return true;
  const std::uint16_t channel_id = fields->channel_id;
  auto ch = summary_.channels.find(channel_id);
  if (ch == summary_.channels.end()) return true;
  auto w = wanted.find(channel_id);
  if (w == wanted.end()) {
    w = wanted.emplace(channel_id, !options.channel_filter || options.channel_filter(ch->second)).first;
  }
  if (!w->second) return true;
  std::string error;
  auto r = detail::decode_record(static_cast<std::uint8_t>(Opcode::Message), content, error);
  if (!r) return true;
  auto sc = summary_.schemas.find(ch->second.schema_id);
  return on_message(
      MessageView{std::get<Message>(*r), ch->second, sc == summary_.schemas.end() ? nullptr : &sc->second});
}

void ReaderImpl::walk_chunk(std::uint64_t chunk_offset, std::uint64_t chunk_start_time, std::span<const std::byte> records,
                        const std::function<bool(std::uint64_t, std::span<const std::byte>)>& on_message_record) {
  std::string error;
  bool ok = detail::for_each_in_chunk(
      records,
      [&](std::uint8_t op, std::uint64_t offset, std::span<const std::byte> content) {
        if (op == static_cast<std::uint8_t>(Opcode::Message)) return on_message_record(offset, content);
        std::string e;
        if (auto r = detail::decode_record(op, content, e)) learn_definition(*r);
        return true;
      },
      error);
  if (!ok) {
    report("chunk at " + at(chunk_offset) + ": " + error);
    damaged_from(chunk_start_time);
  }
}

Status ReaderImpl::read_messages(const ReadMessagesOptions& options,
                             const std::function<bool(const MessageView&)>& on_message) {
  try {
    if (options.order == ReadOrder::LogTime) return read_in_log_time_order(options, on_message);
    return read_in_file_order(options, on_message);
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

Status ReaderImpl::read_in_file_order(const ReadMessagesOptions& options,
                                  const std::function<bool(const MessageView&)>& on_message) {
  bool keep_going = true;
  ByteVector records;
  std::map<std::uint16_t, bool> wanted;
  if (summary_.indexed && !summary_.chunk_indexes.empty()) {
    for (const auto& ci : summary_.chunk_indexes) {
      if (!keep_going) break;
      if (!chunk_wanted(ci, options) || !load_indexed_chunk(ci, records)) continue;
      walk_chunk(ci.chunk_start_offset, ci.message_start_time, records, [&](std::uint64_t, std::span<const std::byte> content) {
        return keep_going = deliver_message(content, options, wanted, on_message);
      });
    }
    return Status();
  }
  Lexer lexer(*source_, data_start_, data_end_);
  while (keep_going) {
    auto rec = lexer.next();
    if (!rec) break;
    if (rec->opcode == static_cast<std::uint8_t>(Opcode::Message)) {
      keep_going = deliver_message(rec->content, options, wanted, on_message);
      continue;
    }
    std::string error;
    std::span<const std::byte> stored;
    auto decoded = detail::decode_record(rec->opcode, rec->content, error, &stored);
    if (!decoded) {
      undecodable(rec->opcode);  // said by the scan of open()
      continue;
    }
    if (auto* chunk = std::get_if<ChunkInfo>(&*decoded)) {
      ChunkIndex ci;
      ci.message_start_time = chunk->message_start_time;
      ci.message_end_time = chunk->message_end_time;
      // An empty chunk (times 0/0) still may define channels: never skip those by time.
      if (chunk->message_end_time != 0 && !chunk_wanted(ci, options)) continue;
      if (!detail::load_chunk(*chunk, stored, options_.verify_crcs, records, error)) {
        report("chunk at " + at(rec->offset) + ": " + error + "; skipped");
        damaged_from(chunk->message_start_time);
        continue;
      }
      walk_chunk(rec->offset, chunk->message_start_time, records, [&](std::uint64_t, std::span<const std::byte> content) {
        return keep_going = deliver_message(content, options, wanted, on_message);
      });
    } else if (std::holds_alternative<DataEnd>(*decoded) || std::holds_alternative<Footer>(*decoded)) {
      break;
    } else {
      learn_definition(*decoded);
    }
  }
  return Status();
}

Status ReaderImpl::read_in_log_time_order(const ReadMessagesOptions& options,
                                      const std::function<bool(const MessageView&)>& on_message) {
  if (summary_.unchunked_messages > 0 || summary_.chunk_indexes.empty()) {
    // Messages outside chunks have no index to merge by: file order, said once when it is not
    // log-time order.
    std::optional<std::uint64_t> latest;
    return read_in_file_order(options, [&](const MessageView& m) {
      if (latest && m.message.log_time < *latest) {
        report("messages outside chunks are not in log-time order; they were read in file order");
      }
      latest = std::max(latest.value_or(0), m.message.log_time);
      return on_message(m);
    });
  }
  std::vector<const ChunkIndex*> chunks;
  for (const auto& ci : summary_.chunk_indexes) {
    if (chunk_wanted(ci, options)) chunks.push_back(&ci);
  }
  // chunk_indexes are in file order, so equal start times stay in file order.
  std::stable_sort(chunks.begin(), chunks.end(), [](const ChunkIndex* a, const ChunkIndex* b) {
    return a->message_start_time < b->message_start_time;
  });
  std::map<std::size_t, OpenChunk> open;  // node-based: waiting messages point into its records
  std::priority_queue<Pending, std::vector<Pending>, EarliestOnTop> due;
  std::map<std::uint16_t, bool> wanted;
  std::size_t next = 0;
  for (;;) {
    while (next < chunks.size() && (due.empty() || chunks[next]->message_start_time <= due.top().log_time)) {
      const std::size_t index = next++;
      const ChunkIndex& ci = *chunks[index];
      auto& chunk = open[index];
      if (load_indexed_chunk(ci, chunk.records)) {
        walk_chunk(ci.chunk_start_offset, ci.message_start_time, chunk.records, [&](std::uint64_t offset, std::span<const std::byte> content) {
          auto fields = decode_message_fields(content);
          if (fields && fields->log_time >= options.start_time && fields->log_time <= options.end_time) {
            due.push({fields->log_time, ci.chunk_start_offset, offset, index, content});
            ++chunk.waiting;
          }
          return true;
        });
      }
      if (chunk.waiting == 0) open.erase(index);
    }
    if (due.empty()) break;
    const Pending first = due.top();
    due.pop();
    bool keep_going = deliver_message(first.content, options, wanted, on_message);
    if (auto it = open.find(first.chunk); --it->second.waiting == 0) open.erase(it);
    if (!keep_going) break;
  }
  return Status();
}

}  // namespace detail

}  // namespace cerulion::recorder
