// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/reader.hpp"

#include <algorithm>
#include <exception>
#include <optional>

#include "reader_impl.hpp"
#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

using detail::Lexer;
using detail::RawRecord;

namespace {

constexpr const char* kNoStatistics = "no Statistics record";

using detail::at;
using detail::prefix_crc;

bool allowed_in_summary(std::uint8_t op) {
  switch (static_cast<Opcode>(op)) {
    case Opcode::Header:
    case Opcode::Footer:
    case Opcode::Message:
    case Opcode::Chunk:
    case Opcode::MessageIndex:
    case Opcode::Attachment:
    case Opcode::Metadata:
      return false;
    default:
      return true;
  }
}

// Reads the Header after the magic; returns the offset just past it.
Result<std::uint64_t> read_header(detail::Source& source, Header& header) {
  if (source.size() == 0) return Status(ErrorCode::Corrupted, "empty file (0 bytes): not an MCAP file");
  if (!detail::has_magic(source, 0)) return Status(ErrorCode::Corrupted, "not an MCAP file (bad magic)");
  Lexer lexer(source, kMagicSize, source.size());
  auto rec = lexer.next();
  if (!rec) return Status(ErrorCode::Corrupted, "truncated MCAP file: no complete Header record");
  if (rec->opcode != static_cast<std::uint8_t>(Opcode::Header)) {
    return Status(ErrorCode::Corrupted, "not an MCAP file: the first record is not a Header");
  }
  std::string error;
  auto decoded = detail::decode_record(rec->opcode, rec->content, error);
  if (!decoded) return Status(ErrorCode::Corrupted, error);
  header = std::get<Header>(*decoded);
  return lexer.position();
}

}  // namespace

Reader::Reader(std::unique_ptr<detail::ReaderImpl> impl) : impl_(std::move(impl)) {}
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;
Reader::~Reader() = default;

Result<Reader> Reader::open(const std::string& path, ReaderOptions options) {
  auto source = detail::open_file_source(path);
  if (!source) return source.status();
  auto impl = std::make_unique<detail::ReaderImpl>(std::move(source.value()), options);
  Status st = impl->load();
  if (!st) return Status(st.code(), path + ": " + st.message(), Subject::path(path));
  return Reader(std::move(impl));
}

Result<Reader> Reader::open_memory(std::span<const std::byte> bytes, ReaderOptions options) {
  auto impl = std::make_unique<detail::ReaderImpl>(detail::memory_source(bytes), options);
  Status st = impl->load();
  if (!st) return st;
  return Reader(std::move(impl));
}

namespace {
// What a moved-from Reader answers.
const FileSummary kNoSummary{};
const std::vector<std::string> kNoProblems{};
Status moved_from() { return Status(ErrorCode::InvalidArgument, "reader was moved from"); }
}  // namespace

const FileSummary& Reader::summary() const noexcept { return impl_ ? impl_->summary() : kNoSummary; }
const std::vector<std::string>& Reader::problems() const noexcept { return impl_ ? impl_->problems() : kNoProblems; }

std::uint64_t Reader::intact_before() const noexcept {
  return impl_ ? impl_->intact_before() : std::numeric_limits<std::uint64_t>::max();
}

Status Reader::read_messages(const ReadMessagesOptions& options,
                             const std::function<bool(const MessageView&)>& on_message) {
  if (!impl_) return moved_from();
  return impl_->read_messages(options, on_message);
}

Result<std::vector<Metadata>> Reader::read_metadata() {
  if (!impl_) return moved_from();
  return impl_->read_metadata();
}

Result<std::vector<Attachment>> Reader::read_attachments() {
  if (!impl_) return moved_from();
  return impl_->read_attachments();
}

