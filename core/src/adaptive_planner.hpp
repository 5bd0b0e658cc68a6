// SPDX-License-Identifier: Apache-2.0
#pragma once
// The adaptive wait strategy's planner: it learns when a topic's messages arrive and says how long
// a waiter sleeps and how long it then polls. Arithmetic on times only, so it is tested on its own
// (tests/core/test_adaptive_planner.cpp); why the numbers are what they are: docs/performance.md,
// "The adaptive strategy predicts, then polls, then blocks" (the runs: docs/performance-history.md).

#include <cstddef>
#include <cstdint>

#include "cerulion/core/options.hpp"
#include "lateness.hpp"

namespace cerulion::detail {

/// The planner's tuning. Times in ns; shares are of the learnt period.
namespace adaptive {
/// Arrivals before a rate counts as learnt.
inline constexpr std::uint32_t kArrivalsToLearn = 3;
/// Arrivals off the learnt grid in a row that mean a new rate or phase, not noise.
inline constexpr std::uint32_t kOffGridToRelearn = 4;
/// An arrival within max(this, kOnTimeJitters x the learnt jitter) of its prediction is on time.
inline constexpr double kOnTimeMinNs = 30'000;
inline constexpr double kOnTimeJitters = 4;
/// Weight of each on-time arrival in the smoothed period and jitter.
inline constexpr double kSmoothing = 1.0 / 8;
/// Share of an on-time arrival's lateness by which it moves the grid (an early one moves it all
/// the way): lateness that lasts is followed, one late message among punctual ones is not.
inline constexpr double kLateShare = 1.0 / 8;

/// How early the sleep ends: the recent timed wake-ups' lateness (x kOversleepFactor) plus
/// kMarginJitters x the jitter plus kMarginSlackNs, within [kMarginMinNs, kMarginShare x period].
/// kMarginShare and the kPollPast bounds below are the default CPU budget's; a budget scales them.
inline constexpr double kOversleepFactor = 1.2;
inline constexpr double kMarginJitters = 3;
inline constexpr double kMarginSlackNs = 20'000;
inline constexpr double kMarginMinNs = 30'000;
inline constexpr double kMarginShare = 0.04;
/// The lateness assumed until kOversleepSamplesToTrust timed sleeps were measured.
inline constexpr double kAssumedOversleepNs = 150'000;
inline constexpr std::size_t kOversleepSamplesToTrust = 4;

/// How long polling goes on past the predicted arrival (or from now, when it is already due)
/// before blocking: kPollPastShare of the period, at least kPollPastJitters x the jitter plus
/// kPollPastMinNs, within [kPollPastMinNs, kPollPastMaxNs]. Long enough for a peer's futex
/// wake-up, so a late message costs one wake-up (the peer's) and not a second one (ours).
inline constexpr double kPollPastShare = 1.0 / 20;
inline constexpr double kPollPastJitters = 4;
inline constexpr double kPollPastMinNs = 100'000;
inline constexpr double kPollPastMaxNs = 500'000;
/// The CPU budget's scale against the default is kept within these (a budget of 0.1 % to 100 %).
inline constexpr double kBudgetScaleMin = 0.02;
inline constexpr double kBudgetScaleMax = 20;
/// What a CPU budget (WaitOptions::cpu_budget) scales the margin and poll window by: 1 for the
/// default, and for a budget that is no number. Computed once by a planner's user, when it is
/// built, so that a plan does not divide and clamp on every wait.
[[nodiscard]] double budget_scale(double cpu_budget);
/// With nothing learnt: poll this long, then block.
inline constexpr std::uint64_t kUnlearntPollNs = 100'000;
/// A timed sleep shorter than this would only add a VM's wake-up lateness to it: poll instead.
inline constexpr std::uint64_t kShortestSleepNs = 300'000;
/// Polling before blocking lasts at least this long, even when the plan's window has passed: a
/// message that is due is most likely about to come, and a poll costs less than a wake-up.
inline constexpr std::uint64_t kShortestPollNs = 20'000;

/// The safety net under every prediction: a wait whose poll did not see its message (a futex
/// wake-up delivered it, from the timed sleep or from blocking) missed. kMissesToFallBack misses
/// among the last kMissWindow waits, and the planner stops predicting: its waits block at once,
/// as the block strategy does, for kFallbackWaits waits (doubled, up to kFallbackWaitsMost, when
/// it falls back again within kCalmWaits waits of learning again), then it learns from scratch.
/// A prediction that keeps missing can hold up the very message it waits for (polling holds a
/// CPU the peer needs): this bounds how long that goes on, whatever the cause.
inline constexpr std::uint32_t kMissWindow = 20;
inline constexpr std::uint32_t kMissesToFallBack = 8;
inline constexpr std::uint32_t kFallbackWaits = 50;
inline constexpr std::uint32_t kFallbackWaitsMost = 400;
inline constexpr std::uint32_t kCalmWaits = 2000;
}  // namespace adaptive

class AdaptivePlanner {
 public:
  /// Where a wait sleeps until (0: do not sleep) and polls until before it blocks; a poll_until
  /// of 0 blocks at once (fallen back). `predicted`: the arrival it planned for (0: none).
  struct Plan {
    std::uint64_t wake_at;
    std::uint64_t poll_until;
    std::uint64_t predicted = 0;
  };

