#pragma once
// The machinery of `cerulion record`: one tap thread per topic copies each sample into a bounded
// queue and lets go of it at once; one writer thread drains the queue into MCAP files. A full queue
// (a slow disk) drops messages and counts them: the tap never waits, so no publisher is held back.
// A lockstep recording joins as a subscriber instead, and waits for room in the queue: nothing is
// lost, and publishers go at the pace of the disk.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/recorder/writer.hpp"

namespace cerulion::cli {

/// What `record` was asked to do.
struct RecordSettings {
  std::vector<std::string> topics;
  std::string output;
  bool all = false;
  std::vector<std::string> regex;
  std::vector<std::string> exclude;
  std::string compression = "zstd";
  int level = 1;
  std::uint64_t chunk_size = 1u << 20;
  std::uint64_t split_size = 0;
  double split_duration_s = 0;
  double duration_s = 0;
  bool force = false;
  std::uint64_t queue_bytes = 256u << 20;
  /// Join as a lockstep subscriber rather than a tap: publishers wait for the recorder (and a
  /// full queue waits for the disk) instead of anything being lost.
  bool lockstep = false;
};

/// Per-topic counters, updated by the tap and writer threads.
struct TopicCounters {
  std::string topic;
  std::atomic<std::uint64_t> received{0};      ///< messages the tap got
  std::atomic<std::uint64_t> missed{0};        ///< overwritten before the tap read them
  std::atomic<std::uint64_t> queue_drops{0};   ///< dropped because the writer was behind
  std::atomic<std::uint64_t> written{0};       ///< messages in the file(s)
  std::atomic<std::uint64_t> bytes{0};         ///< payload bytes written
  std::string mode;                            ///< topic settings, for the channel metadata
  std::uint32_t depth = 0;
  std::uint64_t max_payload = 0;
};

/// One recording in progress.
class RecordSession {
 public:
  explicit RecordSession(RecordSettings settings, std::string domain);
  ~RecordSession();

  /// Opens the first file; throws Exit on failure (existing file without --force...).
  void start();
  /// Starts a tap on `topic` unless it is tapped already; false (with `error`) if it cannot.
  /// `start` First records a topic that appeared after the recording began from its first message.
  bool tap(const std::string& topic, std::string& error, StartAt start = StartAt::Next);
  /// Stops the taps, drains the queue, writes the closing Metadata and finishes the file.
  void finish();

  std::vector<std::shared_ptr<TopicCounters>> counters() const;
  std::uint64_t bytes_written() const { return file_bytes_done_ + current_file_bytes_.load(); }
  std::vector<std::string> files() const;
  /// A writer error that ended the recording ("" while fine).
  std::string error() const;

 private:
  struct Item {
    std::size_t topic_index;
    std::uint32_t sequence;
    std::uint64_t log_time;
    std::uint64_t publish_time;
    std::vector<std::byte> data;
  };
  /// Stops the taps, then the writer once it has drained the queue.
  void stop_threads();
  void writer_loop();
  bool open_next_file();
  void close_file();
  std::string file_name(std::size_t index) const;

  RecordSettings settings_;
  std::string domain_;
  std::atomic<bool> stop_taps_{false};

  mutable std::mutex mutex_;  // guards queue_, topics_, files_, error_
  std::condition_variable ready_;
  std::condition_variable room_;  ///< a lockstep recording's taps wait here for queue room
  std::deque<Item> queue_;
  std::uint64_t queued_bytes_ = 0;
  bool writer_done_ = false;
  std::vector<std::shared_ptr<TopicCounters>> topics_;
  std::vector<std::thread> tap_threads_;
  std::thread writer_thread_;
  std::vector<std::string> files_;
  std::string error_;

  // Writer-thread state.
  std::optional<recorder::Writer> writer_;
  std::map<std::size_t, std::uint16_t> channel_of_topic_;
  std::uint64_t file_started_ns_ = 0;
  std::atomic<std::uint64_t> file_bytes_done_{0};
  std::atomic<std::uint64_t> current_file_bytes_{0};
  std::size_t file_index_ = 0;
};

}  // namespace cerulion::cli
