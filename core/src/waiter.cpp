// SPDX-License-Identifier: Apache-2.0
#include "waiter.hpp"

#include <algorithm>
#include <cmath>
#include <sys/prctl.h>

namespace cerulion::detail {

void Waiter::tighten_timer_slack() {
  // Timed sleeps must end close to when asked: the default 50 µs timer slack would swallow the
  // adaptive margin. Per thread, so set lazily on each waiting thread.
  static thread_local bool done = false;
  if (!done) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    done = true;
  }
}

CERULION_HOT_PATH void Waiter::record_arrival(std::uint64_t event_ns) {
  if (last_arrival_ != 0 && event_ns > last_arrival_) {
    const double interval = static_cast<double>(event_ns - last_arrival_);
    const bool outlier = arrivals_ >= 8 && std::fabs(interval - period_) > period_ / 4;
    if (arrivals_ < 2 || period_ == 0) {
      period_ = interval;
    } else if (!outlier) {
      jitter_ += (std::fabs(interval - period_) - jitter_) / 8;
      period_ += (interval - period_) / 8;
      outliers_ = 0;
    } else if (++outliers_ >= 4) {
      // Four in a row is a new rate, not noise: start learning again.
      period_ = interval;
      jitter_ = interval / 4;
      outliers_ = 0;
    }
    // A single outlier (one late message and the short interval after it, or a pause) leaves the
    // learnt period alone: averaging it in would skew every prediction for many periods.
  }
  last_arrival_ = event_ns;
  // Arrival times are publish times, so a late wake-up on our side does not shift the prediction.
  next_expected_ = period_ > 0 ? event_ns + static_cast<std::uint64_t>(period_) : 0;
  ++arrivals_;
}

std::uint64_t Waiter::passive_interval_ns() const {
  constexpr double kShortest = 100'000, kLongest = 10'000'000;
  if (arrivals_ < 3 || period_ <= 0) return 1'000'000;
  return static_cast<std::uint64_t>(std::clamp(period_ * ring_depth_ / 4, kShortest, kLongest));
}

std::uint64_t Waiter::predicted_next_ns() const {
  if (arrivals_ < 3 || period_ <= 0) return 0;
  return next_expected_;
}

void Waiter::note_oversleep(std::uint64_t late_ns) {
  const auto clamped = static_cast<std::uint32_t>(std::min<std::uint64_t>(late_ns, 50'000'000));
  oversleep_[oversleep_count_++ % kOversleepSamples] = clamped;
}

double Waiter::oversleep_high() const {
  // The second-largest of the recent samples: about the 95th percentile, robust to one outlier.
  // Until a few samples exist, assume a VM's typical timer lateness.
  const std::size_t n = std::min(oversleep_count_, kOversleepSamples);
  if (n < 4) return 150'000.0;
  std::uint32_t first = 0, second = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (oversleep_[i] > first) {
      second = first;
      first = oversleep_[i];
    } else if (oversleep_[i] > second) {
      second = oversleep_[i];
    }
  }
  return static_cast<double>(second);
}

CERULION_HOT_PATH Waiter::AdaptivePlan Waiter::plan_adaptive(std::uint64_t now) const {
  const std::uint64_t predicted = predicted_next_ns();
  // Nothing learnt, or the arrival is already due (a reply to a request just sent): poll, then
  // block. A late reply most likely comes from a peer that must be woken first, and blocking now
  // would add our own wake-up to its: a learnt rate buys a longer poll (1/20 period, <= 0.5 ms).
  if (predicted == 0) return {0, now + kDuePollNs};
  if (predicted <= now) {
    const double poll = std::clamp(period_ / 20, static_cast<double>(kDuePollNs), 500'000.0);
    return {0, now + static_cast<std::uint64_t>(poll)};
  }
  // Wake early enough to absorb nearly every late timed wake-up and the arrival jitter, within a
  // polling budget of 4% of the period; poll past the prediction by up to 1%.
  const double margin =
      std::clamp(oversleep_high() * 1.2 + jitter_ * 3 + 20'000.0, 30'000.0, std::max(period_ * 0.04, 30'000.0));
  const auto margin_ns = static_cast<std::uint64_t>(margin);
  const std::uint64_t wake_at = predicted > margin_ns ? predicted - margin_ns : 0;
  const double after = std::clamp(jitter_ * 4 + 50'000.0, 50'000.0, std::max(period_ * 0.01, 50'000.0));
  return {wake_at, predicted + static_cast<std::uint64_t>(after)};
}

}  // namespace cerulion::detail
