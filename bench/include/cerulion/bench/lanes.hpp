// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lanes of the campaign: cerulion's own (two processes in free run or lockstep, one process,
// flashback on) and the transports it answers (Fast DDS as ROS 2 uses it by default, iceoryx).

#include <string>
#include <vector>

namespace cerulion::bench {

struct Lane {
  std::string name;          ///< "native-multi", "fastdds-single"...
  std::string description;   ///< one line for tables
  std::string transport;     ///< "native", "fastdds", "iceoryx"
  std::string process;       ///< "multi" or "single"
  std::string mode;          ///< native lanes: "free-run" or "lockstep"
  std::string wait;          ///< the lane's own wait ("spin": busy poll); empty: the campaign's
  bool native = false;       ///< cerulion's own (flashback applies; regressions are checked)
  bool available = true;
  std::string reason;        ///< why not available
};

/// Every lane the campaign knows, in table order, all marked available.
std::vector<Lane> known_lanes();

/// "64 B", "1 MiB", "16 MiB".
std::string size_label(std::uint64_t bytes);

}  // namespace cerulion::bench
