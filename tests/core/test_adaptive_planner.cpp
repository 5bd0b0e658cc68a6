// SPDX-License-Identifier: Apache-2.0
// The adaptive wait strategy's planner (core/src/adaptive_planner.hpp): what it predicts and plans,
// from made-up times. No clock and no sleeping, so nothing here depends on the machine's speed.

#include <catch2/catch.hpp>

#include <cmath>

#include "adaptive_planner.hpp"

using cerulion::detail::AdaptivePlanner;
namespace adaptive = cerulion::detail::adaptive;

namespace {

constexpr std::uint64_t kPeriod = 10'000'000;  // 100 Hz
constexpr std::uint64_t kStart = 1'000'000'000;

/// A planner that has seen `n` arrivals exactly on a 100 Hz grid from kStart; returns the time of
/// the next grid point.
std::uint64_t learn_grid(AdaptivePlanner& planner, int n) {
  std::uint64_t t = kStart;
  for (int i = 0; i < n; ++i, t += kPeriod) planner.record_arrival(t);
  return t;
}

}  // namespace

TEST_CASE("A planner predicts nothing until it has seen a few arrivals, and then the next grid point", "[planner]") {
  AdaptivePlanner planner;
  CHECK(planner.predicted_next_ns() == 0);
  const AdaptivePlanner::Plan unlearnt = planner.plan(kStart);
  CHECK(unlearnt.wake_at == 0);
  CHECK(unlearnt.poll_until == kStart + adaptive::kUnlearntPollNs);

  const std::uint64_t next = learn_grid(planner, 40);
  CHECK(planner.predicted_next_ns() == next);
  CHECK(planner.period_ns() == Approx(kPeriod));
}

