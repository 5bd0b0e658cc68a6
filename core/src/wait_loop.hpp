// SPDX-License-Identifier: Apache-2.0
#pragma once
// The three wait strategies' loops, shared by a participant's Waiter (one wake channel) and the
// WaitSet (several): spin, block and adaptive differ in how they wait, not in what for.
//
// A target is what a wait is for:
//   bool ready();                   cheap, polled in a loop; it may act (a subscriber's takes the
//                                   message), so true is acted on at once and never asked again
//   bool sleep(std::uint64_t until) registers as a sleeper on its wake channel(s), asks ready()
//                                   once more (a wake-up before the registration is missed),
//                                   then sleeps in the kernel until `until` or a wake-up;
//                                   returns what that ready() said
//   void housekeeping();            about every kHousekeepingNs (dead-participant eviction)

#include <algorithm>
#include <cstdint>

#include "adaptive_planner.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/core/wait_trace.hpp"
#include "cerulion/core/warm.hpp"
#include "futex.hpp"
#include "warm.hpp"

namespace cerulion::detail {

inline constexpr std::uint64_t kHousekeepingNs = kWaitRecheckIntervalNs;
inline constexpr std::uint64_t kWaitForever = UINT64_MAX;

/// The deadline of a wait that starts at `start`.
inline std::uint64_t deadline_after(std::uint64_t start, Timeout timeout) {
  return timeout ? start + static_cast<std::uint64_t>(std::max<std::int64_t>(timeout->count(), 0)) : kWaitForever;
}

/// A wait's Interrupted and Timeout, built out of line (waiter.cpp; Status says why).
[[gnu::cold]] Status wait_interrupted();
[[gnu::cold]] Status wait_timed_out();

/// When a wait ends without its target being ready.
struct WaitLimits {
  std::uint64_t deadline = kWaitForever;   ///< Timeout
  std::uint64_t return_at = kWaitForever;  ///< Ok, not ready: a wait set's next timer
  const std::atomic<bool>* cancel = nullptr;  ///< Interrupted once set
  WaitTrace* trace = nullptr;  ///< where a wait that ends ready says how (WaitOptions::trace)
};

/// How one wait ended: Ok with `ready` (the target is ready) or not (`return_at` came, or the
/// end of a timed sleep or a poll window asked of a step), Timeout, or Interrupted.
struct WaitOutcome {
  Status status;
  bool ready = false;
};

/// Every member is always_inline, as are wait_with and Waiter::wait: GCC leaves template
/// instantiations out of the hot section (CERULION_HOT_PATH), so a loop compiled on its own
/// would be code the warm pass never reads, cold on every message after an idle gap; inlined,
/// it is part of the marked function that waits (the receive, the wait set's wait).
/// `kTraced`: the loops write limits.trace (WaitOptions::trace). A participant that traces is
/// known when it is built, so its owner (Waiter, WaitSetImpl) picks the traced copy once per wait
/// and runs it out of line, out of the hot section: a diagnosis pays for its bookkeeping, and the
/// untraced loops, the ones every message runs, carry none of it (its code, its registers).
template <typename Target, bool kTraced = false>
class WaitLoop {
 public:
  WaitLoop(Target& target, WaitLimits limits) : target_(target), limits_(limits) {}

  /// Polls until ready: one core, the lowest latency. Looks at the clock every 256 polls.
  [[gnu::always_inline]] WaitOutcome spin() {
    const WarmSet& warm = WarmSet::of_this_thread();
    const std::uint64_t start = monotonic_ns();
    std::uint64_t next_housekeeping = start + kHousekeepingNs;
    std::uint64_t next_warm = start + kWarmCachesIntervalNs;
    for (std::uint32_t i = 1;; ++i) {
      if (target_.ready()) return traced({Status::success(), true}, WaitPhase::Poll, {.start_ns = start});
      poll_relax();
      if ((i & 255) == 0) {
        const std::uint64_t now = monotonic_ns();
        if (WaitOutcome end; ended(now, end)) return end;
        if (now >= next_warm) {
          warm.warm();
          next_warm = now + kWarmCachesIntervalNs;
        }
        if (now >= next_housekeeping) {
          target_.housekeeping();
          next_housekeeping = now + kHousekeepingNs;
        }
      }
    }
  }

  /// Polls until ready or `until` (then Ok, not ready), keeping this thread's lines warm: the
  /// adaptive strategy's window around a predicted arrival. Looks at the clock every 64 polls.
  /// `slept`: the thread comes from a sleep, so what it touches next went cold: warm first. Else
  /// the first poll comes first (a reply due within microseconds is not held up by a warm pass).
  [[gnu::always_inline]] WaitOutcome poll_until(std::uint64_t until, bool slept) {
    const WarmSet& warm = WarmSet::of_this_thread();
    std::uint64_t now = monotonic_ns();
    if (slept) warm.warm();
    std::uint64_t next_warm = now + kWarmCachesIntervalNs;
    for (std::uint32_t i = 1; now < until; ++i) {
      if (target_.ready()) return {Status::success(), true};
      poll_relax();
      if ((i & 63) == 0) {
        now = monotonic_ns();
        if (WaitOutcome end; ended(now, end)) return end;
        if (now >= next_warm) {
          warm.warm();
          next_warm = now + kWarmCachesIntervalNs;
        }
      }
    }
    return {Status::success(), false};
  }

