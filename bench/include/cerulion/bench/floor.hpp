// SPDX-License-Identifier: Apache-2.0
#pragma once
// The machine's floor for a round trip between two processes (docs/benchmark-method.md): they
// share one anonymous page and nothing else (no segment, no ring, no wait strategy). The requester
// stores a round-trip number in one cache line and the responder answers with it in another. With
// futex waiting the waiting side sleeps in the kernel, as a subscriber waiting for a 100 Hz topic
// must; spinning, it polls, and only the cache-line transfer is left. cerulion's figures are read
// against it, and `cerulion bench` measures it before a campaign to tell a busy machine.

#include <cstdint>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/cpu_pinning.hpp"
#include "cerulion/measurement/statistics.hpp"

namespace cerulion::bench {

struct FloorOptions {
  bool spin = false;             ///< poll instead of sleeping in futex_wait
  double rate_hz = 100;          ///< requests on a grid at this rate; 0: back to back
  std::uint32_t samples = 1000;  ///< measured round trips (one more runs first, not measured)
  measurement::CpuPlan cpus;     ///< requester on `ping`, responder on `pong`
};

/// Forks the responder, runs the round trips and returns their summary in µs. SystemError when
/// the page cannot be mapped or the responder cannot be started.
[[nodiscard]] Result<measurement::Summary> measure_floor(const FloorOptions& options);

}  // namespace cerulion::bench