  /// An awaited message was published at `event_ns` (CLOCK_MONOTONIC). Publish times, not the
  /// moment a waiter noticed, so that our own late wake-ups never move the prediction.
  void record_arrival(std::uint64_t event_ns);
  /// A timed sleep planned by plan() ended `late_ns` after its wake_at (the margins follow it).
  void note_oversleep(std::uint64_t late_ns);
  /// A wait planned by plan() ended with its message: `caught` when its poll saw it, false when a
  /// futex wake-up delivered it. Misses make the planner fall back to blocking (kMissesToFallBack).
  void note_wait(bool caught);
  /// Whether the planner has fallen back to blocking at once (adaptive::kMissesToFallBack).
  [[nodiscard]] bool fallen_back() const { return fallback_left_ > 0; }

  /// The plan for a wait that starts at `now`, its margin and window scaled by `budget_scale`
  /// (adaptive::budget_scale of WaitOptions::cpu_budget; 1: the default budget's).
  [[nodiscard]] Plan plan(std::uint64_t now, double budget_scale = 1) const;
  /// Predicted time of the next arrival, 0 while nothing is learnt.
  [[nodiscard]] std::uint64_t predicted_next_ns() const { return learnt() ? next_expected_ : 0; }
  /// The learnt period between arrivals in ns, 0 while nothing is learnt.
  [[nodiscard]] double period_ns() const { return learnt() ? period_ : 0; }
  /// The learnt jitter of arrivals around their predictions, in ns.
  [[nodiscard]] double jitter_ns() const { return jitter_; }

 private:
  bool learnt() const { return arrivals_ >= adaptive::kArrivalsToLearn && period_ > 0; }
  void learn_again(std::uint64_t event_ns, double interval);
  void fall_back();

  // record_arrival() writes the first line; the oversleep ring is read only when planning a sleep.
  std::uint32_t arrivals_ = 0;
  std::uint32_t off_grid_ = 0;  ///< arrivals off the grid in a row
  bool last_on_time_ = false;
  std::uint64_t last_arrival_ = 0;
  std::uint64_t next_expected_ = 0;  ///< the grid: predicted time of the next arrival
  double period_ = 0;                ///< smoothed period between on-time arrivals
  double jitter_ = 0;                ///< smoothed |arrival - prediction| of on-time arrivals
  /// Recent lateness of timed wake-ups: the margin uses a high quantile of it, since a wake-up
  /// later than the margin costs a futex wake-up.
  LatenessRing oversleep_;
  std::uint32_t missed_ = 0;          ///< the last kMissWindow waits, a bit each: 1 for a miss
  std::uint32_t fallback_left_ = 0;   ///< waits left to block at once
  std::uint32_t fallback_waits_ = adaptive::kFallbackWaits;  ///< the next fallback's length
  std::uint32_t waits_learning_ = 0;  ///< waits since the planner last learnt from scratch
};

}  // namespace cerulion::detail
