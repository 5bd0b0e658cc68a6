// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a run collects from the command: the tap set's sink that keeps each output message with
// the input that preceded it, and lets the runner wait for counts or for quiet.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/recording/tap_set.hpp"
#include "cerulion/verify/messages.hpp"

namespace cerulion::verify {

class OutputCollector final : public recording::SampleSink {
 public:
  using Clock = std::chrono::steady_clock;

  /// Collects `outputs`, in that order.
  explicit OutputCollector(const std::vector<std::string>& outputs);

  void on_topic(const recording::TopicDescription& topic) override;
  bool on_sample(const recording::TappedSample& sample) override;

  /// Labels what comes from now on with `input` ("/imu #3"), the `inputs_before`-th input of the
  /// run; now counts as activity for wait_quiet.
  void set_input(std::string input, std::uint64_t inputs_before);
  /// Waits until output o has at least counts[o] messages, for every o, or `deadline`: nullopt
  /// when they have, else the first output short of its count.
  std::optional<std::size_t> wait_for_counts(const std::vector<std::uint64_t>& counts, Clock::time_point deadline);
  /// Waits until nothing came for `quiet` since the last message or set_input(), or `deadline`:
  /// whether it is quiet.
  bool wait_quiet(std::chrono::milliseconds quiet, Clock::time_point deadline);
  /// Messages of output o so far.
  std::uint64_t count(std::size_t o) const;
  /// What was collected (call once the taps stopped).
  MessageSet take();

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  MessageSet outputs_;
  std::map<std::size_t, std::size_t> by_tap_index_;  // TopicDescription::index -> outputs_ index
  std::string input_;
  std::uint64_t inputs_before_ = 0;
  Clock::time_point last_activity_ = Clock::now();
};

}  // namespace cerulion::verify
