// SPDX-License-Identifier: Apache-2.0
#pragma once
// Taps as a set: one object reads named topics, every topic of a domain, or topics matching
// patterns (including topics that appear later), by default with a fixed small number of threads
// however many topics there are, and hands each sample to a sink. It counts, per topic, what it
// missed (overwritten before it read them) and what the sink dropped.
//
//   struct Print : cerulion::recording::SampleSink { ... };
//   Print sink;
//   auto taps = cerulion::recording::TapSet::create({.selection = {.all = true}}, sink);
//   taps->start();  ...  taps->stop();

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/recording/events.hpp"
#include "cerulion/recording/topic_selection.hpp"

namespace cerulion::recording {

/// How a tap set's threads read its topics.
enum class Readers : std::uint8_t {
  /// A few threads (TapSetOptions::threads) poll every topic, backing off while nothing comes: a
  /// sample waits up to a millisecond, however many topics there are.
  Pooled,
  /// A thread per topic, blocked in the topic's own wait: a sample is handed on as soon as it is
  /// published, at the cost of a thread per topic (what the bridge uses).
  PerTopic,
};

/// Settings of a tap set; defaults are the recommendation.
struct TapSetOptions {
  /// Which topics (see TopicSelection: a named topic is read whatever the exclusions say).
  TopicSelection selection;
  /// Domain; default $CERULION_DOMAIN or "default".
  std::string domain = default_domain();
  /// Join as lockstep subscribers instead of taps: nothing is missed, and a sink that waits holds
  /// the publishers back.
  bool lockstep = false;
  /// How the topics are read.
  Readers readers = Readers::Pooled;
  /// Reader threads of Readers::Pooled, whatever the number of topics.
  unsigned threads = 2;
  /// How a thread of Readers::PerTopic waits in its topic: adaptive polls when it expects a
  /// message; Block never polls, for a set that must leave the CPU to the processes it reads (a
  /// verification on a small machine).
  WaitStrategy wait = WaitStrategy::Adaptive;
  /// Readers::PerTopic with adaptive taps: each also polls where its topic's next message is due
  /// (SubscriberOptions::poll_when_due), so a sample is handed on as it is published, at up to
  /// the adaptive CPU budget per topic. For a live view; a recorder has no use for it.
  bool poll_when_due = false;
  /// Only these topics read from the topic's first message; others start with the next one.
  /// (Topics that appear after start() always start from their first message.)
  StartAt start = StartAt::Next;
  /// Where the set says what it reads and what it cannot (a topic that matched but does not open,
  /// a damaged listing entry, a type it cannot read), each once; null: nowhere. Outlives the set.
  EventSink* events = nullptr;
};

/// A topic as the set reads it, given to the sink before its first sample.
struct TopicDescription {
  std::size_t index = 0;        ///< 0, 1, ... in the order topics were opened
  std::string topic;
  std::string domain;
  Mode mode = Mode::Lockstep;
  std::uint32_t depth = 0;
  std::uint64_t max_payload = 0;
  /// What its messages are, as declared when its first sample was read (raw bytes until then).
  TopicType type;
};

/// One sample, valid during the call.
struct TappedSample {
  std::size_t topic_index = 0;
  std::uint64_t sequence = 0;
  std::uint64_t publish_time = 0;   ///< realtime ns at publish
  std::uint64_t log_time = 0;       ///< realtime ns when the set read it
  std::uint32_t publisher_pid = 0;
  std::uint64_t lost_before = 0;    ///< missed just before this one
  std::span<const std::byte> data;
};

/// Where samples go. Called from the set's threads (concurrently for different topics).
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  /// A topic is about to deliver its first sample.
  virtual void on_topic(const TopicDescription& topic) = 0;
  /// false = dropped (counted as dropped for the topic). May wait (lockstep sets hold publishers).
  virtual bool on_sample(const TappedSample& sample) = 0;
};

/// Counters of one topic.
struct TopicCounts {
  std::string topic;
  std::uint64_t received = 0;  ///< handed to the sink
  /// Overwritten before they were read; and, for a set that follows new topics, published in a
  /// topic of this name that came and went before the set could open it (said as a warning).
  std::uint64_t missed = 0;
  std::uint64_t dropped = 0;   ///< refused by the sink
  /// The topic's own count of messages published (Subscriber::published), read when counted:
  /// it moves while publishers publish, however far behind the taps are.
  std::uint64_t published = 0;
};

/// A topic of a following set's selection that came and went before the set could open it.
struct RemovedUnread {
  std::string topic;
  std::uint64_t messages = 0;  ///< all it held: missed (counted in TopicCounts::missed too)
  std::uint64_t removed_realtime_ns = 0;
};

namespace detail {
class TapSetImpl;
}

/// Move-only. The destructor stops the threads.
class TapSet {
 public:
  /// Opens the named topics (InvalidTopicName, NotFound... naming the topic) and checks the
  /// patterns (InvalidArgument naming the bad one). Reads nothing until start().
  static Result<TapSet> create(TapSetOptions options, SampleSink& sink);
  TapSet(TapSet&&) noexcept;
  TapSet& operator=(TapSet&&) noexcept;
  ~TapSet();

  /// Starts the reader threads and the discovery of new topics.
  void start();
  /// Stops reading; returns once no sink call is in progress.
  void stop();
  /// Reads on the calling thread, instead of start()'s threads: each topic's samples ready now,
  /// up to the last one published when it is reached, handed to the sink in order. For a reader
  /// that must catch up at once, at its own priority, with what other readers have not taken yet
  /// (a flashback dump). The first read error, if any (the other topics are read all the same).
  Status read_ready();

  /// One entry per topic opened, in their order (TopicDescription::index), then one per topic that
  /// came and went without being opened.
  std::vector<TopicCounts> counts() const;
  std::vector<TopicDescription> topics() const;
  /// The topics that came and went unread since the last call, oldest first: for a reader that
  /// keeps its own account (a flashback store) rather than asking counts().
  std::vector<RemovedUnread> take_removed_unread();

 private:
  explicit TapSet(std::unique_ptr<detail::TapSetImpl> impl);
  std::unique_ptr<detail::TapSetImpl> impl_;
};

}  // namespace cerulion::recording
