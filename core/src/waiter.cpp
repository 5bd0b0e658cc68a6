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

void Waiter::record_arrival(std::uint64_t event_ns) {
  if (last_arrival_ != 0 && event_ns > last_arrival_) {
    const double interval = static_cast<double>(event_ns - last_arrival_);
    if (arrivals_ < 2 || period_ == 0) {
      period_ = interval;
    } else if (interval < period_ * 4) {
      jitter_ += (std::fabs(interval - period_) - jitter_) / 8;
      period_ += (interval - period_) / 8;
    } else {
      // A gap (the publisher paused): keep the period, lose confidence in the phase.
      jitter_ = std::max(jitter_, period_ / 4);
    }
  }
  last_arrival_ = event_ns;
  ++arrivals_;
}

std::uint64_t Waiter::predicted_next_ns() const {
  if (arrivals_ < 3 || period_ <= 0) return 0;
  return last_arrival_ + static_cast<std::uint64_t>(period_);
}

void Waiter::note_oversleep(std::uint64_t late_ns) {
  oversleep_ += (static_cast<double>(late_ns) - oversleep_) / 8;
}

Waiter::AdaptivePlan Waiter::plan_adaptive(std::uint64_t now) const {
  const std::uint64_t predicted = predicted_next_ns();
  if (predicted == 0) return {0, now + 50'000};  // nothing learnt yet: a short poll, then block
  // Wake early enough to absorb the usual lateness of a timed wake-up and the arrival jitter.
  const double margin = std::clamp(oversleep_ * 1.5 + jitter_ * 3 + 20'000.0, 30'000.0, period_ * 0.5);
  const auto margin_ns = static_cast<std::uint64_t>(margin);
  const std::uint64_t wake_at = predicted > margin_ns ? predicted - margin_ns : 0;
  // Poll past the prediction as long as arrivals usually stray, capped at 5% of a period.
  const double after = std::clamp(jitter_ * 4 + 30'000.0, 30'000.0, std::max(period_ * 0.05, 30'000.0));
  return {wake_at, predicted + static_cast<std::uint64_t>(after)};
}

}  // namespace cerulion::detail
