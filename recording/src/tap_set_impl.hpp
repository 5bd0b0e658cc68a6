// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inside a TapSet: the opened topics, the reader threads (pooled ones that poll them, or one per
// topic that waits on it) and the discovery thread that opens new ones. tap_set.cpp opens and
// discovers; tap_readers.cpp reads.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/removed_topics.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/recording/tap_set.hpp"

namespace cerulion::recording::detail {

/// One opened topic. The counters are written by the one reader thread that owns the tap.
struct Tap {
  Tap(Subscriber s, std::size_t i) : subscriber(std::move(s)), index(i), created_realtime_ns(subscriber.created_realtime_ns()) {}
  Subscriber subscriber;
  std::size_t index;
  std::uint64_t created_realtime_ns;  ///< tells the topic it reads from others of the same name
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> missed{0};
  std::atomic<std::uint64_t> dropped{0};
  bool announced = false;  ///< on_topic was called (reader thread only)
};

class TapSetImpl {
 public:
  TapSetImpl(TapSetOptions options, TopicMatcher matcher, SampleSink& sink);
  ~TapSetImpl() { stop(); }

  /// Opens `topic` (a canonical name) unless it is open already.
  Status open(const std::string& topic, StartAt start);
  void start();
  void stop();
  Status read_ready();

  std::vector<TopicCounts> counts() const;
  std::vector<TopicDescription> topics() const;
  std::vector<RemovedUnread> take_removed_unread();

 private:
  /// Lists the domain and opens what the selection wants.
  void discover();
  void discovery_loop(std::optional<TopicWatch> watch);
  /// Counts the topics the selection wants that came and went before they were opened (the
  /// domain's log of removed topics), and says so.
  void account_removed();
  /// A pooled reader: polls its share of the taps.
  void reader_loop(unsigned which);
  /// A per-topic reader: waits on its one tap.
  void topic_loop(Tap& tap);
  /// Starts the per-topic reader of `tap` (mutex_ held).
  void start_topic_reader(Tap& tap);
  /// Reads what `tap` has ready (a bounded number, so that one busy topic cannot starve the
  /// others); the number of samples read.
  std::size_t drain(Tap& tap);
  /// Hands one sample to the sink, counted.
  void deliver(Tap& tap, const Sample& sample);
  void announce(Tap& tap);
  /// Tells the events sink, unless the same was said about `subject` already.
  void report(EventKind kind, const std::string& subject, const std::string& message);

  TapSetOptions options_;
  SampleSink& sink_;
  TopicMatcher matcher_;
  /// Topics created at or after this moment are read from their first message.
  std::uint64_t created_realtime_ns_ = 0;
  std::atomic<bool> stop_{false};
  bool started_ = false;  ///< guarded by mutex_

  mutable std::mutex mutex_;  // guards taps_ (the vector), descriptions_, open_names_, said_
  std::vector<std::unique_ptr<Tap>> taps_;
  std::vector<TopicDescription> descriptions_;
  std::set<std::string> open_names_;
  std::set<std::string> said_;  // subject and message of each event said
  /// Per topic name, messages of topics removed before they were opened (counted as missed).
  std::map<std::string, std::uint64_t> removed_unread_;
  std::vector<RemovedUnread> removed_untaken_;  ///< not yet handed to take_removed_unread()
  /// taps_.size() as the reader threads may see it: published after a tap is complete.
  std::atomic<std::size_t> tap_count_{0};

  std::vector<std::thread> readers_;  ///< guarded by mutex_ once started (per-topic ones are added)
  std::thread discovery_;
  /// Heard from while the set follows new topics (discovery thread only, after start()).
  std::optional<RemovedTopicLog> removed_;
  std::uint64_t removed_overrun_said_ = 0;
};

}  // namespace cerulion::recording::detail