TEST_CASE("A planner sleeps until a margin before the predicted arrival and polls a while past it", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  for (int i = 0; i < 8; ++i) planner.note_oversleep(100'000);  // timed wake-ups 100 µs late

  const AdaptivePlanner::Plan plan = planner.plan(next - kPeriod + 5'000);
  REQUIRE(plan.wake_at < next);
  const std::uint64_t margin = next - plan.wake_at;
  CHECK(margin >= 120'000);                                          // covers the oversleep (x 1.2)
  CHECK(margin <= static_cast<std::uint64_t>(kPeriod * adaptive::kMarginShare));  // within its budget
  // Past the prediction: a twentieth of the period, so a peer's futex wake-up is still caught.
  CHECK(plan.poll_until == next + static_cast<std::uint64_t>(kPeriod * adaptive::kPollPastShare));
}

TEST_CASE("A planner's margin grows with the oversleep it is told of, up to its share of the period", "[planner]") {
  AdaptivePlanner punctual, late, very_late;
  const std::uint64_t next = learn_grid(punctual, 40);
  learn_grid(late, 40);
  learn_grid(very_late, 40);
  for (int i = 0; i < 8; ++i) {
    punctual.note_oversleep(10'000);
    late.note_oversleep(200'000);
    very_late.note_oversleep(5'000'000);
  }
  const std::uint64_t now = next - kPeriod / 2;
  CHECK(punctual.plan(now).wake_at > late.plan(now).wake_at);
  CHECK(next - very_late.plan(now).wake_at == static_cast<std::uint64_t>(kPeriod * adaptive::kMarginShare));
}

TEST_CASE("A late arrival does not move the grid, so the next wait is not planned late too", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  planner.record_arrival(next + 600'000);  // its publisher's timer fired 600 µs late
  CHECK(planner.predicted_next_ns() == next + kPeriod);

  // A request/reply waiter starts waiting for the reply at the grid point: it polls, never sleeps.
  const AdaptivePlanner::Plan plan = planner.plan(next + kPeriod);
  CHECK(plan.wake_at == 0);
  CHECK(plan.poll_until >= next + kPeriod + static_cast<std::uint64_t>(adaptive::kPollPastMinNs));
}

TEST_CASE("A message several periods late (a pause) predicts the grid point after it", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  planner.record_arrival(next + 3 * kPeriod + 1'000'000);
  CHECK(planner.predicted_next_ns() == next + 4 * kPeriod);
}

TEST_CASE("Arrivals off the grid several times in a row are a new rate, learnt again", "[planner]") {
  AdaptivePlanner planner;
  std::uint64_t t = learn_grid(planner, 40) - kPeriod;
  constexpr std::uint64_t kHalfRate = 2 * kPeriod;  // the publisher slowed to 50 Hz
  for (std::uint32_t i = 0; i < adaptive::kOffGridToRelearn; ++i) planner.record_arrival(t += kHalfRate);
  CHECK(planner.predicted_next_ns() == t + kHalfRate);
  CHECK(planner.period_ns() == Approx(kHalfRate));
  // Learning again starts wide: a long margin, narrowing as arrivals come on time.
  const std::uint64_t wide = t + kHalfRate - planner.plan(t + 1'000).wake_at;
  for (int i = 0; i < 40; ++i) planner.record_arrival(t += kHalfRate);
  const std::uint64_t narrow = t + kHalfRate - planner.plan(t + 1'000).wake_at;
  CHECK(narrow < wide);
}

TEST_CASE("An early arrival is predicted from, since waking early only costs a longer poll", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  planner.record_arrival(next - 2'000'000);
  CHECK(planner.predicted_next_ns() == next - 2'000'000 + kPeriod);
}

TEST_CASE("A message already due is polled for, then blocked on", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  const AdaptivePlanner::Plan plan = planner.plan(next + 50'000);
  CHECK(plan.wake_at == 0);
  CHECK(plan.poll_until == next + 50'000 + static_cast<std::uint64_t>(kPeriod * adaptive::kPollPastShare));
}

TEST_CASE("Late arrivals among punctual ones leave the punctual ones predicted, even while the planner learns", "[planner]") {
  // A publisher whose every third message is 520 µs late (its timer fired late), seen from the
  // first arrival: while the jitter is still wide, a late message counts as on time. Were the grid
  // moved all the way to it, the punctual message after it would come 520 µs before its
  // prediction, and a waiter asleep until then would pay a futex wake-up for it.
  constexpr std::uint64_t kLate = 520'000;
  AdaptivePlanner planner;
  std::uint64_t worst_punctual_error = 0;
  for (int i = 0; i < 120; ++i) {
    const std::uint64_t grid = kStart + static_cast<std::uint64_t>(i) * kPeriod;
    const bool late = i % 3 == 1;
    const std::uint64_t predicted = planner.predicted_next_ns();
    if (i >= 40 && !late) {
      const std::uint64_t error = predicted > grid ? predicted - grid : grid - predicted;
      worst_punctual_error = std::max(worst_punctual_error, error);
    }
    planner.record_arrival(late ? grid + kLate : grid);
  }
  CHECK(worst_punctual_error <= 100'000);
}

TEST_CASE("A planner's CPU budget scales its margin and window, and the default budget plans as before", "[planner]") {
  AdaptivePlanner planner;
  const std::uint64_t next = learn_grid(planner, 40);
  for (int i = 0; i < 8; ++i) planner.note_oversleep(5'000'000);  // the margin is at its cap
  const std::uint64_t now = next - kPeriod / 2;
  const AdaptivePlanner::Plan as_before = planner.plan(now);
  CHECK(planner.plan(now, adaptive::budget_scale(kDefaultWaitCpuBudget)).wake_at == as_before.wake_at);
  CHECK(planner.plan(now, adaptive::budget_scale(kDefaultWaitCpuBudget)).poll_until == as_before.poll_until);

  const AdaptivePlanner::Plan doubled = planner.plan(now, adaptive::budget_scale(2 * kDefaultWaitCpuBudget));
  CHECK(next - doubled.wake_at == 2 * (next - as_before.wake_at));
  CHECK(doubled.poll_until - next == 2 * (as_before.poll_until - next));

  // Half the budget halves the margin's cap; the window keeps its floor (a peer's futex wake-up).
  const AdaptivePlanner::Plan halved = planner.plan(now, adaptive::budget_scale(kDefaultWaitCpuBudget / 2));
  CHECK(next - halved.wake_at == (next - as_before.wake_at) / 2);
  CHECK(halved.poll_until - next >= static_cast<std::uint64_t>(adaptive::kPollPastMinNs));
  CHECK(halved.poll_until < as_before.poll_until);

  // A budget that is no number plans as the default does; one past 100 % as 100 %.
  CHECK(planner.plan(now, adaptive::budget_scale(std::nan(""))).wake_at == as_before.wake_at);
  CHECK(planner.plan(now, adaptive::budget_scale(50)).wake_at == planner.plan(now, adaptive::budget_scale(1)).wake_at);
}
