// SPDX-License-Identifier: Apache-2.0
#include "cerulion/bench/lanes.hpp"

#include <fmt/core.h>

namespace cerulion::bench {

std::vector<Lane> known_lanes() {
  auto lane = [](const char* name, const char* description, const char* transport, const char* process,
                 const char* mode, bool native, const char* wait = "") {
    Lane l;
    l.name = name;
    l.description = description;
    l.transport = transport;
    l.process = process;
    l.mode = mode;
    l.native = native;
    l.wait = wait;
    return l;
  };
  return {
      lane("native-multi", "cerulion, two processes, free run, flashback on", "native", "multi", "free-run", true),
      lane("native-multi-lockstep", "cerulion, two processes, lockstep (the default), flashback on", "native", "multi",
           "lockstep", true),
      lane("native-single", "cerulion, one process, flashback on", "native", "single", "lockstep", true),
      lane("fastdds-multi", "Fast DDS (ROS 2's default transport), two processes, ROS 2 default QoS", "fastdds",
           "multi", "", false),
      lane("fastdds-single", "Fast DDS, one process, intra-process delivery", "fastdds", "single", "", false),
      lane("iceoryx-multi", "iceoryx, two processes, zero-copy, RouDi, waiting in a WaitSet", "iceoryx", "multi", "",
           false),
      // iceoryx's own latency benchmark polls: this lane is what to set cerulion's spin wait against.
      lane("iceoryx-multi-poll", "iceoryx, two processes, zero-copy, RouDi, busy poll", "iceoryx", "multi", "", false,
           "spin"),
  };
}

std::string size_label(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

}  // namespace cerulion::bench
