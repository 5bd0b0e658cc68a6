// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fast DDS's shared-memory files of processes that are gone. A Fast DDS participant that stops
// removes its own /dev/shm/fastrtps_* files; one killed by SIGKILL leaves them, and Fast DDS does
// not remove another process's segments when a new participant starts. Each segment and port has
// a lock file ("_el", "_sl") that its live owner holds (flock), so a file whose lock is free
// belongs to nobody: this is what Fast DDS's own `fastdds shm clean` (package fastdds-tools)
// removes, done here so that a program that killed a Fast DDS child can clean up after it.

#include <chrono>
#include <cstddef>
#include <string>

namespace cerulion::measurement {

/// Removes the Fast DDS segments under `dir` whose locks no live process holds, leaving alone
/// those changed within `settle` (a participant starting now may not hold its lock yet) and other
/// users' files. Returns how many segments it removed.
std::size_t remove_dead_fastdds_files(std::chrono::seconds settle = std::chrono::seconds(2),
                                      const std::string& dir = "/dev/shm");

}  // namespace cerulion::measurement
