// SPDX-License-Identifier: Apache-2.0
#include "stall_watch.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace cerulion::flashback::detail {

std::optional<std::string> StallWatch::look(std::uint16_t channel, const ChannelActivity& activity,
                                            std::uint64_t now_realtime_ns) {
  Channel& c = channels_[channel];
  const bool stored_moved = activity.stored != c.stored;
  c.stored = activity.stored;
  if (stored_moved) c.peak_rate_hz = std::max(c.peak_rate_hz, activity.rate_hz);
  // The publishers' own count says whether they moved; what the store took says so only when the
  // topic is not tapped. A late keeper still storing its backlog after the publishers stopped must
  // not re-arm the watch once per stored message.
  bool publishers_moved = stored_moved;
  if (activity.published) {
    publishers_moved = *activity.published != c.published;
    if (publishers_moved) {
      c.published = *activity.published;
      c.moved_realtime_ns = now_realtime_ns;
    }
  }
  if (publishers_moved) {
    c.stalled = false;
    return std::nullopt;
  }
  const bool steady = activity.stored >= kSteadyMessages && c.peak_rate_hz * stall_s_ >= kSteadyMessagesPerStall;
  if (!steady || c.stalled || activity.last_stored_realtime_ns == 0) return std::nullopt;
  const std::uint64_t last_heard = std::max(activity.last_stored_realtime_ns, c.moved_realtime_ns);
  if (now_realtime_ns < last_heard + static_cast<std::uint64_t>(stall_s_ * 1e9)) return std::nullopt;
  c.stalled = true;
  std::string line = fmt::format("{} silent for {:.1f} s (it had {:.1f} Hz)", activity.topic,
                                 static_cast<double>(now_realtime_ns - last_heard) / 1e9, c.peak_rate_hz);
  c.peak_rate_hz = 0;
  return line;
}

}  // namespace cerulion::flashback::detail
