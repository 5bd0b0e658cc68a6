// SPDX-License-Identifier: Apache-2.0
#include "waiter.hpp"

#include <algorithm>
#include <sys/prctl.h>

namespace cerulion::detail {

[[gnu::cold, gnu::noinline]] Status wait_interrupted() { return Status(ErrorCode::Interrupted, "interrupted"); }
[[gnu::cold, gnu::noinline]] Status wait_timed_out() { return Status(ErrorCode::Timeout, "timed out"); }

CERULION_HOT_PATH void tighten_timer_slack() {
  // The slack is per thread, so it is set lazily on each waiting thread.
  static thread_local bool done = false;
  if (!done) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    done = true;
  }
}

std::uint64_t Waiter::passive_interval_ns() const {
  const double period = planner_.period_ns();
  if (period <= 0) return kPassiveIntervalUnlearntNs;
  return static_cast<std::uint64_t>(std::clamp(period * ring_depth_ / 4, double(kPassiveIntervalShortestNs),
                                               double(kPassiveIntervalLongestNs)));
}

}  // namespace cerulion::detail
