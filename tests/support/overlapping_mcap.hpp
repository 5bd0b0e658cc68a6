// SPDX-License-Identifier: Apache-2.0
#pragma once
// A recording whose chunks all overlap in time, as several writers or a reordering recorder leave
// them, written through the recorder library for the reader's tests and `cerulion play`'s.

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/recorder/writer.hpp"

namespace cerulion::test {

/// Writes `chunks` chunks of `per_chunk` messages to `path`. Message k of the log-time order
/// (k = chunk + chunks * i for the i-th message of a chunk) has log time first_ns + k * step_ns,
/// payload "m<k>" and goes on topics[k % topics.size()]; so each chunk spans nearly the whole
/// recording and file order (m0, m<chunks>, m<2*chunks>...) is not log-time order. Returns the
/// writer's status.
inline recorder::Status write_overlapping_chunks(const std::string& path, const std::vector<std::string>& topics,
                                                 int chunks, int per_chunk, std::uint64_t first_ns,
                                                 std::uint64_t step_ns) {
  auto writer = recorder::Writer::create(path);
  if (!writer) return writer.status();
  std::vector<std::uint16_t> channels;
  for (const auto& topic : topics) {
    auto id = writer->add_channel(topic, "x-cerulion-bytes");
    if (!id) return id.status();
    channels.push_back(*id);
  }
  for (int chunk = 0; chunk < chunks; ++chunk) {
    for (int i = 0; i < per_chunk; ++i) {
      const int k = chunk + chunks * i;
      const std::string payload = "m" + std::to_string(k);
      const auto time = first_ns + static_cast<std::uint64_t>(k) * step_ns;
      recorder::Status st = writer->write(channels[static_cast<std::size_t>(k) % channels.size()],
                                          static_cast<std::uint32_t>(k), time, time,
                                          {reinterpret_cast<const std::byte*>(payload.data()), payload.size()});
      if (!st) return st;
    }
    if (auto st = writer->flush(); !st) return st;  // one chunk per pass
  }
  return writer->close();
}

}  // namespace cerulion::test