  /// Sleeps in the kernel until ready or `until` (then Ok, not ready; kWaitForever for none).
  [[gnu::always_inline]] WaitOutcome block(std::uint64_t until = kWaitForever) {
    std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
    for (;;) {
      if (target_.ready()) return {Status::success(), true};
      const std::uint64_t now = monotonic_ns();
      if (WaitOutcome end; ended(now, end)) return end;
      if (now >= until) return {Status::success(), false};
      if (now >= next_housekeeping) {
        target_.housekeeping();
        next_housekeeping = now + kHousekeepingNs;
      }
      if (target_.sleep(std::min({limits_.deadline, limits_.return_at, until, next_housekeeping}))) {
        return {Status::success(), true};
      }
    }
  }

  /// Adaptive: sleeps until shortly before the planned arrival (a publisher wakes it if the
  /// message comes early), polls across the window where it is likely, then blocks; a plan that
  /// fell back (poll_until 0) blocks at once. `learner` (may be null) learns how late the timed
  /// sleep ended and whether the poll caught the message; a wait planned with nothing learnt
  /// (no prediction) is expected to miss and does not count.
  [[gnu::always_inline]] WaitOutcome adaptive(AdaptivePlanner::Plan plan, AdaptivePlanner* learner) {
    const std::uint64_t start = monotonic_ns();
    if (plan.poll_until == 0) [[unlikely]] {
      WaitOutcome blocked = block();
      if (blocked.ready && learner != nullptr) learner->note_wait(false);
      return traced(std::move(blocked), WaitPhase::Block, {.start_ns = start, .blocked_ns = start});
    }
    const bool sleeps = plan.wake_at > start + adaptive::kShortestSleepNs;
    WaitTrace seen{.start_ns = start, .wake_at_ns = sleeps ? plan.wake_at : 0, .predicted_ns = plan.predicted};
    if (sleeps) {
      WaitOutcome slept = block(plan.wake_at);
      if (slept.ready && learner != nullptr && plan.predicted != 0) learner->note_wait(false);
      if (!slept.status.ok() || slept.ready) return traced(std::move(slept), WaitPhase::Sleep, seen);
      const std::uint64_t now = monotonic_ns();
      if (now >= limits_.return_at) return slept;
      if (learner != nullptr) learner->note_oversleep(now - plan.wake_at);
      seen.woke_ns = now;
    }
    seen.poll_until_ns = std::max(plan.poll_until, monotonic_ns() + adaptive::kShortestPollNs);
    WaitOutcome polled = poll_until(seen.poll_until_ns, sleeps);
    if (polled.ready) {
      if (learner != nullptr && plan.predicted != 0) learner->note_wait(true);
      return traced(std::move(polled), WaitPhase::Poll, seen);
    }
    if (!polled.status.ok() || monotonic_ns() >= limits_.return_at) return polled;
    if constexpr (kTraced) seen.blocked_ns = monotonic_ns();
    WaitOutcome blocked = block();
    if (blocked.ready && learner != nullptr && plan.predicted != 0) learner->note_wait(false);
    return traced(std::move(blocked), WaitPhase::Block, seen);
  }

  /// The block strategy: blocks, its trace saying so.
  [[gnu::always_inline]] WaitOutcome block_traced() {
    if constexpr (!kTraced) {
      return block();
    } else {
      const std::uint64_t start = monotonic_ns();
      return traced(block(), WaitPhase::Block, {.start_ns = start, .blocked_ns = start});
    }
  }

 private:
  /// Whether the wait is over for a reason other than readiness, and how.
  [[gnu::always_inline]] bool ended(std::uint64_t now, WaitOutcome& end) const {
    if (limits_.cancel != nullptr && limits_.cancel->load(std::memory_order_relaxed)) {
      end = {wait_interrupted(), false};
      return true;
    }
    if (now >= limits_.deadline) {
      end = {wait_timed_out(), false};
      return true;
    }
    if (now >= limits_.return_at) {
      end = {Status::success(), false};
      return true;
    }
    return false;
  }

  /// `out`, after writing to the trace (kTraced) that the wait ended ready in `phase`. Untraced,
  /// `seen` is dead and the compiler drops it with what wrote it.
  [[gnu::always_inline]] WaitOutcome traced(WaitOutcome out, WaitPhase phase, WaitTrace seen) const {
    if constexpr (kTraced) {
      if (out.ready) {
        seen.ready_ns = monotonic_ns();
        seen.phase = phase;
        *limits_.trace = seen;
      }
    }
    return out;
  }

  Target& target_;
  WaitLimits limits_;
};

/// Makes timed sleeps of the calling thread end as close to when asked as the kernel allows (the
/// default timer slack would swallow the adaptive margin). Once per thread.
void tighten_timer_slack();

/// Runs one wait with `strategy`. Adaptive follows `plan`, and `learner` learns its oversleep.
/// `kTraced`: with the loops that write limits.trace (not null then).
template <bool kTraced, typename Target>
[[gnu::always_inline]] inline WaitOutcome wait_with(WaitStrategy strategy, Target& target, WaitLimits limits,
                                                    AdaptivePlanner::Plan plan, AdaptivePlanner* learner) {
  WaitLoop<Target, kTraced> loop(target, limits);
  switch (strategy) {
    case WaitStrategy::Spin:
      return loop.spin();
    case WaitStrategy::Block:
      return loop.block_traced();
    case WaitStrategy::Adaptive:
      break;
  }
  tighten_timer_slack();
  return loop.adaptive(plan, learner);
}

}  // namespace cerulion::detail
