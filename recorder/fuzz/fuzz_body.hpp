// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the fuzzer does with one input, shared with the regression test that replays the corpus:
// open it (indexed or by scan), read every message (in file and in log-time order), metadata and
// attachment, and stream it.

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerulion/recorder/reader.hpp"

namespace cerulion::recorder::fuzz {

inline void run_one(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto reader = Reader::open_memory(bytes);
  if (reader.ok()) {
    std::size_t total = 0;
    for (auto order : {ReadOrder::File, ReadOrder::LogTime}) {
      ReadMessagesOptions options;
      options.order = order;
      (void)reader->read_messages(options, [&](const MessageView& m) {
        total += m.message.data.size();
        return true;
      });
    }
    (void)reader->read_metadata();
    (void)reader->read_attachments();
  }
  std::vector<std::string> problems;
  (void)stream_records_memory(bytes, [](const Record&) { return true; }, &problems);
}

}  // namespace cerulion::recorder::fuzz
