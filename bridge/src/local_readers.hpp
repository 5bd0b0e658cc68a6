// SPDX-License-Identifier: Apache-2.0
// The export side's readers of local topics: one thread per topic, blocked in the topic's own wait
// (so a message goes out as soon as it is published, where a polling tap set would add up to a
// millisecond), and discovery of topics that appear later (inotify on the domain, else polling).
// Samples go to a recording::SampleSink, as a tap set's would.

#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cerulion/core/subscriber.hpp"
#include "cerulion/recording/tap_set.hpp"
#include "selection.hpp"

namespace cerulion::bridge::detail {

class LocalReaders {
 public:
  /// `lockstep`: join as subscribers (publishers wait for the bridge); otherwise as taps.
  LocalReaders(const Selection& selection, std::vector<std::string> named, std::string domain, bool lockstep,
               recording::SampleSink& sink)
      : selection_(selection), named_(std::move(named)), domain_(std::move(domain)), lockstep_(lockstep),
        sink_(sink) {}
  ~LocalReaders() { stop(); }

  /// Opens the named topics (each must open: InvalidTopicName, PermissionDenied... naming it).
  [[nodiscard]] Status open_named();
  /// Starts the readers and the discovery of new topics.
  void start();
  /// Stops every thread; no sink call runs once it returns.
  void stop();
  std::vector<recording::TopicCounts> counts() const;
  std::vector<std::string> problems() const;

 private:
  struct Reader {
    std::size_t index = 0;
    std::string topic;
    std::unique_ptr<Subscriber> subscriber;
    std::thread thread;
    std::atomic<std::uint64_t> received{0}, missed{0}, dropped{0};
  };
  Status open(const std::string& topic);
  void read(Reader& r);
  void discover();
  void problem(std::string line);

  const Selection& selection_;
  std::vector<std::string> named_;
  std::string domain_;
  bool lockstep_;
  recording::SampleSink& sink_;
  std::atomic<bool> stop_{false};
  bool started_ = false;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Reader>> readers_;
  std::set<std::string> tried_;  ///< opened, or said why not (once)
  std::vector<std::string> problems_;
  std::thread discovery_;
};

}  // namespace cerulion::bridge::detail
