// SPDX-License-Identifier: Apache-2.0
#pragma once
// Not the user API: shared by cerulion's own libraries (core's segments, flashback's store).
//
// Is a participant's process still the one that joined? A pid alone is not enough: pids are
// reused, so the process start time recorded at join must match too.

#include <cstdint>
#include <optional>
#include <sys/types.h>

namespace cerulion::detail {

/// The start time of `pid` (field 22 of /proc/<pid>/stat, clock ticks since boot), or nullopt if
/// there is no such process or it is a zombie.
std::optional<std::uint64_t> process_start_time(pid_t pid);

/// True while `pid` exists and started at `start_time` (0 = unknown: pid existence only). A process
/// of another pid namespace (`pid_namespace` set and not ours, e.g. a container sharing /dev/shm)
/// cannot be judged from here and is presumed alive.
bool process_alive(pid_t pid, std::uint64_t start_time, std::uint32_t pid_namespace);

/// The inode of this process's pid namespace (/proc/self/ns/pid), 0 if unknown (cached).
std::uint32_t own_pid_namespace();

/// This process's start time (cached per pid, so a forked child reads its own).
std::uint64_t own_start_time();

}  // namespace cerulion::detail
