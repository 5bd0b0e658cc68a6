// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rate of a topic's messages over its last periods, from their publish times: what
// `cerulion topic hz` reports each second, as ros2 topic hz does (rate, min, max, std dev).

#include <cstddef>
#include <cstdint>
#include <deque>

#include "cerulion/core/subscriber.hpp"

namespace cerulion::measurement {

/// A RateWindow's figures at one moment. Periods in seconds.
struct RateReport {
  double rate_hz = 0;  ///< 1 / the mean period; 0 before two messages
  double min_period_s = 0;
  double max_period_s = 0;
  double std_dev_s = 0;             ///< of the periods (population)
  std::size_t window = 0;           ///< how many periods the figures are over
  std::uint64_t new_messages = 0;   ///< messages added since the previous report
};

/// Rolling statistics over the last `window` periods between messages.
class RateWindow {
 public:
  explicit RateWindow(std::size_t window) : window_(window) {}

  /// Adds message number `sequence`, published at `publish_ns` (CLOCK_MONOTONIC). A gap in the
  /// sequence (a tap missed messages) is spread over the messages it spans; a message older than
  /// the previous one adds no period.
  void add(std::uint64_t sequence, std::uint64_t publish_ns);
  void add(const Sample& sample) { add(sample.sequence(), sample.publish_time_ns()); }

  /// The figures now; new_messages counts afresh from here.
  [[nodiscard]] RateReport report();

 private:
  std::size_t window_;
  std::deque<double> periods_;
  bool has_previous_ = false;
  std::uint64_t previous_sequence_ = 0;
  std::uint64_t previous_time_ = 0;
  std::uint64_t new_messages_ = 0;
};

}  // namespace cerulion::measurement
