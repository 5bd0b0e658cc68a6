#pragma once
// Pinning the workers of a latency measurement to CPUs of their own, as the floor benchmark
// (limit-pingpong) does. Unpinned, the scheduler may queue a worker that wakes up behind its peer
// while the peer polls, which on a 2-vCPU VM delays round trips by the whole poll window.

#include <optional>
#include <string>
#include <vector>

namespace cerulion::cli {

/// The CPUs for ping and for pong; nullopt = leave that worker unpinned.
struct CpuPlan {
  std::optional<int> ping;
  std::optional<int> pong;
};

/// CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

/// Throws CLI::ValidationError for `option` unless this process may run on `cpu`.
void require_allowed_cpu(int cpu, const std::string& option);

/// Parses --cpus: "auto" (the first two allowed CPUs, if there are two), "none", or "A,B".
/// Throws CLI::ValidationError naming the problem (a usage error).
CpuPlan parse_cpu_plan(const std::string& text);

/// Pins the calling thread to `cpu`; false (and nothing changed) if the system refuses.
bool pin_current_thread(int cpu);

/// "0/1", "0/-", "none": for the report header.
std::string describe(const CpuPlan& plan);

}  // namespace cerulion::cli
