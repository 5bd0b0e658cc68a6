// SPDX-License-Identifier: Apache-2.0
#pragma once
// The three wait strategies behind every blocking call: spin, block (futex) and adaptive.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "cerulion/core/options.hpp"
#include "adaptive_planner.hpp"
#include "cerulion/core/status.hpp"
#include "futex.hpp"
#include "warm.hpp"

namespace cerulion::detail {

/// Waits until a condition holds. One Waiter per participant and purpose: the adaptive strategy
/// keeps what it learnt about arrival times between calls.
class alignas(64) Waiter {
 public:
  /// `passive`: a tap's waiter. It never sleeps on the futex (so publishers never pay a wake-up
  /// system call for it); it checks back at an interval short enough for the ring not to wrap.
  Waiter(WaitOptions options, std::uint32_t participant_bit, bool passive = false, std::uint32_t ring_depth = 16)
      : options_(options), bit_(participant_bit), ring_depth_(ring_depth), passive_(passive) {}

  /// Returns Ok when `ready()` became true, Timeout at the deadline, Interrupted when cancelled.
  /// `channel` is the futex a waker notifies after making `ready()` true. `housekeeping` runs about
  /// every 100 ms while waiting (dead-participant eviction).
  template <typename Ready, typename Housekeeping>
  Status wait(Ready&& ready, WakeChannel& channel, Timeout timeout, Housekeeping&& housekeeping);

  /// Tells the adaptive strategy when the awaited message was published (CLOCK_MONOTONIC ns), so
  /// it can predict the next one.
  void record_arrival(std::uint64_t event_ns) { planner_.record_arrival(event_ns); }

  /// What the adaptive strategy learnt; the wait set plans over several members' planners.
  AdaptivePlanner& planner() { return planner_; }
  const AdaptivePlanner& planner() const { return planner_; }

  /// Timed sleeps of this thread end within ~1 µs of when asked (not the default 50 µs slack).
  static void tighten_timer_slack();

 private:
  bool cancelled() const {
    return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed);
  }
  template <typename Ready, typename Housekeeping>
  Status block_until(Ready& ready, WakeChannel& channel, std::uint64_t deadline_ns, std::uint64_t sleep_until_ns,
                     Housekeeping& housekeeping, bool& became_ready);

  template <typename Ready, typename Housekeeping>
  Status wait_passively(Ready& ready, std::uint64_t deadline_ns, Housekeeping& housekeeping);
  /// How long a passive waiter sleeps between checks: a quarter of the time the ring takes to fill.
  std::uint64_t passive_interval_ns() const;

  WaitOptions options_;
  std::uint32_t bit_;
  std::uint32_t ring_depth_;
  bool passive_;
  AdaptivePlanner planner_;
};

inline constexpr std::uint64_t kHousekeepingNs = 100'000'000;  // liveness checks: stall ≤ 1 s
inline constexpr std::uint64_t kWaitForever = UINT64_MAX;

template <typename Ready, typename Housekeeping>
Status Waiter::block_until(Ready& ready, WakeChannel& channel, std::uint64_t deadline_ns,
                           std::uint64_t sleep_until_ns, Housekeeping& housekeeping, bool& became_ready) {
  became_ready = false;
  std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
  for (;;) {
    if (ready()) {
      became_ready = true;
      return Status::success();
    }
    if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
    const std::uint64_t now = monotonic_ns();
    if (now >= deadline_ns) return {ErrorCode::Timeout, "timed out"};
    if (now >= sleep_until_ns) return Status::success();
    if (now >= next_housekeeping) {
      housekeeping();
      next_housekeeping = now + kHousekeepingNs;
    }
    const std::uint64_t until = std::min({deadline_ns, sleep_until_ns, next_housekeeping});
    const std::uint32_t seen = channel.sequence.load(std::memory_order_seq_cst);
    channel.sleepers.fetch_or(bit_, std::memory_order_seq_cst);
    if (ready()) {
      channel.sleepers.fetch_and(~bit_, std::memory_order_relaxed);
      became_ready = true;
      return Status::success();
    }
    futex_wait(&channel.sequence, seen, static_cast<std::int64_t>(until - now));
    channel.sleepers.fetch_and(~bit_, std::memory_order_relaxed);
  }
}

