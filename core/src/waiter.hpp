// SPDX-License-Identifier: Apache-2.0
#pragma once
// A participant's wait: for a message (subscriber), for room (lockstep publisher), for members.
// The strategies' loops are wait_loop.hpp's, shared with the wait set.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "adaptive_planner.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "futex.hpp"
#include "wait_loop.hpp"

namespace cerulion::detail {

/// Bounds of a tap's check-back interval, and the interval before it has learnt the rate.
inline constexpr std::uint64_t kPassiveIntervalShortestNs = 100'000;
inline constexpr std::uint64_t kPassiveIntervalLongestNs = 10'000'000;
inline constexpr std::uint64_t kPassiveIntervalUnlearntNs = 1'000'000;
/// A tap that polls when its message is due, and whose message is late past the window: how often
/// a period it checks back until the message comes.
inline constexpr double kLateChecksPerPeriod = 8;

/// Waits until a condition holds. One Waiter per participant and purpose: the adaptive strategy
/// keeps what it learnt about arrival times between calls.
class alignas(64) Waiter {
 public:
  /// `passive`: a tap's waiter. It never sleeps on the futex (so publishers never pay a wake-up
  /// system call for it); it checks back at an interval short enough for the ring not to wrap.
  /// `polls_when_due`: a passive adaptive waiter also polls where the next message is due.
  Waiter(WaitOptions options, std::uint32_t participant_bit, bool passive = false, std::uint32_t ring_depth = 16,
         bool polls_when_due = false)
      : options_(options),
        bit_(participant_bit),
        ring_depth_(ring_depth),
        path_(passive && options.strategy != WaitStrategy::Spin ? Path::Passive
              : options.trace != nullptr                         ? Path::Traced
                                                                 : Path::Loops),
        polls_when_due_(polls_when_due && options.strategy == WaitStrategy::Adaptive),
        learns_(options.strategy == WaitStrategy::Adaptive || passive),
        budget_scale_(adaptive::budget_scale(options.cpu_budget)) {}

  /// Returns Ok when `ready()` became true, Timeout at the deadline, Interrupted when cancelled.
  /// `channel` is the futex a waker notifies after making `ready()` true. `housekeeping` runs about
  /// every kHousekeepingNs while waiting (dead-participant eviction).
  template <typename Ready, typename Housekeeping>
  [[gnu::always_inline]] Status wait(Ready&& ready, WakeChannel& channel, Timeout timeout,
                                     Housekeeping&& housekeeping);

  /// Tells the adaptive strategy when the awaited message was published (CLOCK_MONOTONIC ns), so
  /// it can predict the next one. Only a waiter that plans (adaptive, a tap's) or whose planner
  /// an adaptive wait set reads learns: spin and block skip the work on every message.
  void record_arrival(std::uint64_t event_ns) {
    if (learns_) planner_.record_arrival(event_ns);
  }
  /// From now on, learns arrivals whatever its strategy (an adaptive wait set plans with it).
  void learn_arrivals() { learns_ = true; }

  /// What the adaptive strategy learnt; the wait set plans over several members' planners.
  AdaptivePlanner& planner() { return planner_; }
  const AdaptivePlanner& planner() const { return planner_; }

 private:
  /// One wake channel, with this participant's sleeper bit in it.
  template <typename Ready, typename Housekeeping>
  struct ChannelTarget {
    Ready& ready_fn;
    WakeChannel& channel;
    std::uint32_t bit;
    Housekeeping& housekeeping_fn;

    [[gnu::always_inline]] bool ready() { return ready_fn(); }
    [[gnu::always_inline]] void housekeeping() { housekeeping_fn(); }
    [[gnu::always_inline]] bool sleep(std::uint64_t until) {
      const std::uint32_t seen = channel.sequence.load(std::memory_order_seq_cst);
      channel.sleepers.fetch_or(bit, std::memory_order_seq_cst);
      const bool now_ready = ready_fn();
      if (!now_ready) {
        const std::uint64_t now = monotonic_ns();
        if (until > now) futex_wait(&channel.sequence, seen, static_cast<std::int64_t>(until - now));
      }
      channel.sleepers.fetch_and(~bit, std::memory_order_relaxed);
      return now_ready;
    }
  };

  /// How a wait waits, decided when the waiter is built: one byte that the message path tests.
  enum class Path : std::uint8_t {
    Loops,    ///< the strategy's loops (wait_loop.hpp)
    Passive,  ///< a tap's checks at an interval (wait_passively), unless it spins
    Traced,   ///< the loops that write options_.trace, out of line (wait_traced)
  };

