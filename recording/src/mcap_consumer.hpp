// SPDX-License-Identifier: Apache-2.0
#pragma once
// The consumer of a recording's queue: writes samples as MCAP messages in the cerulion profile,
// opens a new file when the current one is big or old enough, and closes each file with the
// closing Metadata record.

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/writer.hpp"
#include "cerulion/recording/recording.hpp"
#include "cerulion/recording/sample_queue.hpp"

namespace cerulion::recording::detail {

/// What the consumer counted for one topic.
struct WrittenCounts {
  std::uint64_t written = 0;
  std::uint64_t bytes = 0;
  std::uint64_t failed = 0;  ///< reached the consumer but could not be written
};

class McapConsumer final : public SampleConsumer {
 public:
  /// `closing_counts` gives the per-topic counts each closing Metadata record carries.
  McapConsumer(const RecordingOptions& options, SinkFactory sinks,
               std::function<std::vector<recorder::profile::TopicCount>()> closing_counts);

  Status on_topic(const TopicDescription& topic) override;
  /// Write failures are counted and kept (error()), not returned: the queue keeps going, so that
  /// every later sample is counted as lost too.
  Status consume(QueuedSample& sample) override;
  Status on_idle(std::uint64_t realtime_ns) override;

  /// Opens the next file of the recording.
  Status open_next_file();
  /// Writes the closing Metadata record and finishes the current file, if one is open.
  void close_file();

  Status error() const;
  std::vector<WrittenCounts> written() const;
  std::vector<std::string> files() const;
  std::uint64_t bytes_written() const { return file_bytes_done_.load() + current_file_bytes_.load(); }

 private:
  void fail(const Status& status);
  /// Splits when the current file is full or `log_time` is past its duration.
  Status maybe_split(std::uint64_t log_time);

  const RecordingOptions& options_;
  SinkFactory sinks_;
  std::function<std::vector<recorder::profile::TopicCount>()> closing_counts_;
  std::string host_;

  // Consumer-thread state (the caller's thread before start() and after finish()).
  std::optional<recorder::Writer> writer_;
  std::map<std::size_t, TopicDescription> topics_;
  std::map<std::size_t, std::uint16_t> channel_of_topic_;
  recorder::profile::SchemaIds schema_ids_;  // of the current file
  std::uint64_t file_started_ns_ = 0;
  std::size_t file_index_ = 0;

  mutable std::mutex mutex_;  // guards error_, written_, files_
  Status error_;
  std::vector<WrittenCounts> written_;
  std::vector<std::string> files_;
  std::atomic<std::uint64_t> file_bytes_done_{0};
  std::atomic<std::uint64_t> current_file_bytes_{0};
};

}  // namespace cerulion::recording::detail
