// SPDX-License-Identifier: Apache-2.0
#pragma once
// The measured loop: warm-up and N round trips over a Requester, paced on a slot grid. This is
// the only part of a measurement on the hot path; ping.hpp wraps it with the responder, CPU
// pinning and the resource meter.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::measurement {

struct RoundTripPlan {
  std::uint64_t size = 64;     ///< request bytes (>= kStampBytes)
  double rate_hz = 100;        ///< slot grid; 0 = back to back
  std::uint64_t count = 2000;  ///< measured round trips
  std::uint64_t warmup = 100;  ///< round trips before measuring (not counted anywhere)
  /// A reply later than this is lost; also bounds prepare() and send().
  std::chrono::nanoseconds timeout = std::chrono::seconds(5);
  const std::atomic<bool>* cancel = nullptr;
  /// Called once when the warm-up is done, off the timed path, with the responder's pid when a
  /// reply told it (0 otherwise): start CPU meters here.
  std::function<void(std::int64_t responder_pid)> on_measured_start;
  /// Asked after a reply went missing: false ends the run (responder_gone) instead of waiting
  /// out the timeout on every slot. Unset: the requester's responder_present().
  std::function<bool()> responder_alive;
  /// Keep each measured round trip's TripTrace (a requester created with trace_waits).
  bool trace = false;
};

struct RoundTrips {
  std::vector<std::uint64_t> samples_ns;  ///< measured round trips, in send order
  /// The requests' one-way latencies, where replies carried them (Reply::request_leg_ns).
  std::vector<std::uint64_t> request_legs_ns;
  std::uint64_t lost = 0;                 ///< requests that got no reply within the timeout
  std::uint64_t skipped = 0;              ///< measured-phase grid slots already past at their turn
  bool responder_gone = false;            ///< the responder died or left mid-run
  bool interrupted = false;               ///< the cancel flag was set
  std::uint64_t measured_start_ns = 0;    ///< monotonic_ns() at the end of the warm-up, 0 if never
  std::uint64_t end_ns = 0;               ///< monotonic_ns() when the loop ended
  std::int64_t responder_pid = 0;         ///< from the replies, 0 when unknown
  Status error;                           ///< a transport failure that ended the run early
  std::vector<TripTrace> traces;          ///< with RoundTripPlan::trace: one per sample, in its order
};

/// Runs the warm-up and the measured round trips on the calling thread (pin it first). The native
/// transport runs a loop compiled for it (no virtual call per round trip); others go through the
/// Requester interface.
[[nodiscard]] RoundTrips run_round_trips(Requester& requester, const RoundTripPlan& plan);

}  // namespace cerulion::measurement
