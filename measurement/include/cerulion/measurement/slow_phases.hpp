// SPDX-License-Identifier: Apache-2.0
#pragma once
// Slow phases of a run (`cerulion ping --explain-tail`): stretches of windows of round trips whose
// median is far above the run's best windows, and, for each, which side's plan missed and how.
// The tail breakdown (tail_explain.hpp) cannot see a phase: it explains round trips over a
// multiple of the run's median, and in a run that is mostly a phase the median is the phase.
// Arithmetic on times only, tested on made-up clocks (tests/measurement/test_slow_phases.cpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cerulion/measurement/tail_explain.hpp"

namespace cerulion::measurement {

/// How slow phases are found: windows of `window` round trips; a window is slow when its median
/// is over both `floor_us` and `factor` x the median of the run's fastest window.
struct SlowPhaseRule {
  std::size_t window = 250;
  double floor_us = 50;
  double factor = 5;
};

/// One side's waits in a phase (the responder's for the requests, the requester's for the replies).
struct PhaseSide {
  std::size_t waits = 0;   ///< waits that recorded a trace
  std::size_t missed = 0;  ///< of them, delivered by a futex wake-up (not caught by a poll)
  std::size_t fallen_back = 0;  ///< of them, planned none: fallen back to blocking (or unlearnt)
  LateCause cause = LateCause::NotRunning;  ///< the most frequent cause among the missed
  /// Medians over the waits that planned: arrival (publish) minus prediction (negative: early),
  /// the sleep's margin before the prediction, the poll window past it, the timed sleep's
  /// lateness (those that slept to their timer).
  double arrival_minus_predicted_us = 0, margin_us = 0, window_us = 0, oversleep_us = 0;
};

struct SlowPhase {
  std::size_t first = 0, end = 0;  ///< round trips [first, end) of the run
  double median_us = 0;            ///< of its round trips
  PhaseSide responder, requester;
};

struct SlowPhases {
  SlowPhaseRule rule;
  std::size_t windows = 0;           ///< whole windows in the run
  double fastest_window_us = 0;      ///< the fastest window's median
  std::vector<SlowPhase> phases;
};

/// The slow phases of round trips `samples_ns` whose traces are `trips` (as explain_tail's).
[[nodiscard]] SlowPhases find_slow_phases(const std::vector<std::uint64_t>& samples_ns,
                                          const std::vector<TripTrace>& trips, SlowPhaseRule rule = {});

}  // namespace cerulion::measurement
