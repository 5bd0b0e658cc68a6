// SPDX-License-Identifier: Apache-2.0
#pragma once
// A recording: a tap set feeding a queue whose consumer writes MCAP in the cerulion profile
// (recorder/profile.hpp), split into numbered files by size or duration, each closed with the
// per-topic counts. What `cerulion record` runs, and what a process of your own can run.
//
//   cerulion::recording::RecordingOptions o;
//   o.taps.selection.all = true;
//   auto rec = cerulion::recording::Recording::create(o, cerulion::recording::file_sinks("run.mcap", false));
//   if (auto st = rec->start(); !st) ...;
//   ...
//   auto st = rec->finish();
//
// Tests record into memory: the sink factory returns recorder::MemorySink objects. What happens
// on the way (each file started, each topic read or not readable) goes to `events`.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/recorder/sink.hpp"
#include "cerulion/recorder/writer.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::recording {

/// Makes the sink of file `index` (0, then 1, 2... at each split).
using SinkFactory = std::function<Result<std::unique_ptr<recorder::ByteSink>>(std::size_t index)>;

/// The name of file `index`: `output` itself when not splitting, else numbered before the
/// extension ("run.mcap" -> "run_0.mcap", "run_1.mcap"...).
std::string numbered_file_name(const std::string& output, std::size_t index, bool splitting);

/// A factory of file sinks named by numbered_file_name().
SinkFactory file_sinks(std::string output, bool splitting, recorder::FileSinkOptions options = {});

/// Settings of a recording; defaults are the recommendation.
struct RecordingOptions {
  /// What to read and how (taps.lockstep also makes a full queue wait instead of drop).
  TapSetOptions taps;
  /// Compression and chunking. An empty `library` becomes "cerulion <version>".
  recorder::WriterOptions writer;
  /// Start a new file once the current one holds this many bytes (0: never).
  std::uint64_t split_size = 0;
  /// Start a new file once the current one spans this many ns of log time (0: never).
  std::uint64_t split_duration_ns = 0;
  /// Payload bytes waiting to be written at most; beyond it, a tap drops (and counts).
  std::uint64_t queue_bytes = 256u << 20;
  /// Where the recording says what it does: a file started, and what its tap set says (a topic
  /// read, one that cannot be); null: nowhere. Given to the tap set in place of taps.events.
  /// Outlives the recording.
  EventSink* events = nullptr;

  bool splitting() const { return split_size > 0 || split_duration_ns > 0; }
};

/// Counters of one topic, for progress lines and summaries.
struct RecordingTopicCounts {
  std::string topic;
  std::uint64_t received = 0;  ///< read from the topic
  std::uint64_t missed = 0;    ///< overwritten before they were read
  std::uint64_t dropped = 0;   ///< read but not written (queue full, or the file failed)
  std::uint64_t written = 0;   ///< messages in the file(s)
  std::uint64_t bytes = 0;     ///< payload bytes written
  std::uint64_t lost() const { return missed + dropped; }
};

namespace detail {
class RecordingImpl;
}

/// One recording. Move-only; the destructor finishes it if finish() was not called.
class Recording {
 public:
  /// Opens the first file (its sink's error as it is: "run.mcap already exists"...) and checks
  /// the options. Reads nothing yet.
  static Result<Recording> create(RecordingOptions options, SinkFactory sinks);
  Recording(Recording&&) noexcept;
  Recording& operator=(Recording&&) noexcept;
  ~Recording();

  /// Opens the named topics (an error names the one that failed: "'/x': ...") and starts
  /// reading, discovering and writing. After an error, finish() still completes the file.
  [[nodiscard]] Status start();
  /// Stops reading, writes what is queued, closes the last file with the closing Metadata record.
  /// The first error of the recording, if any. Further calls return the same.
  [[nodiscard]] Status finish();

  /// A write error that ended the recording (ok while fine): stop and finish(). Said here, not
  /// as an event.
  Status error() const;
  /// Per-topic counters, in the order topics were opened.
  std::vector<RecordingTopicCounts> counts() const;
  /// The files (sink names) opened so far.
  std::vector<std::string> files() const;
  /// Bytes written to all files so far.
  std::uint64_t bytes_written() const;

 private:
  explicit Recording(std::unique_ptr<detail::RecordingImpl> impl);
  std::unique_ptr<detail::RecordingImpl> impl_;
};

}  // namespace cerulion::recording
