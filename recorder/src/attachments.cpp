// SPDX-License-Identifier: Apache-2.0
// ReaderImpl::read_metadata and read_attachments: the data section's Metadata and Attachment
// records, found through the summary's indexes or, where those count fewer than the statistics
// say, by scanning.

#include <exception>
#include <optional>

#include "reader_impl.hpp"
#include "records.hpp"
#include "source.hpp"
#include "wire.hpp"

namespace cerulion::recorder::detail {

namespace {

// Decodes the record an index points at, which must be of type `Record` (opcode `op`); a problem
// line, and nullopt, when it is not there or does not decode.
template <typename Record>
std::optional<Record> decode_indexed(detail::Source& source, std::uint64_t offset, std::uint64_t length, Opcode op,
                                     const char* what, const std::function<void(std::string)>& report) {
  Lexer lexer(source, offset, offset + length);
  auto rec = lexer.next();
  std::string error;
  if (!rec || rec->opcode != static_cast<std::uint8_t>(op)) {
    report(std::string(what) + " index points at no " + what + " record at " + at(offset));
    return std::nullopt;
  }
  auto decoded = detail::decode_record(rec->opcode, rec->content, error);
  if (!decoded) {
    report(error + " at " + at(offset));
    return std::nullopt;
  }
  return std::move(std::get<Record>(*decoded));
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::uint64_t>> ReaderImpl::scan_for(std::uint8_t opcode) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> found;
  Lexer lexer(*source_, data_start_, summary_.indexed ? summary_.valid_data_end : data_end_);
  while (auto rec = lexer.next()) {
    if (rec->opcode == opcode) found.emplace_back(rec->offset, rec->length);
    if (rec->opcode == static_cast<std::uint8_t>(Opcode::DataEnd)) break;
  }
  return found;
}

Result<std::vector<Metadata>> ReaderImpl::read_metadata() {
  try {
    std::vector<Metadata> out;
    // An indexed file may count records its summary does not index: find them by scanning.
    if (summary_.indexed && summary_.statistics.metadata_count > summary_.metadata_indexes.size()) {
      summary_.metadata_indexes.clear();
      for (auto [offset, length] : scan_for(static_cast<std::uint8_t>(Opcode::Metadata))) {
        summary_.metadata_indexes.push_back({offset, length, {}});
      }
    }
    for (const auto& mi : summary_.metadata_indexes) {
      auto metadata = decode_indexed<Metadata>(*source_, mi.offset, mi.length, Opcode::Metadata, "Metadata",
                                                   [this](std::string p) { report(std::move(p)); });
      if (metadata) out.push_back(std::move(*metadata));
    }
    return out;
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

Result<std::vector<Attachment>> ReaderImpl::read_attachments() {
  try {
    std::vector<Attachment> out;
    if (summary_.indexed && summary_.statistics.attachment_count > summary_.attachment_indexes.size()) {
      summary_.attachment_indexes.clear();
      for (auto [offset, length] : scan_for(static_cast<std::uint8_t>(Opcode::Attachment))) {
        AttachmentIndex ai;
        ai.offset = offset;
        ai.length = length;
        summary_.attachment_indexes.push_back(ai);
      }
    }
    for (const auto& ai : summary_.attachment_indexes) {
      auto attachment =
          decode_indexed<Attachment>(*source_, ai.offset, ai.length, Opcode::Attachment, "Attachment",
                                     [this](std::string p) { report(std::move(p)); });
      if (!attachment) continue;
      auto& a = *attachment;
      if (options_.verify_crcs && a.crc != 0 && detail::attachment_crc(a) != a.crc) {
        report("attachment '" + a.name + "': CRC mismatch; skipped");
        continue;
      }
      out.push_back(std::move(a));
    }
    return out;
  } catch (const std::exception& e) {
    return Status(ErrorCode::SystemError, std::string("reading failed: ") + e.what());
  }
}

}  // namespace cerulion::recorder::detail
