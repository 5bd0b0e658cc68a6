#include "waiter.hpp"

#include <algorithm>
#include <cmath>
#include <sys/prctl.h>

namespace cerulion::detail {
namespace {

constexpr std::uint64_t kHousekeepingNs = 100'000'000;  // liveness checks: stall ≤ 1 s
constexpr std::uint64_t kForever = UINT64_MAX;

// Timed sleeps must end close to when asked: the default 50 µs timer slack would swallow the
// adaptive margin. Per thread, so set lazily on each waiting thread.
void tighten_timer_slack() {
  static thread_local bool done = false;
  if (!done) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    done = true;
  }
}

}  // namespace

bool Waiter::cancelled() const {
  return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed);
}

void Waiter::record_arrival(std::uint64_t event_ns) {
  if (last_arrival_ != 0 && event_ns > last_arrival_) {
    double interval = static_cast<double>(event_ns - last_arrival_);
    if (arrivals_ < 2 || period_ == 0) {
      period_ = interval;
    } else if (interval < period_ * 4) {
      double predicted_error = std::fabs(interval - period_);
      jitter_ += (predicted_error - jitter_) / 8;
      period_ += (interval - period_) / 8;
    } else {
      // A gap (publisher paused): keep the period, forget confidence.
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

Status Waiter::block_until(const std::function<bool()>& ready, WakeChannel& channel, std::uint64_t deadline_ns,
                           std::uint64_t sleep_until_ns, const std::function<void()>& housekeeping,
                           bool& became_ready) {
  // Sleep on the futex until ready, the deadline, or sleep_until_ns (whichever first).
  became_ready = false;
  std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
  for (;;) {
    if (ready()) {
      became_ready = true;
      return Status::success();
    }
    if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
    std::uint64_t now = monotonic_ns();
    if (now >= deadline_ns) return {ErrorCode::Timeout, "timed out"};
    if (now >= sleep_until_ns) return Status::success();
    if (now >= next_housekeeping) {
      if (housekeeping) housekeeping();
      next_housekeeping = now + kHousekeepingNs;
    }
    std::uint64_t until = std::min({deadline_ns, sleep_until_ns, next_housekeeping});
    std::uint32_t seen = channel.sequence.load(std::memory_order_seq_cst);
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

Status Waiter::wait(const std::function<bool()>& ready, WakeChannel& channel, Timeout timeout,
                    const std::function<void()>& housekeeping) {
  if (ready()) return Status::success();
  const std::uint64_t start = monotonic_ns();
  const std::uint64_t deadline =
      timeout ? start + static_cast<std::uint64_t>(std::max<std::int64_t>(timeout->count(), 0)) : kForever;
  bool became_ready = false;

  if (options_.strategy == WaitStrategy::Block) {
    return block_until(ready, channel, deadline, kForever, housekeeping, became_ready);
  }

  if (options_.strategy == WaitStrategy::Spin) {
    std::uint64_t next_check = start + kHousekeepingNs;
    for (std::uint32_t i = 1;; ++i) {
      if (ready()) return Status::success();
      cpu_relax();
      if ((i & 255) == 0) {
        if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
        std::uint64_t now = monotonic_ns();
        if (now >= deadline) return {ErrorCode::Timeout, "timed out"};
        if (now >= next_check) {
          if (housekeeping) housekeeping();
          next_check = now + kHousekeepingNs;
        }
      }
    }
  }

  // Adaptive: sleep until shortly before the predicted arrival (a publisher wakes us if it comes
  // early), poll across the window where it is likely, then block if it still has not come.
  tighten_timer_slack();
  std::uint64_t predicted = predicted_next_ns();
  std::uint64_t poll_until;
  if (predicted == 0) {
    poll_until = start + 50'000;  // nothing learnt yet: a short poll, then block
  } else {
    const double margin = std::clamp(oversleep_ * 1.5 + jitter_ * 3 + 20'000.0, 30'000.0, period_ * 0.5);
    const std::uint64_t wake_at = predicted > static_cast<std::uint64_t>(margin) ? predicted - static_cast<std::uint64_t>(margin) : 0;
    if (start < wake_at) {
      Status st = block_until(ready, channel, deadline, wake_at, housekeeping, became_ready);
      if (!st.ok() || became_ready) return st;
      const double late = static_cast<double>(monotonic_ns() - wake_at);
      oversleep_ += (late - oversleep_) / 8;
    }
    // Poll past the prediction for as long as arrivals usually stray, capped at 5% of a period.
    const double after = std::clamp(jitter_ * 4 + 30'000.0, 30'000.0, std::max(period_ * 0.05, 30'000.0));
    poll_until = std::max(predicted + static_cast<std::uint64_t>(after), monotonic_ns() + 10'000);
  }
  std::uint64_t now = monotonic_ns();
  for (std::uint32_t i = 1; now < poll_until; ++i) {
    if (ready()) return Status::success();
    cpu_relax();
    if ((i & 63) == 0) {
      if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
      now = monotonic_ns();
      if (now >= deadline) return {ErrorCode::Timeout, "timed out"};
    }
  }
  return block_until(ready, channel, deadline, kForever, housekeeping, became_ready);
}

}  // namespace cerulion::detail
