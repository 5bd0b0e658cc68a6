// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/pacing.hpp"

#include <algorithm>
#include <ctime>

#include "cerulion/core/options.hpp"
#include "cerulion/core/warm.hpp"
#include "futex.hpp"
#include "lateness.hpp"
#include "wait_loop.hpp"

namespace cerulion {
namespace {

constexpr double kAssumedOversleepNs = 250'000;  // a VM's timer lateness until measured
constexpr double kLeadFactor = 1.2;
constexpr double kLeadSlackNs = 20'000;
constexpr double kShortestLeadNs = 50'000;
constexpr double kLongestLeadNs = 2'000'000;
constexpr std::uint64_t kCancelSliceNs = 50'000'000;  // how long a cancelled sleep may go on

/// Polls the clock until `deadline_ns`, warming caches every kWarmCachesIntervalNs and checking
/// `cancel` (may be null) as often. False when cancelled.
bool poll_until(std::uint64_t deadline_ns, const std::atomic<bool>* cancel) noexcept {
  std::uint64_t warmed = 0;
  for (std::uint64_t now = monotonic_ns(); now < deadline_ns; now = monotonic_ns()) {
    if (now - warmed >= kWarmCachesIntervalNs) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
      warm_caches();
      warmed = now;
    }
    detail::poll_relax();
  }
  return cancel == nullptr || !cancel->load(std::memory_order_relaxed);
}

}  // namespace

void spin_until(std::uint64_t deadline_ns) noexcept { poll_until(deadline_ns, nullptr); }

struct Pacer::Oversleep : detail::LatenessRing {};

Pacer::Pacer() : oversleep_(std::make_unique<Oversleep>()) {}
Pacer::Pacer(const Pacer& other) : oversleep_(std::make_unique<Oversleep>(*other.oversleep_)) {}
Pacer& Pacer::operator=(const Pacer& other) {
  if (this != &other) *oversleep_ = *other.oversleep_;
  return *this;
}
Pacer::~Pacer() = default;

std::uint64_t Pacer::lead_ns() const {
  return static_cast<std::uint64_t>(
      std::clamp(oversleep_->high(kAssumedOversleepNs) * kLeadFactor + kLeadSlackNs, kShortestLeadNs, kLongestLeadNs));
}

void Pacer::sleep_ahead_of(std::uint64_t deadline_ns) {
  detail::tighten_timer_slack();
  const std::uint64_t lead = lead_ns();
  if (deadline_ns <= lead) return;
  const std::uint64_t wake = deadline_ns - lead;
  if (monotonic_ns() >= wake) return;
  const timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
  if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) return;  // EINTR: not a lateness
  oversleep_->note(monotonic_ns() - wake);
}

bool Pacer::sleep_until(std::uint64_t deadline_ns, const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
  if (cancel != nullptr) {
    // A flag set by another thread, or by a signal just before the sleep began, cuts no sleep
    // short: a long wait sleeps in slices, each followed by a look at the flag.
    const std::uint64_t lead = lead_ns();
    while (deadline_ns > lead + kCancelSliceNs && monotonic_ns() + kCancelSliceNs < deadline_ns - lead) {
      const timespec slice{0, static_cast<long>(kCancelSliceNs)};
      ::nanosleep(&slice, nullptr);
      if (cancel->load(std::memory_order_relaxed)) return false;
    }
  }
  sleep_ahead_of(deadline_ns);
  // A signal that set `cancel` cut the sleep short; the poll sees the flag.
  return poll_until(deadline_ns, cancel);
}

}  // namespace cerulion
