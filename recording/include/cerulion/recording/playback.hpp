// SPDX-License-Identifier: Apache-2.0
#pragma once
// Playing a recording back: its messages republished on their topics in log-time order (chunks
// that overlap in time are merged, as the mcap CLI and Foxglove play them), paced by the recorded
// log times. What `cerulion play` runs, and what a process of your own can run.
//
//   auto reader = cerulion::recorder::Reader::open("run.mcap");
//   if (!reader) ...;
//   cerulion::recording::PlaybackOptions o;
//   o.rate = 2;  // twice as fast
//   auto playback = cerulion::recording::Playback::create(std::move(*reader), o);
//   if (!playback) ...;
//   if (auto st = playback->run(); !st) ...;
//
// run() plays on the calling thread; another thread may ask progress() meanwhile. What the
// playback cannot honour (a damaged chunk skipped, recorded settings that do not read back) goes
// to `events` as warnings, each once.
//
// Each topic a recording names is opened with the type (encoding and schema) and the settings
// (mode, depth, payload ceiling) it was recorded with; the settings apply only to a topic the
// playback creates. A topic that exists with another type refuses it: Incompatible.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cerulion/core/names.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::recording {

/// Settings of a playback; defaults are the recommendation.
struct PlaybackOptions {
  /// Where the topics are published.
  std::string domain = default_domain();
  /// Speed factor: 2 plays twice as fast. Positive.
  double rate = 1.0;
  /// Paced by the recorded log times; false publishes each message as soon as the previous one
  /// is out (with `lockstep`, as soon as every subscriber has room), never waiting for a clock.
  bool paced = true;
  /// Start over at the end until cancelled.
  bool loop = false;
  /// Which of the recording's topics to play (named ones, patterns, exclusions); every one by
  /// default.
  TopicSelection selection{.all = true};
  /// Skips this much of the recording's beginning (log time, ns).
  std::uint64_t start_offset_ns = 0;
  /// Each message waits until every subscriber released the previous one (a deterministic
  /// replay): topics the playback creates run in lockstep with room for one message. A topic
  /// that exists in free run stays so (warned).
  bool lockstep = false;
  /// Called before each message is published, with its publisher (opened with the recorded type):
  /// it may wait (for subscribers, for a consumer's answer to the previous message) or publish on
  /// other topics. A failure stops the playback, and run() returns it.
  std::function<Status(const recorder::MessageView& message, Publisher& publisher)> before_publish;
  /// How long one message may wait for room (lockstep: for every subscriber to take the ones
  /// before it); nullopt waits as long as it takes. At the limit run() fails with Timeout, naming
  /// the topic.
  Timeout publish_timeout;
  /// When non-null and set, the playback stops promptly (run() then returns Ok, interrupted()).
  const std::atomic<bool>* cancel = nullptr;
  /// Where the playback says what it cannot honour, as warnings: a damaged chunk the reader
  /// skipped, recorded settings that do not read back, an encoding a topic cannot declare (its
  /// messages then go out as raw bytes), a topic that already has a live publisher (naming its
  /// pids: its messages and the played ones interleave). Null: nowhere. Outlives the playback.
  EventSink* events = nullptr;
};

/// Where a playback is.
struct PlaybackProgress {
  std::uint64_t published = 0;    ///< messages, all passes together
  std::uint64_t position_ns = 0;  ///< log time since the start of the played span
  std::uint64_t duration_ns = 0;  ///< of the played span
  std::uint64_t pass = 0;         ///< 0 for the first, 1 for the first loop...
};

/// Messages published on one topic.
struct PlaybackTopicCounts {
  std::string topic;
  std::uint64_t published = 0;
};

namespace detail {
class PlaybackImpl;
}

/// One playback of one recording. Move-only.
class Playback {
 public:
  /// Takes the reader (its problems found so far are the caller's: Reader::problems()). NotFound
  /// when the selection takes none of its topics; InvalidArgument for a rate that is not positive
  /// or a pattern that is not a regular expression, InvalidTopicName for a malformed named topic.
  static Result<Playback> create(recorder::Reader reader, PlaybackOptions options);
  Playback(Playback&&) noexcept;
  Playback& operator=(Playback&&) noexcept;
  ~Playback();

  /// Plays to the end (with `loop`, until cancelled). An error names the topic it came from
  /// ("cannot publish on '/x': ..."); what was published before it stays published.
  [[nodiscard]] Status run();

  /// Where it is now; any thread may ask while run() plays.
  PlaybackProgress progress() const;
  /// Messages published, all topics and passes together.
  std::uint64_t published() const;
  /// Passes over the recording begun.
  std::uint64_t passes() const;
  /// Whether the cancel flag ended it.
  bool interrupted() const;
  /// Per-topic counts, in channel order. Asked once run() returned.
  std::vector<PlaybackTopicCounts> counts() const;

 private:
  explicit Playback(std::unique_ptr<detail::PlaybackImpl> impl);
  std::unique_ptr<detail::PlaybackImpl> impl_;
};

}  // namespace cerulion::recording