namespace detail {

ReaderImpl::ReaderImpl(std::shared_ptr<Source> source, ReaderOptions options)
    : source_(std::move(source)), options_(options) {}

Status ReaderImpl::load() {
  try {
    auto& src = *source_;
    summary_.file_size = src.size();
    auto header_end = read_header(src, summary_.header);
    if (!header_end) return header_end.status();
    data_start_ = header_end.value();
    data_end_ = src.size();

    const std::uint64_t tail = kFooterRecordSize + kMagicSize;
    Footer footer;
    if (src.size() >= data_start_ + tail && detail::has_magic(src, src.size() - kMagicSize)) {
      std::byte buf[kFooterRecordSize];
      if (src.read(src.size() - tail, kFooterRecordSize, buf) &&
          static_cast<std::uint8_t>(buf[0]) == static_cast<std::uint8_t>(Opcode::Footer) &&
          detail::load_le(buf + 1, 8) == 20) {
        footer.summary_start = detail::load_le(buf + 9, 8);
        footer.summary_offset_start = detail::load_le(buf + 17, 8);
        footer.summary_crc = static_cast<std::uint32_t>(detail::load_le(buf + 25, 4));
        summary_.finalized = true;
        data_end_ = src.size() - tail;
      }
    }
    if (summary_.finalized && footer.summary_start != 0) {
      std::string why;
      if (load_summary(why)) {
        summary_.indexed = true;
        return Status();
      }
      // A summary without Statistics is legal but incomplete: scanning is the normal answer.
      if (why != kNoStatistics) report("summary unusable (" + why + "); scanned the data section instead");
      if (!options_.allow_fallback_scan) return Status(ErrorCode::Corrupted, "summary unusable: " + why);
      summary_.schemas.clear();
      summary_.channels.clear();
      summary_.chunk_indexes.clear();
      summary_.attachment_indexes.clear();
      summary_.metadata_indexes.clear();
      summary_.statistics = {};
    } else if (!summary_.finalized) {
      report("file is not finalized (no footer): recording was cut short; reading what its complete records hold");
      if (!options_.allow_fallback_scan) return Status(ErrorCode::Corrupted, "file is not finalized (no footer)");
    }
    return scan();
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

bool ReaderImpl::load_summary(std::string& why) {
  auto& src = *source_;
  const std::uint64_t footer_at = src.size() - kFooterRecordSize - kMagicSize;
  // Re-read the footer to know summary_start (load() validated the record).
  std::byte buf[kFooterRecordSize];
  if (!src.read(footer_at, kFooterRecordSize, buf)) {
    why = "cannot read footer";
    return false;
  }
  std::uint64_t summary_start = detail::load_le(buf + 9, 8);
  std::uint32_t summary_crc = static_cast<std::uint32_t>(detail::load_le(buf + 25, 4));
  if (summary_start < data_start_ || summary_start > footer_at) {
    why = "summary_start " + std::to_string(summary_start) + " is outside the file";
    return false;
  }
  if (options_.verify_crcs && summary_crc != 0) {
    ByteVector bytes(static_cast<std::size_t>(footer_at - summary_start) + 25);
    if (!src.read(summary_start, bytes.size(), bytes.data())) {
      why = "cannot read summary";
      return false;
    }
    if (detail::crc32_of(bytes) != summary_crc) {
      why = "summary CRC mismatch";
      return false;
    }
  }
  Lexer lexer(src, summary_start, footer_at);
  bool have_statistics = false;
  while (auto rec = lexer.next()) {
    if (!allowed_in_summary(rec->opcode)) {
      why = std::string(to_string(static_cast<Opcode>(rec->opcode))) + " record in the summary at " + at(rec->offset);
      return false;
    }
    std::string error;
    auto decoded = detail::decode_record(rec->opcode, rec->content, error);
    if (!decoded) {
      why = error + " at " + at(rec->offset);
      return false;
    }
    if (auto* s = std::get_if<Schema>(&*decoded)) {
      if (s->id != 0) summary_.schemas[s->id] = std::move(*s);
    } else if (auto* c = std::get_if<Channel>(&*decoded)) {
      summary_.channels[c->id] = std::move(*c);
    } else if (auto* ci = std::get_if<ChunkIndex>(&*decoded)) {
      if (ci->chunk_start_offset < data_start_ || ci->chunk_length < kRecordPrefixSize ||
          ci->chunk_start_offset > summary_start || ci->chunk_length > summary_start - ci->chunk_start_offset) {
        why = "chunk index points outside the data section";
        return false;
      }
      summary_.chunk_indexes.push_back(std::move(*ci));
    } else if (auto* ai = std::get_if<AttachmentIndex>(&*decoded)) {
      summary_.attachment_indexes.push_back(std::move(*ai));
    } else if (auto* mi = std::get_if<MetadataIndex>(&*decoded)) {
      summary_.metadata_indexes.push_back(std::move(*mi));
    } else if (auto* st = std::get_if<Statistics>(&*decoded)) {
      if (have_statistics) {
        why = "more than one Statistics record";
        return false;
      }
      have_statistics = true;
      summary_.statistics = std::move(*st);
    }
  }
  if (!lexer.error().empty()) {
    why = lexer.error();
    return false;
  }
  if (!have_statistics) {
    why = kNoStatistics;
    return false;
  }
  std::sort(summary_.chunk_indexes.begin(), summary_.chunk_indexes.end(),
            [](const ChunkIndex& a, const ChunkIndex& b) { return a.chunk_start_offset < b.chunk_start_offset; });
  summary_.valid_data_end = summary_start;
  return true;
}

Status ReaderImpl::scan() {
  auto& src = *source_;
  Statistics& stats = summary_.statistics;
  stats = {};
  bool any_time = false;
  auto count_message = [&](std::uint16_t channel, std::uint64_t t) {
    ++stats.message_count;
    ++stats.channel_message_counts[channel];
    if (!any_time || t < stats.message_start_time) stats.message_start_time = t;
    if (!any_time || t > stats.message_end_time) stats.message_end_time = t;
    any_time = true;
  };
  Lexer lexer(src, data_start_, data_end_);
  ByteVector records;
  std::uint32_t crc = 0;
  {
    ByteVector head(static_cast<std::size_t>(data_start_));
    if (options_.verify_crcs && src.read(0, head.size(), head.data())) crc = detail::crc32_of(head);
  }
  summary_.valid_data_end = data_start_;
  bool stop = false;
  bool data_end = false;
  while (!stop) {
    auto rec = lexer.next();
    if (!rec) break;
    std::string error;
    std::span<const std::byte> stored;
    auto decoded = detail::decode_record(rec->opcode, rec->content, error, &stored);
    if (!decoded) {
      report(error + " at " + at(rec->offset) + "; skipped");
      undecodable(rec->opcode);
      if (options_.verify_crcs) crc = prefix_crc(crc, *rec);
      summary_.valid_data_end = lexer.position();
      continue;
    }
    learn_definition(*decoded);
    if (auto* m = std::get_if<Message>(&*decoded)) {
      ++summary_.unchunked_messages;
      count_message(m->channel_id, m->log_time);
    } else if (auto* chunk = std::get_if<ChunkInfo>(&*decoded)) {
      if (!detail::load_chunk(*chunk, stored, options_.verify_crcs, records, error)) {
        report("chunk at " + at(rec->offset) + ": " + error + "; skipped");
        damaged_from(chunk->message_start_time);
      } else {
        bool ok = detail::for_each_in_chunk(
            records,
            [&](std::uint8_t op, std::uint64_t, std::span<const std::byte> content) {
              std::string e;
              auto r = detail::decode_record(op, content, e);
              if (!r) return true;
              learn_definition(*r);
              if (auto* m = std::get_if<Message>(&*r)) count_message(m->channel_id, m->log_time);
              return true;
            },
            error);
        if (!ok) {
          report("chunk at " + at(rec->offset) + ": " + error);
          damaged_from(chunk->message_start_time);
        }
        ChunkIndex ci;
        ci.message_start_time = chunk->message_start_time;
        ci.message_end_time = chunk->message_end_time;
        ci.chunk_start_offset = rec->offset;
        ci.chunk_length = rec->length;
        ci.compression = chunk->compression;
        ci.compressed_size = chunk->compressed_size;
        ci.uncompressed_size = chunk->uncompressed_size;
        summary_.chunk_indexes.push_back(std::move(ci));
      }
    } else if (auto* a = std::get_if<Attachment>(&*decoded)) {
      if (options_.verify_crcs && a->crc != 0 && detail::attachment_crc(*a) != a->crc) {
        report("attachment '" + a->name + "' at " + at(rec->offset) + ": CRC mismatch; skipped");
      } else {
        summary_.attachment_indexes.push_back(
            {rec->offset, rec->length, a->log_time, a->create_time, a->data.size(), a->name, a->media_type});
      }
    } else if (auto* md = std::get_if<Metadata>(&*decoded)) {
      summary_.metadata_indexes.push_back({rec->offset, rec->length, md->name});
    } else if (auto* de = std::get_if<DataEnd>(&*decoded)) {
      if (options_.verify_crcs && de->data_section_crc != 0 && de->data_section_crc != crc) {
        report("data section CRC mismatch");
        damaged_from(0);  // a changed byte outside every chunk's own CRC: anywhere
      }
      data_end = true;
      stop = true;
    } else if (std::holds_alternative<Footer>(*decoded)) {
      stop = true;
    }
    if (options_.verify_crcs) crc = prefix_crc(crc, *rec);
    summary_.valid_data_end = stop ? rec->offset : lexer.position();
  }
  if (!lexer.error().empty()) report("truncated: " + lexer.error() + "; the rest is unreadable");
  if (!summary_.finalized && !data_end) {
    // Cut short: what followed the last complete record is gone. A chunk cut in two still tells
    // where it started; otherwise the cut is placed at the latest message read.
    std::uint64_t cut = any_time ? stats.message_end_time : 0;
    constexpr std::uint64_t kChunkStartAt = kRecordPrefixSize;  // message_start_time opens a Chunk's content
    std::byte head[kRecordPrefixSize + 8];
    const std::uint64_t at_cut = lexer.position();
    if (!lexer.error().empty() && src.size() >= at_cut + sizeof head && src.read(at_cut, sizeof head, head) &&
        static_cast<std::uint8_t>(head[0]) == static_cast<std::uint8_t>(Opcode::Chunk)) {
      cut = detail::load_le(head + kChunkStartAt, 8);
    }
    damaged_from(cut);
  }
  stats.schema_count = static_cast<std::uint16_t>(summary_.schemas.size());
  stats.channel_count = static_cast<std::uint32_t>(summary_.channels.size());
  stats.attachment_count = static_cast<std::uint32_t>(summary_.attachment_indexes.size());
  stats.metadata_count = static_cast<std::uint32_t>(summary_.metadata_indexes.size());
  stats.chunk_count = static_cast<std::uint32_t>(summary_.chunk_indexes.size());
  return Status();
}

void ReaderImpl::undecodable(std::uint8_t opcode) {
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::Schema:
    case Opcode::Channel:
    case Opcode::Message:
    case Opcode::Chunk: damaged_from(0); break;
    default: break;  // indexes, attachments, metadata: no message is lost with them
  }
}

void ReaderImpl::report(std::string problem) {
  if (std::find(problems_.begin(), problems_.end(), problem) == problems_.end()) problems_.push_back(std::move(problem));
}

void ReaderImpl::learn_definition(Record& record) {
  if (auto* s = std::get_if<Schema>(&record)) {
    if (s->id != 0) summary_.schemas.emplace(s->id, std::move(*s));
  } else if (auto* c = std::get_if<Channel>(&record)) {
    summary_.channels.emplace(c->id, std::move(*c));
  }
}

}  // namespace detail

}  // namespace cerulion::recorder
