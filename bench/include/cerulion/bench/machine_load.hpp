// SPDX-License-Identifier: Apache-2.0
#pragma once
// How busy the machine is when a campaign starts. On a machine whose CPUs other work holds, the
// workers wake late, cells skip slots, fall back to 50 and 20 Hz or fail, and the medians are the
// neighbours' as much as cerulion's: a report says so rather than leaving it to be guessed. Two
// readings tell it: the load average, and the floor (bench/floor.hpp) measured on the workers' CPUs.

#include <optional>
#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/cpu_pinning.hpp"
#include "cerulion/measurement/statistics.hpp"

namespace cerulion::bench {

struct LoadAverage {
  double one = 0, five = 0, fifteen = 0;  ///< runnable tasks averaged over 1, 5 and 15 minutes
};

/// Parses the text of /proc/loadavg; InvalidArgument when it is not one.
[[nodiscard]] Result<LoadAverage> parse_load_average(std::string_view text);
/// Reads /proc/loadavg.
[[nodiscard]] Result<LoadAverage> read_load_average();

/// What is judged busy: either reading is enough.
struct LoadLimits {
  /// Busy when the 1-minute load average (runnable tasks, the campaign's not yet among them)
  /// reaches this many per CPU: a worker that wakes finds no idle CPU.
  double load_per_cpu = 1;
  /// Busy when the floor's p99 reaches this: a worker waking this late is a worker kept off its CPU.
  double floor_p99_us = 1000;
};

struct MachineLoad {
  bool checked = false;              ///< false: not measured (an older report)
  unsigned cores = 0;
  std::optional<LoadAverage> before;  ///< when the campaign started
  std::optional<LoadAverage> after;   ///< when it ended (its own workers included)
  /// The futex floor on the workers' CPUs, µs; count 0 when not measured (floor_error says why).
  measurement::Summary floor;
  std::string floor_error;
  bool busy = false;
  std::string why;                   ///< what made it busy, one phrase per reading
};

/// Sets `load.busy` and `load.why` from the readings in `load` (before and floor; `after`
/// includes the campaign's own workers, so it is shown, not judged).
void judge_load(MachineLoad& load, const LoadLimits& limits = {});

/// Reads the load average and measures the futex floor (300 round trips at 500 Hz, pinned as the
/// workers are), then judges them.
[[nodiscard]] MachineLoad check_machine_load(const measurement::CpuPlan& cpus, const LoadLimits& limits = {});

/// One line for a person: "load average 0.12 (2 CPUs), floor median 131 µs, p99 402 µs" and,
/// when busy and `verdict`, ": BUSY (why)".
[[nodiscard]] std::string describe_load(const MachineLoad& load, bool verdict = true);

}  // namespace cerulion::bench