  /// The strategy's loops, from `start` until ready or `deadline`; `kTraced`: they write options_.trace.
  template <bool kTraced, typename Ready, typename Housekeeping>
  [[gnu::always_inline]] Status wait_loops(Ready& ready, WakeChannel& channel, std::uint64_t start,
                                           std::uint64_t deadline, Housekeeping& housekeeping);
  /// A wait with options_.trace set: the traced loops, out of line and out of the hot section
  /// (wait_loop.hpp's WaitLoop says why).
  template <typename Ready, typename Housekeeping>
  [[gnu::noinline]] Status wait_traced(Ready& ready, WakeChannel& channel, std::uint64_t start, std::uint64_t deadline,
                                       Housekeeping& housekeeping) {
    return wait_loops<true>(ready, channel, start, deadline, housekeeping);
  }
  template <typename Ready, typename Housekeeping>
  Status wait_passively(Ready& ready, std::uint64_t deadline_ns, Housekeeping& housekeeping);
  /// Polls until ready (true) or until `until_ns` or a cancel (false).
  template <typename Ready>
  bool poll_passively(Ready& ready, std::uint64_t until_ns);
  static void sleep_until_ns(std::uint64_t until) {
    timespec ts{static_cast<time_t>(until / 1'000'000'000), static_cast<long>(until % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller's loop checks cancel
  }
  /// How long a passive waiter sleeps between checks: a quarter of the time the ring takes to fill.
  std::uint64_t passive_interval_ns() const;

  WaitOptions options_;
  std::uint32_t bit_;
  std::uint32_t ring_depth_;
  Path path_;
  bool polls_when_due_;
  bool learns_;
  std::uint64_t last_housekeeping_ns_ = 0;  // monotonic: the last one done as a wait timed out
  double budget_scale_;  // of options_.cpu_budget, for planner_.plan()
  AdaptivePlanner planner_;
};

template <typename Ready, typename Housekeeping>
Status Waiter::wait_passively(Ready& ready, std::uint64_t deadline_ns, Housekeeping& housekeeping) {
  std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
  for (;;) {
    if (ready()) return Status::success();
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      return wait_interrupted();
    }
    const std::uint64_t now = monotonic_ns();
    if (now >= deadline_ns) return wait_timed_out();
    if (now >= next_housekeeping) {
      housekeeping();
      next_housekeeping = now + kHousekeepingNs;
    }
    std::uint64_t until = std::min(deadline_ns, now + passive_interval_ns());
    // Asked to, with the rate learnt and no futex to fall back on, it polls across the window
    // where the next message is due (sleeping until just before it), so a periodic topic's
    // message is taken as it comes rather than up to an interval later. Past the window the
    // message is late (its publisher's timer fired late, on a loaded machine often): it checks
    // back every kLateChecksPerPeriod-th of a period, not at the interval, until it comes.
    if (const std::uint64_t predicted = polls_when_due_ ? planner_.predicted_next_ns() : 0; predicted != 0) {
      const std::uint64_t window_end = planner_.plan(std::min(now, predicted), budget_scale_).poll_until;
      if (now < window_end) {
        const std::uint64_t wake_at = planner_.plan(now, budget_scale_).wake_at;
        if (wake_at <= now + adaptive::kShortestSleepNs) {
          if (poll_passively(ready, std::min(window_end, deadline_ns))) return Status::success();
          continue;
        }
        until = std::min(until, wake_at);
        sleep_until_ns(until);
        if (until == wake_at) planner_.note_oversleep(monotonic_ns() - wake_at);
        continue;
      }
      const auto late_check = static_cast<std::uint64_t>(planner_.period_ns() / kLateChecksPerPeriod);
      until = std::min(until, now + std::max(late_check, kPassiveIntervalShortestNs));
    }
    sleep_until_ns(until);
  }
}

template <typename Ready>
bool Waiter::poll_passively(Ready& ready, std::uint64_t until_ns) {
  for (std::uint32_t i = 1;; ++i) {
    if (ready()) return true;
    poll_relax();
    if ((i & 63) == 0) {
      if (monotonic_ns() >= until_ns) return false;
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) return false;
    }
  }
}

template <typename Ready, typename Housekeeping>
[[gnu::always_inline]] inline Status Waiter::wait(Ready&& ready, WakeChannel& channel, Timeout timeout, Housekeeping&& housekeeping) {
  if (ready()) return Status::success();
  const std::uint64_t start = monotonic_ns();
  const std::uint64_t deadline = deadline_after(start, timeout);
  Status st = [&] {
    if (path_ != Path::Loops) [[unlikely]] {
      if (path_ == Path::Passive) return wait_passively(ready, deadline, housekeeping);
      return wait_traced(ready, channel, start, deadline, housekeeping);
    }
    return wait_loops<false>(ready, channel, start, deadline, housekeeping);
  }();
  if (st.code() == ErrorCode::Timeout) [[unlikely]] {
    // The loops look after dead participants once a wait has lasted kHousekeepingNs; a caller
    // whose every wait is shorter (a loop of short loans) would never evict a dead subscriber.
    // Done as a wait times out, never before a message is seen.
    const std::uint64_t now = monotonic_ns();
    if (now - last_housekeeping_ns_ >= kHousekeepingNs) {
      last_housekeeping_ns_ = now;
      housekeeping();
      if (ready()) return Status::success();
    }
  }
  return st;
}

template <bool kTraced, typename Ready, typename Housekeeping>
[[gnu::always_inline]] inline Status Waiter::wait_loops(Ready& ready, WakeChannel& channel, std::uint64_t start,
                                                        std::uint64_t deadline, Housekeeping& housekeeping) {
  ChannelTarget<Ready, Housekeeping> target{ready, channel, bit_, housekeeping};
  const AdaptivePlanner::Plan plan =
      options_.strategy == WaitStrategy::Adaptive ? planner_.plan(start, budget_scale_) : AdaptivePlanner::Plan{0, 0};
  const WaitLimits limits{deadline, kWaitForever, options_.cancel, kTraced ? options_.trace : nullptr};
  // Only the target's readiness, the deadline and a cancel end a participant's wait.
  for (;;) {
    WaitOutcome out = wait_with<kTraced>(options_.strategy, target, limits, plan, &planner_);
    if (!out.status.ok() || out.ready) return std::move(out.status);
  }
}

}  // namespace cerulion::detail
