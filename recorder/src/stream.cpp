// SPDX-License-Identifier: Apache-2.0
// Streaming reads: every record in file order, as McapStreamReader sees them.

#include <exception>

#include "cerulion/recorder/reader.hpp"
#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

using detail::at;
using detail::Lexer;
using detail::prefix_crc;

namespace {

Status stream_impl(detail::Source& src, const std::function<bool(const Record&)>& on_record,
                   std::vector<std::string>* problems, StreamOptions options) {
  auto problem = [&](std::string p) {
    if (problems) problems->push_back(std::move(p));
  };
  if (src.size() == 0) return Status(ErrorCode::Corrupted, "empty file (0 bytes): not an MCAP file");
  if (!detail::has_magic(src, 0)) return Status(ErrorCode::Corrupted, "not an MCAP file (bad magic)");
  Lexer lexer(src, kMagicSize, src.size());
  std::uint32_t crc = detail::crc32_update(0, kMagic, kMagicSize);
  bool first = true;
  bool data_ended = false;
  ByteVector records;
  while (auto rec = lexer.next()) {
    std::string error;
    std::span<const std::byte> stored;
    auto decoded = detail::decode_record(rec->opcode, rec->content, error, &stored);
    if (first) {
      if (!decoded || !std::holds_alternative<Header>(*decoded)) {
        return Status(ErrorCode::Corrupted, "not an MCAP file: the first record is not a valid Header");
      }
      first = false;
    } else if (decoded && std::holds_alternative<Header>(*decoded)) {
      return Status(ErrorCode::Corrupted, "a second Header record at " + at(rec->offset));
    }
    if (!decoded) {
      problem(error + " at " + at(rec->offset) + "; skipped");
      if (!data_ended) crc = prefix_crc(crc, *rec);
      continue;
    }
    if (auto* de = std::get_if<DataEnd>(&*decoded)) {
      if (options.verify_crcs && de->data_section_crc != 0 && de->data_section_crc != crc) {
        problem("data section CRC mismatch");
      }
      data_ended = true;
    }
    if (!data_ended) crc = prefix_crc(crc, *rec);
    if (auto* a = std::get_if<Attachment>(&*decoded)) {
      if (options.verify_crcs && a->crc != 0 && detail::attachment_crc(*a) != a->crc) {
        problem("attachment '" + a->name + "' at " + at(rec->offset) + ": CRC mismatch; skipped");
        continue;
      }
    }
    if (auto* chunk = std::get_if<ChunkInfo>(&*decoded)) {
      chunk->file_offset = rec->offset;
      chunk->record_length = rec->length;
      if (!on_record(*decoded)) return Status();
      if (!detail::load_chunk(*chunk, stored, options.verify_crcs, records, error)) {
        problem("chunk at " + at(rec->offset) + ": " + error + "; skipped");
        continue;
      }
      bool go = true;
      bool ok = detail::for_each_in_chunk(
          records,
          [&](std::uint8_t op, std::uint64_t, std::span<const std::byte> content) {
            auto kind = static_cast<Opcode>(op);
            if (kind != Opcode::Schema && kind != Opcode::Channel && kind != Opcode::Message) {
              if (op < 0x80) problem("chunk at " + at(rec->offset) + ": a record not allowed in a chunk; skipped");
              return true;
            }
            std::string e;
            auto r = detail::decode_record(op, content, e);
            if (!r) {
              problem("chunk at " + at(rec->offset) + ": " + e);
              return true;
            }
            go = on_record(*r);
            return go;
          },
          error);
      if (!ok) problem("chunk at " + at(rec->offset) + ": " + error);
      if (!go) return Status();
      continue;
    }
    if (!on_record(*decoded)) return Status();
    if (std::holds_alternative<Footer>(*decoded)) {
      std::uint64_t end = lexer.position();
      if (end + kMagicSize > src.size() || !detail::has_magic(src, end)) {
        return Status(ErrorCode::Corrupted, "no closing magic after the Footer");
      }
      if (end + kMagicSize != src.size()) return Status(ErrorCode::Corrupted, "bytes after the closing magic");
      return Status();
    }
  }
  if (!lexer.error().empty()) return Status(ErrorCode::Corrupted, "truncated file: " + lexer.error());
  return Status(ErrorCode::Corrupted, "truncated file: no Footer");
}

}  // namespace

Status stream_records(const std::string& path, const std::function<bool(const Record&)>& on_record,
                      std::vector<std::string>* problems, StreamOptions options) {
  try {
    auto source = detail::open_file_source(path);
    if (!source) return source.status();
    Status st = stream_impl(*source.value(), on_record, problems, options);
    if (!st) return Status(st.code(), path + ": " + st.message(), Subject::path(path));
    return st;
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

Status stream_records_memory(std::span<const std::byte> bytes,
                             const std::function<bool(const Record&)>& on_record,
                             std::vector<std::string>* problems, StreamOptions options) {
  try {
    auto source = detail::memory_source(bytes);
    return stream_impl(*source, on_record, problems, options);
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

}  // namespace cerulion::recorder
