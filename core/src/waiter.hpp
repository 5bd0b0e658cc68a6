#pragma once
// The three wait strategies behind every blocking call: spin, block (futex) and adaptive.

#include <cstdint>
#include <functional>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "futex.hpp"

namespace cerulion::detail {

/// Waits until a condition holds. One Waiter per participant and purpose: the adaptive strategy
/// keeps what it learnt about arrival times between calls.
class Waiter {
 public:
  Waiter(WaitOptions options, std::uint32_t participant_bit) : options_(options), bit_(participant_bit) {}

  /// Returns Ok when `ready()` became true, Timeout at the deadline, Interrupted when cancelled.
  /// `channel` is the futex a waker notifies after making `ready()` true. `housekeeping` runs about
  /// every 100 ms while waiting (dead-participant eviction).
  Status wait(const std::function<bool()>& ready, WakeChannel& channel, Timeout timeout,
              const std::function<void()>& housekeeping = {});

  /// Tells the adaptive strategy when the awaited event happened (CLOCK_MONOTONIC ns), so it can
  /// predict the next one. Publish times are more exact than the moment the waiter noticed.
  void record_arrival(std::uint64_t event_ns);

  /// Predicted time of the next arrival, 0 if not learnt yet (for tests and diagnostics).
  std::uint64_t predicted_next_ns() const;

 private:
  bool cancelled() const;
  Status block_until(const std::function<bool()>& ready, WakeChannel& channel, std::uint64_t deadline_ns,
                     std::uint64_t sleep_until_ns, const std::function<void()>& housekeeping, bool& became_ready);

  WaitOptions options_;
  std::uint32_t bit_;
  // Adaptive state, all in ns.
  std::uint64_t last_arrival_ = 0;
  double period_ = 0;      ///< smoothed inter-arrival period
  double jitter_ = 0;      ///< smoothed |arrival - prediction|
  double oversleep_ = 0;   ///< smoothed lateness of timed futex wake-ups
  std::uint32_t arrivals_ = 0;
};

}  // namespace cerulion::detail
