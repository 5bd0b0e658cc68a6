// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pinning the workers of a latency measurement to CPUs of their own, as the floor benchmark
// (bench/tools/floor_pingpong.cpp) does. Unpinned, the scheduler may queue a worker that wakes up behind its peer
// while the peer polls, which on a 2-vCPU VM delays round trips by the whole poll window.

#include <optional>
#include <sys/types.h>
#include <string>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::measurement {

/// The CPUs for ping and for pong; nullopt = leave that worker unpinned.
struct CpuPlan {
  std::optional<int> ping;
  std::optional<int> pong;
};

/// CPUs this process may run on (sched_getaffinity), ascending.
[[nodiscard]] std::vector<int> allowed_cpus();
/// CPUs process `pid` may run on, ascending; empty when that cannot be read.
[[nodiscard]] std::vector<int> allowed_cpus_of(pid_t pid);

/// Whether this process may run on `cpu`; the error says which CPUs it may use.
[[nodiscard]] Status check_allowed_cpu(int cpu);

/// "auto" (the first two allowed CPUs, if there are two; else unpinned), "none", or "A,B".
/// InvalidArgument naming the problem.
[[nodiscard]] Result<CpuPlan> parse_cpu_plan(const std::string& text);

/// Pins the calling thread to `cpu`; false (and nothing changed) if the system refuses.
[[nodiscard]] bool pin_current_thread(int cpu);

/// "0/1", "0/-", "none": for report headers.
[[nodiscard]] std::string describe(const CpuPlan& plan);

}  // namespace cerulion::measurement
