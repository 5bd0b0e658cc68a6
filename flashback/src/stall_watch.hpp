// SPDX-License-Identifier: Apache-2.0
#pragma once
// The stall trigger's decision, apart from the keeper's threads so it can be tested with made-up
// clocks: a topic has stalled when its publishers have been silent for the stall time, after a
// steady rate. The keeper's own lateness is no silence: a keeper short of CPU stores late, but the
// topic's published count still moves.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cerulion::flashback::detail {

/// One look at one channel.
struct ChannelActivity {
  std::string topic;
  std::uint64_t stored = 0;                  ///< messages the store has taken
  std::optional<std::uint64_t> published;    ///< by the topic's publishers; none when not tapped
  std::uint64_t last_stored_realtime_ns = 0; ///< log time of the newest stored message, 0 if none
  double rate_hz = 0;                        ///< recent stored rate
};

class StallWatch {
 public:
  /// A topic needs this many stored messages, and a rate giving this many in the stall time,
  /// before its silence counts: a topic that sends now and then never "stalls".
  static constexpr std::uint64_t kSteadyMessages = 10;
  static constexpr double kSteadyMessagesPerStall = 3;

  explicit StallWatch(double stall_s) : stall_s_(stall_s) {}

  /// Looks at `channel` at `now_realtime_ns`; the stall's description when this look finds it
  /// newly stalled (once per silence), else nothing.
  std::optional<std::string> look(std::uint16_t channel, const ChannelActivity& activity,
                                  std::uint64_t now_realtime_ns);

 private:
  struct Channel {
    std::uint64_t stored = 0;
    std::uint64_t published = 0;
    std::uint64_t moved_realtime_ns = 0;  // when its published count was last seen to change
    double peak_rate_hz = 0;              // the rate it had, for when it stops
    bool stalled = false;                 // reported for this silence already
  };
  double stall_s_;
  std::map<std::uint16_t, Channel> channels_;
};

}  // namespace cerulion::flashback::detail
