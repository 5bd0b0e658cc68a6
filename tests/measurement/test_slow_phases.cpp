// SPDX-License-Identifier: Apache-2.0
// Slow phases of a run on made-up clocks: which windows are slow, how they join into phases, and
// what each side's waits in a phase say about its plan.

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "cerulion/measurement/slow_phases.hpp"

using namespace cerulion;
using namespace cerulion::measurement;

// A named namespace: the test sources are built as one unit, beside test_tail_explain.cpp's kUs.
namespace slow_phases_test {

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kPeriod = 10'000 * kUs;
constexpr std::uint64_t kBase = 1'000'000'000;

/// Round trip `i` of a run whose trips [slow_from, slow_to) are in issue 55's phase: the requester
/// predicted its reply 600 µs after the slot and polled 500 µs past that, then blocked; the pong
/// slept through its timer, woken by the request's futex wake-up, and replied once the ping blocked.
TripTrace trip_of(std::size_t i, bool slow, std::uint64_t& rtt) {
  TripTrace t;
  t.slot_ns = kBase + i * kPeriod;
  t.sent_ns = t.slot_ns;
  t.request_publish_ns = t.sent_ns;
  t.responder.predicted_ns = t.slot_ns;
  t.responder.wake_at_ns = t.slot_ns - 400 * kUs;
  t.requester.start_ns = t.sent_ns + kUs;
  t.requester.predicted_ns = t.slot_ns + (slow ? 600 : 1) * kUs;
  t.requester.poll_until_ns = t.requester.predicted_ns + 500 * kUs;
  if (slow) {
    t.responder.phase = WaitPhase::Sleep;
    t.request_taken_ns = t.requester.poll_until_ns + 40 * kUs;
    t.reply_publish_ns = t.request_taken_ns + kUs;
    t.requester.phase = WaitPhase::Block;
    t.requester.blocked_ns = t.requester.poll_until_ns;
    t.arrived_ns = t.reply_publish_ns + 30 * kUs;
  } else {
    t.responder.phase = WaitPhase::Poll;
    t.responder.woke_ns = t.responder.wake_at_ns + 60 * kUs;
    t.responder.poll_until_ns = t.slot_ns + 500 * kUs;
    t.request_taken_ns = t.request_publish_ns + kUs;
    t.reply_publish_ns = t.request_taken_ns + kUs;
    t.requester.phase = WaitPhase::Poll;
    t.arrived_ns = t.reply_publish_ns + kUs;
  }
  t.responder.ready_ns = t.request_taken_ns;
  t.requester.ready_ns = t.arrived_ns;
  rtt = t.arrived_ns - t.sent_ns;
  return t;
}

}  // namespace slow_phases_test

namespace sp = slow_phases_test;

TEST_CASE("A run's slow phase is found by its windows' medians, with the side whose plan missed and how", "[tail]") {
  std::vector<std::uint64_t> samples;
  std::vector<TripTrace> trips;
  for (std::size_t i = 0; i < 3000; ++i) {
    std::uint64_t rtt = 0;
    // The phase begins mid-window: the window it begins in has most of its trips slow.
    trips.push_back(sp::trip_of(i, i >= 600 && i < 2000, rtt));
    samples.push_back(rtt);
  }
  const SlowPhases found = find_slow_phases(samples, trips);
  CHECK(found.windows == 12);
  CHECK(found.fastest_window_us == Approx(3));
  REQUIRE(found.phases.size() == 1);
  const SlowPhase& phase = found.phases.front();
  CHECK(phase.first == 500);
  CHECK(phase.end == 2000);
  CHECK(phase.median_us == Approx(1171));
  // The pong was woken from its sleep by a futex wake-up, though its timer was due before.
  CHECK(phase.responder.missed > 1000);
  CHECK(phase.responder.cause == LateCause::TimerLate);
  CHECK(phase.responder.margin_us == Approx(400));
  // The ping's prediction was 600 µs after the slot, its replies came only after it blocked.
  CHECK(phase.requester.cause == LateCause::PollWindowEnded);
  CHECK(phase.requester.window_us == Approx(500));
  CHECK(phase.requester.arrival_minus_predicted_us == Approx(541));
}

TEST_CASE("A run that is slow throughout is one phase only when it is slow against the floor", "[tail]") {
  std::vector<std::uint64_t> samples(1000, 180 * sp::kUs);  // blocking: every round trip two futex wake-ups
  std::vector<TripTrace> trips(1000);
  CHECK(find_slow_phases(samples, trips).phases.empty());
  samples.assign(1000, 3 * sp::kUs);
  for (std::size_t i = 250; i < 500; ++i) samples[i] = 40 * sp::kUs;  // under the 50 µs floor
  CHECK(find_slow_phases(samples, trips).phases.empty());
  CHECK(find_slow_phases(samples, trips, {.window = 250, .floor_us = 20, .factor = 5}).phases.size() == 1);
}
