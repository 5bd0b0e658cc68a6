// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a Reader holds and how it reads: the file's source, what open() learned, the problems met.
// reader.cpp opens and summarizes (summary or scan, metadata, attachments); messages.cpp reads
// messages in file or log-time order.

#include <cstdint>
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerulion/recorder/reader.hpp"
#include "source.hpp"

namespace cerulion::recorder::detail {

class ReaderImpl {
 public:
  ReaderImpl(std::shared_ptr<Source> source, ReaderOptions options);

  /// Reads the Header, then the summary or, failing that, the data section.
  Status load();

  const FileSummary& summary() const noexcept { return summary_; }
  const std::vector<std::string>& problems() const noexcept { return problems_; }
  std::uint64_t intact_before() const noexcept { return intact_before_; }

  Status read_messages(const ReadMessagesOptions& options, const std::function<bool(const MessageView&)>& on_message);
  Result<std::vector<Metadata>> read_metadata();
  Result<std::vector<Attachment>> read_attachments();

 private:
  bool load_summary(std::string& why);
  Status scan();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> scan_for(std::uint8_t opcode);
  void report(std::string problem);
  /// Messages from log time `log_time` on may be missing (see Reader::intact_before).
  void damaged_from(std::uint64_t log_time) { intact_before_ = std::min(intact_before_, log_time); }
  /// A record that does not decode: one that holds or defines messages loses what cannot be told.
  void undecodable(std::uint8_t opcode);
  void learn_definition(Record& record);
  bool chunk_wanted(const ChunkIndex& index, const ReadMessagesOptions& options) const;
  bool load_indexed_chunk(const ChunkIndex& index, ByteVector& records);
  bool deliver_message(std::span<const std::byte> content, const ReadMessagesOptions& options,
                       std::map<std::uint16_t, bool>& wanted,
                       const std::function<bool(const MessageView&)>& on_message);
  void walk_chunk(std::uint64_t chunk_offset, std::uint64_t chunk_start_time, std::span<const std::byte> records,
                  const std::function<bool(std::uint64_t, std::span<const std::byte>)>& on_message_record);
  Status read_in_file_order(const ReadMessagesOptions& options,
                            const std::function<bool(const MessageView&)>& on_message);
  Status read_in_log_time_order(const ReadMessagesOptions& options,
                                const std::function<bool(const MessageView&)>& on_message);

  std::shared_ptr<Source> source_;
  ReaderOptions options_;
  FileSummary summary_;
  std::vector<std::string> problems_;
  std::uint64_t intact_before_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t data_start_ = 0;
  std::uint64_t data_end_ = 0;
};

}  // namespace cerulion::recorder::detail
