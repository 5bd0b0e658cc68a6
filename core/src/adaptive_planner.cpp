// SPDX-License-Identifier: Apache-2.0
#include "adaptive_planner.hpp"

#include <algorithm>
#include <cmath>

#include "cerulion/core/warm.hpp"

namespace cerulion::detail {

using namespace adaptive;

void AdaptivePlanner::learn_again(std::uint64_t event_ns, double interval) {
  // Start wide (a quarter period of jitter: long margins and polls) and narrow as arrivals come
  // on time.
  period_ = interval;
  jitter_ = interval / 4;
  off_grid_ = 0;
  last_on_time_ = false;
  next_expected_ = event_ns + static_cast<std::uint64_t>(period_);
}

CERULION_HOT_PATH void AdaptivePlanner::record_arrival(std::uint64_t event_ns) {
  if (last_arrival_ == 0 || event_ns <= last_arrival_) {
    if (last_arrival_ == 0) last_arrival_ = event_ns;
    ++arrivals_;
    return;
  }
  const double interval = static_cast<double>(event_ns - last_arrival_);
  last_arrival_ = event_ns;
  ++arrivals_;
  if (period_ <= 0) {
    learn_again(event_ns, interval);
    return;
  }
  // The prediction stays on a grid of the learnt period. A late message (its publisher's timer
  // fired late, or it waited for a wake-up of its own) does not move the grid: moving it would
  // make the next prediction late too, and a waiter asleep past a message that came on time pays
  // a futex wake-up for it. That was how one late message started a phase of hundreds of them.
  const double error = static_cast<double>(event_ns) - static_cast<double>(next_expected_);
  const double tolerance = std::max(jitter_ * kOnTimeJitters, kOnTimeMinNs);
  if (std::fabs(error) <= tolerance) {
    jitter_ += (std::fabs(error) - jitter_) * kSmoothing;
    if (last_on_time_) period_ += (interval - period_) * kSmoothing;
    off_grid_ = 0;
    last_on_time_ = true;
    // Within the tolerance, yet late (while the jitter is wide, hundreds of µs count as on time):
    // moved all the way to such a message, the grid would put the punctual one after it early by
    // as much, and a waiter asleep until then pays a futex wake-up. Those errors widen the jitter
    // in turn, which keeps every late message on time: the phase that made adaptive runs bimodal.
    const double shift = error > 0 ? error * kLateShare : error;
    next_expected_ = static_cast<std::uint64_t>(static_cast<double>(next_expected_) + shift + period_);
    return;
  }
  // Four late in a row are learnt as the new grid, even when they were late because our own poll
  // held the CPU their publisher needed: the later grid polls longer and holds it longer. That
  // slow phase (issue 55) is not prevented here; note_wait()'s fallback ends it.
  if (++off_grid_ >= kOffGridToRelearn) {
    learn_again(event_ns, interval);
    return;
  }
  last_on_time_ = false;
  if (error < 0) {
    // Early: predicting from it is the safe side (a waiter polls a little longer).
    next_expected_ = event_ns + static_cast<std::uint64_t>(period_);
  } else {
    // Late: the next grid point after it. Several periods late (a pause) skips as many.
    const auto periods_late = static_cast<std::uint64_t>(error / period_);
    next_expected_ += (periods_late + 1) * static_cast<std::uint64_t>(period_);
  }
}

CERULION_HOT_PATH void AdaptivePlanner::note_oversleep(std::uint64_t late_ns) { oversleep_.note(late_ns); }

CERULION_HOT_PATH void AdaptivePlanner::note_wait(bool caught) {
  if (fallback_left_ > 0) [[unlikely]] {
    if (--fallback_left_ == 0) {
      // Learn from scratch: the grid and jitter learnt before were what kept missing, and the
      // arrivals seen while blocking are the peer's own rhythm, not one our polls held up.
      arrivals_ = 0;
      off_grid_ = 0;
      last_on_time_ = false;
      last_arrival_ = 0;
      next_expected_ = 0;
      period_ = 0;
      jitter_ = 0;
      missed_ = 0;
      waits_learning_ = 0;
    }
    return;
  }
  if (waits_learning_ < kCalmWaits) {
    ++waits_learning_;
  } else {
    fallback_waits_ = kFallbackWaits;  // a calm stretch: the next fallback is short again
  }
  missed_ = ((missed_ << 1) | (caught ? 0u : 1u)) & ((1u << kMissWindow) - 1);
  if (!caught && static_cast<std::uint32_t>(__builtin_popcount(missed_)) >= kMissesToFallBack) [[unlikely]] fall_back();
}

void AdaptivePlanner::fall_back() {
  fallback_left_ = fallback_waits_;
  // Falling back again soon after learning again: the cause has lasted, block for longer.
  if (waits_learning_ < kCalmWaits) fallback_waits_ = std::min(fallback_waits_ * 2, kFallbackWaitsMost);
  missed_ = 0;
}

double adaptive::budget_scale(double cpu_budget) {
  // NaN fails both comparisons of the clamp's inputs: it is the default's scale.
  return cpu_budget == cpu_budget ? std::clamp(cpu_budget / kDefaultWaitCpuBudget, kBudgetScaleMin, kBudgetScaleMax)
                                  : 1.0;
}

CERULION_HOT_PATH AdaptivePlanner::Plan AdaptivePlanner::plan(std::uint64_t now, double scale) const {
  if (fallback_left_ > 0) [[unlikely]] return {0, 0, 0};
  const std::uint64_t predicted = predicted_next_ns();
  if (predicted == 0) return {0, now + kUnlearntPollNs};
  // Plain min and max of values, not std::clamp, whose operands are references the compiler keeps
  // in memory. The window needs no floor: its jitter term is at least kPollPastMinNs. Both times
  // are far below 2^63 ns: a signed conversion is one instruction, an unsigned one a branch more.
  const double poll_past_cap = std::max(kPollPastMaxNs * scale, kPollPastMinNs);
  const auto poll_past = static_cast<std::uint64_t>(static_cast<std::int64_t>(
      std::min(std::max(period_ * kPollPastShare * scale, jitter_ * kPollPastJitters + kPollPastMinNs), poll_past_cap)));
  // Already due (a reply to a request just sent, or a late message): poll, then block.
  if (predicted <= now) return {0, now + poll_past, predicted};
  const double margin_cap = std::max(period_ * kMarginShare * scale, kMarginMinNs);
  const double margin = std::min(
      std::max(oversleep_.high(kAssumedOversleepNs, kOversleepSamplesToTrust) * kOversleepFactor + jitter_ * kMarginJitters +
                   kMarginSlackNs,
               kMarginMinNs),
      margin_cap);
  const auto margin_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(margin));
  const std::uint64_t wake_at = predicted > margin_ns ? predicted - margin_ns : 0;
  return {wake_at, predicted + poll_past, predicted};
}

}  // namespace cerulion::detail
