// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a measurement costs: CPU time of a thread or a process over the measured phase, and peak
// resident memory. A process's CPU time comes from its CPU clock (nanoseconds, where /proc/PID/stat
// counts 10 ms ticks), its memory from /proc: a process in another pid namespace reads as 0.

#include <cstdint>
#include <ctime>
#include <pthread.h>
#include <sys/types.h>

namespace cerulion::measurement {

/// Below this, another process's CPU time is not worth quoting: while it runs without a context
/// switch the kernel updates it once a scheduler tick (4 ms at 250 Hz, 10 ms at 100 Hz).
inline constexpr std::uint64_t kOtherProcessCpuResolutionNs = 100'000'000;

/// CPU time (user + system) a process has used so far, in ns (0 when unreadable).
[[nodiscard]] std::uint64_t process_cpu_ns(pid_t pid);
/// Peak resident memory of a process in bytes (VmHWM), 0 if unknown.
[[nodiscard]] std::uint64_t process_peak_rss(pid_t pid);

/// CPU time of one thread or process between start() and percent().
class CpuMeter {
 public:
  CpuMeter() = default;  ///< measures nothing: percent() is 0
  /// The thread that calls start() and percent() (both must be called from it).
  [[nodiscard]] static CpuMeter calling_thread();
  /// Another thread of this process.
  [[nodiscard]] static CpuMeter thread(pthread_t thread);
  [[nodiscard]] static CpuMeter process(pid_t pid);

  /// CPU time consumed so far, ns (0 when unreadable).
  [[nodiscard]] std::uint64_t cpu_ns() const;
  /// The measured interval starts now.
  void start() { start_ns_ = cpu_ns(); }
  /// CPU time since start() as a percentage of `wall_ns`; 0 when unreadable.
  [[nodiscard]] double percent(std::uint64_t wall_ns) const;
  [[nodiscard]] bool valid() const noexcept { return kind_ != Kind::None; }

 private:
  enum class Kind { None, Clock, Process };
  Kind kind_ = Kind::None;
  clockid_t clock_{};
  pid_t pid_ = 0;
  std::uint64_t start_ns_ = 0;
};

}  // namespace cerulion::measurement
