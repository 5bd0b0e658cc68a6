// SPDX-License-Identifier: Apache-2.0
#include "cerulion/recorder/recovery.hpp"

#include <exception>
#include <set>

#include "cerulion/recorder/reader.hpp"

#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

Result<RecoveryReport> recover(const std::string& input, const std::string& output,
                               WriterOptions writer_options) {
  try {
    auto opened = detail::open_file_source(input);
    if (!opened) return opened.status();
    auto& src = *opened.value();
    if (src.size() == 0) {
      return Status(ErrorCode::Corrupted, input + ": empty file (0 bytes): not an MCAP file", Subject::path(input));
    }
    if (!detail::has_magic(src, 0)) {
      return Status(ErrorCode::Corrupted, input + ": not an MCAP file (bad magic)", Subject::path(input));
    }
    detail::Lexer lexer(src, kMagicSize, src.size());
    auto first = lexer.next();
    std::string error;
    std::optional<Record> header;
    if (first && first->opcode == static_cast<std::uint8_t>(Opcode::Header)) {
      header = detail::decode_record(first->opcode, first->content, error);
    }
    if (!header) return Status(ErrorCode::Corrupted, input + ": not an MCAP file (no valid Header)", Subject::path(input));
    if (writer_options.profile.empty()) writer_options.profile = std::get<Header>(*header).profile;

    auto writer = Writer::create(output, writer_options);
    if (!writer) return writer.status();
    RecoveryReport report;
    std::set<std::uint16_t> schemas;   // ids written to the output
    std::set<std::uint16_t> channels;
    auto keep_schema = [&](const Schema& s, const std::string& where) {
      if (s.id == 0 || schemas.count(s.id)) return;
      if (Status st = writer->add_schema(s); st) {
        schemas.insert(s.id);
        ++report.schemas;
      } else {
        report.problems.push_back("schema '" + s.name + "' " + where + ": " + st.message());
      }
    };
    auto keep_channel = [&](const Channel& c, const std::string& where) {
      if (channels.count(c.id)) return;
      if (Status st = writer->add_channel(c); st) {
        channels.insert(c.id);
        ++report.channels;
      } else {
        report.problems.push_back("channel '" + c.topic + "' " + where + ": " + st.message());
      }
    };
    // Every schema and channel the input declares is kept, messages or not. An intact summary
    // comes first: it may be all that is left of definitions that were in damaged chunks, or of
    // schemas a channel in the data section refers to.
    {
      ReaderOptions ro;
      ro.allow_fallback_scan = false;
      if (auto r = Reader::open(input, ro); r.ok() && r->summary().indexed) {
        for (const auto& [id, s] : r->summary().schemas) keep_schema(s, "in the summary");
        for (const auto& [id, c] : r->summary().channels) keep_channel(c, "in the summary");
      }
    }
    ByteVector records;
    auto take = [&](Record&& r, std::uint64_t offset) {
      if (auto* s = std::get_if<Schema>(&r)) {
        keep_schema(*s, "at offset " + std::to_string(offset));
      } else if (auto* c = std::get_if<Channel>(&r)) {
        keep_channel(*c, "at offset " + std::to_string(offset));
      } else if (auto* m = std::get_if<Message>(&r)) {
        if (!channels.count(m->channel_id)) {
          ++report.messages_dropped;
          return;
        }
        if (writer->write(*m)) ++report.messages;
      }
    };
    Status write_status;
    bool done = false;
    while (!done) {
      auto rec = lexer.next();
      if (!rec) break;
      std::span<const std::byte> stored;
      auto decoded = detail::decode_record(rec->opcode, rec->content, error, &stored);
      if (!decoded) {
        report.problems.push_back(error + " at offset " + std::to_string(rec->offset) + "; dropped");
        continue;
      }
      if (auto* chunk = std::get_if<ChunkInfo>(&*decoded)) {
        if (!detail::load_chunk(*chunk, stored, true, records, error)) {
          ++report.chunks_dropped;
          report.problems.push_back("chunk at offset " + std::to_string(rec->offset) + ": " + error + "; dropped");
          continue;
        }
        ++report.chunks_kept;
        std::string inner_error;
        bool ok = detail::for_each_in_chunk(
            records,
            [&](std::uint8_t op, std::uint64_t, std::span<const std::byte> content) {
              std::string e;
              auto r = detail::decode_record(op, content, e);
              if (r) take(std::move(*r), rec->offset);
              return true;
            },
            inner_error);
        if (!ok) report.problems.push_back("chunk at offset " + std::to_string(rec->offset) + ": " + inner_error);
      } else if (auto* a = std::get_if<Attachment>(&*decoded)) {
        if (a->crc != 0 && detail::attachment_crc(*a) != a->crc) {
          report.problems.push_back("attachment '" + a->name + "': CRC mismatch; dropped");
        } else if (writer->write_attachment(*a)) {
          ++report.attachments;
        }
      } else if (auto* md = std::get_if<Metadata>(&*decoded)) {
        if (writer->write_metadata(*md)) ++report.metadata;
      } else if (std::holds_alternative<DataEnd>(*decoded) || std::holds_alternative<Footer>(*decoded)) {
        done = true;
      } else if (std::holds_alternative<Header>(*decoded)) {
        report.problems.push_back("second Header at offset " + std::to_string(rec->offset) + "; stopped");
        done = true;
      } else {
        take(std::move(*decoded), rec->offset);
      }
    }
    if (!done) {
      report.bytes_ignored = src.size() - lexer.position();
      if (!lexer.error().empty()) report.problems.push_back("input is truncated: " + lexer.error());
      else report.problems.push_back("input has no DataEnd or Footer: recording was cut short");
    }
    // A footer at the very end means the input was finished.
    if (src.size() >= 37 && detail::has_magic(src, src.size() - kMagicSize)) {
      std::byte op[1];
      report.input_finalized = src.read(src.size() - 37, 1, op) &&
                               static_cast<std::uint8_t>(op[0]) == static_cast<std::uint8_t>(Opcode::Footer);
    }
    if (Status st = writer->close(); !st) return st;
    return report;
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("recovery failed: ") + e.what());
  }
}

}  // namespace cerulion::recorder