template <typename Ready, typename Housekeeping>
Status Waiter::wait_passively(Ready& ready, std::uint64_t deadline_ns, Housekeeping& housekeeping) {
  std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
  for (;;) {
    if (ready()) return Status::success();
    if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
    const std::uint64_t now = monotonic_ns();
    if (now >= deadline_ns) return {ErrorCode::Timeout, "timed out"};
    if (now >= next_housekeeping) {
      housekeeping();
      next_housekeeping = now + kHousekeepingNs;
    }
    const std::uint64_t until = std::min(deadline_ns, now + passive_interval_ns());
    timespec ts{static_cast<time_t>(until / 1'000'000'000), static_cast<long>(until % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: loop checks cancel
  }
}

template <typename Ready, typename Housekeeping>
Status Waiter::wait(Ready&& ready, WakeChannel& channel, Timeout timeout, Housekeeping&& housekeeping) {
  if (ready()) return Status::success();
  const std::uint64_t start = monotonic_ns();
  const std::uint64_t deadline =
      timeout ? start + static_cast<std::uint64_t>(std::max<std::int64_t>(timeout->count(), 0)) : kWaitForever;
  bool became_ready = false;

  if (passive_ && options_.strategy != WaitStrategy::Spin) return wait_passively(ready, deadline, housekeeping);
  if (options_.strategy == WaitStrategy::Block) {
    return block_until(ready, channel, deadline, kWaitForever, housekeeping, became_ready);
  }
  const WarmSet& warm = WarmSet::of_this_thread();
  if (options_.strategy == WaitStrategy::Spin) {
    std::uint64_t next_check = start + kHousekeepingNs;
    std::uint64_t next_warm = start + kWarmCachesIntervalNs;
    for (std::uint32_t i = 1;; ++i) {
      if (ready()) return Status::success();
      poll_relax();
      if ((i & 255) == 0) {
        if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
        const std::uint64_t now = monotonic_ns();
        if (now >= deadline) return {ErrorCode::Timeout, "timed out"};
        if (now >= next_warm) {
          warm.warm();
          next_warm = now + kWarmCachesIntervalNs;
        }
        if (now >= next_check) {
          housekeeping();
          next_check = now + kHousekeepingNs;
        }
      }
    }
  }

  // Adaptive: sleep until shortly before the predicted arrival (a publisher wakes us if it comes
  // early), poll across the window where it is likely, then block if it still has not come.
  tighten_timer_slack();
  const AdaptivePlanner::Plan plan = planner_.plan(start);
  if (plan.wake_at > start + adaptive::kShortestSleepNs) {
    Status st = block_until(ready, channel, deadline, plan.wake_at, housekeeping, became_ready);
    if (!st.ok() || became_ready) return st;
    planner_.note_oversleep(monotonic_ns() - plan.wake_at);
  }
  std::uint64_t now = monotonic_ns();
  const std::uint64_t poll_until = std::max(plan.poll_until, now + 20'000);
  warm.warm();  // whatever this thread touches next went cold while it slept
  std::uint64_t next_warm = now + kWarmCachesIntervalNs;
  for (std::uint32_t i = 1; now < poll_until; ++i) {
    if (ready()) return Status::success();
    poll_relax();
    if ((i & 63) == 0) {
      if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
      now = monotonic_ns();
      if (now >= deadline) return {ErrorCode::Timeout, "timed out"};
      if (now >= next_warm) {
        warm.warm();
        next_warm = now + kWarmCachesIntervalNs;
      }
    }
  }
  return block_until(ready, channel, deadline, kWaitForever, housekeeping, became_ready);
}

}  // namespace cerulion::detail
