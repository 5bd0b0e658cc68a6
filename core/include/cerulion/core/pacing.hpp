// SPDX-License-Identifier: Apache-2.0
#pragma once
// Publishing on a tick, on time: a timed sleep on Linux ends late (tens of µs on bare metal,
// hundreds on a busy VM), and a subscriber that learnt the tick pays for every late message.

#include <atomic>
#include <cstdint>
#include <memory>

namespace cerulion {

/// Polls CLOCK_MONOTONIC until `deadline_ns`, keeping this thread's caches warm (warm_caches());
/// never sleeps. For the last stretch before a latency-critical publish.
void spin_until(std::uint64_t deadline_ns) noexcept;

/// Returns at a deadline to within a microsecond or two at a small cost in CPU: it sleeps until
/// shortly before the deadline, by as much as its own recent sleeps overslept, then polls. One
/// per pacing thread (it learns that thread's timer lateness):
///
///     cerulion::Pacer pacer;
///     for (std::uint64_t tick = cerulion::monotonic_ns();; tick += period_ns) {
///       if (!pacer.sleep_until(tick, &stop)) break;
///       publisher.publish(...);
///     }
class Pacer {
 public:
  Pacer();
  Pacer(const Pacer& other);
  Pacer& operator=(const Pacer& other);
  ~Pacer();

  /// Sleeps, then polls, until `deadline_ns` (CLOCK_MONOTONIC). Returns false, before the
  /// deadline, when `cancel` is set; a deadline already past returns true at once.
  bool sleep_until(std::uint64_t deadline_ns, const std::atomic<bool>* cancel = nullptr);

  /// The sleeping half alone: returns ahead of `deadline_ns` by lead_ns() (at once when the
  /// deadline is nearer than that), for a caller that polls the rest in its own way.
  void sleep_ahead_of(std::uint64_t deadline_ns);

  /// How far ahead of a deadline the sleep ends now: the recent oversleep's high quantile and a
  /// little more, between 50 µs and 2 ms.
  [[nodiscard]] std::uint64_t lead_ns() const;

 private:
  struct Oversleep;  // what this thread's recent timed sleeps overslept
  std::unique_ptr<Oversleep> oversleep_;
};

}  // namespace cerulion
