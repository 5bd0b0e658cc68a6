// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/wait_set.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "subscriber_impl.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449  // the same number on every architecture (Linux 5.16+)
#endif

namespace cerulion {
namespace detail {
namespace {

// Kernel headers older than 5.16 lack these; the ABI is fixed.
struct FutexWaitv {
  std::uint64_t val;
  std::uint64_t uaddr;
  std::uint32_t flags;
  std::uint32_t reserved;
};
constexpr std::uint32_t kFutexSize32 = 2;  // FUTEX2_SIZE_U32; shared (not FUTEX2_PRIVATE): other processes wake us

timespec to_timespec(std::uint64_t ns) {
  return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

}  // namespace

class WaitSetImpl {
 public:
  explicit WaitSetImpl(WaitOptions options) : options_(options) {}

  Result<std::size_t> add(Subscriber& subscriber) {
    SubscriberImpl* impl = subscriber.impl_.get();
    if (impl == nullptr) return Status(ErrorCode::InvalidArgument, "a moved-from subscriber cannot be waited on");
    if (next_member_key_ >= kMaxWaitSetMembers) {
      return Status(ErrorCode::InvalidArgument,
                    "a wait set watches at most " + std::to_string(kMaxWaitSetMembers) + " subscribers");
    }
    for (const auto& m : members_) {
      if (m.impl == impl) return Status(ErrorCode::InvalidArgument, "the wait set already watches '" + subscriber.topic() + "'");
    }
    members_.push_back({impl, next_member_key_});
    return next_member_key_++;
  }

  void remove(const Subscriber& subscriber) {
    std::erase_if(members_, [&](const Member& m) { return m.impl == subscriber.impl_.get(); });
  }

  Result<std::size_t> add_timer(std::chrono::nanoseconds period) {
    if (period.count() <= 0) return Status(ErrorCode::InvalidArgument, "a timer's period must be greater than 0");
    if (timers_.size() >= kMaxWaitSetMembers) {
      return Status(ErrorCode::InvalidArgument, "a wait set holds at most " + std::to_string(kMaxWaitSetMembers) + " timers");
    }
    const auto p = static_cast<std::uint64_t>(period.count());
    timers_.push_back({p, monotonic_ns() + p});
    return timers_.size() - 1;
  }

  Result<WaitSetReady> wait(Timeout timeout);

 private:
  struct Member {
    SubscriberImpl* impl;
    std::size_t key;
  };
  struct Timer {
    std::uint64_t period;
    std::uint64_t due;
  };

  /// Fills `ready_` with what is ready now; true if anything is.
  CERULION_HOT_PATH bool poll(std::uint64_t now) {
    std::uint64_t messages = 0;
    for (const auto& m : members_) {
      if (m.impl->has_message()) messages |= 1ull << m.key;
    }
    std::uint64_t timers = 0;
    if (!timers_.empty() && now >= next_timer_due_) {
      for (std::size_t i = 0; i < timers_.size(); ++i) {
        Timer& t = timers_[i];
        if (now < t.due) continue;
        timers |= 1ull << i;
        // Stay on the grid: a timer several periods late fires once and keeps its phase.
        t.due += ((now - t.due) / t.period + 1) * t.period;
      }
    }
    ready_.messages_ = messages;
    ready_.timers_ = timers;
    return (messages | timers) != 0;
  }

  std::uint64_t next_timer_due() const {
    std::uint64_t due = UINT64_MAX;
    for (const auto& t : timers_) due = std::min(due, t.due);
    return due;
  }

  bool cancelled() const { return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed); }

  void housekeeping() {
    for (const auto& m : members_) m.impl->evict_dead();
  }

  /// Sleeps on every member's wake channel at once until something is ready, `sleep_until`
  /// (Ok, nothing ready), the deadline (Timeout) or a cancel (Interrupted).
  Status block(std::uint64_t deadline, std::uint64_t sleep_until, bool& became_ready);
  /// One sleep of at most until `until` on all members' channels (registered as sleepers).
  void sleep_on_members(std::uint64_t until);

  WaitOptions options_;
  std::vector<Member> members_;
  std::vector<Timer> timers_;
  std::size_t next_member_key_ = 0;
  std::uint64_t next_timer_due_ = UINT64_MAX;
  WaitSetReady ready_;
  std::vector<FutexWaitv> waitv_;
  bool waitv_missing_ = false;
};

void WaitSetImpl::sleep_on_members(std::uint64_t until) {
  const std::uint64_t now = monotonic_ns();
  if (until <= now) return;
  if (members_.empty()) {
    timespec ts = to_timespec(until);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller re-checks
    return;
  }
  waitv_.resize(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    WakeChannel& channel = members_[i].impl->data_channel();
    waitv_[i] = {channel.sequence.load(std::memory_order_seq_cst),
                 reinterpret_cast<std::uint64_t>(&channel.sequence), kFutexSize32, 0};
    channel.sleepers.fetch_or(members_[i].impl->sleeper_bit(), std::memory_order_seq_cst);
  }
  // A publish between our check and the registration above bumped no sequence we read: re-check.
  bool published = false;
  for (const auto& m : members_) published = published || m.impl->has_message();
  if (!published) {
    if (!waitv_missing_) {
      timespec ts = to_timespec(until);
      long rc = syscall(SYS_futex_waitv, waitv_.data(), static_cast<unsigned>(waitv_.size()), 0u, &ts, CLOCK_MONOTONIC);
      if (rc < 0 && errno == ENOSYS) waitv_missing_ = true;
    }
    if (waitv_missing_) {
      // Before Linux 5.16: sleep on the first member's word, waking every 200 µs to look at the others.
      const std::uint64_t slice = std::min<std::uint64_t>(until - now, 200'000);
      futex_wait(&members_.front().impl->data_channel().sequence, static_cast<std::uint32_t>(waitv_.front().val),
                 static_cast<std::int64_t>(slice));
    }
  }
  for (const auto& m : members_) m.impl->data_channel().sleepers.fetch_and(~m.impl->sleeper_bit(), std::memory_order_relaxed);
}

Status WaitSetImpl::block(std::uint64_t deadline, std::uint64_t sleep_until, bool& became_ready) {
  became_ready = false;
  std::uint64_t next_housekeeping = monotonic_ns() + kHousekeepingNs;
  for (;;) {
    const std::uint64_t now = monotonic_ns();
    if (poll(now)) {
      became_ready = true;
      return Status::success();
    }
    if (cancelled()) return {ErrorCode::Interrupted, "interrupted"};
    if (now >= deadline) return {ErrorCode::Timeout, "timed out"};
    if (now >= sleep_until) return Status::success();
    if (now >= next_housekeeping) {
      housekeeping();
      next_housekeeping = now + kHousekeepingNs;
    }
    sleep_on_members(std::min({deadline, sleep_until, next_housekeeping, next_timer_due_}));
  }
}

CERULION_HOT_PATH Result<WaitSetReady> WaitSetImpl::wait(Timeout timeout) {
  next_timer_due_ = next_timer_due();
  const std::uint64_t start = monotonic_ns();
  if (poll(start)) return ready_;
  const std::uint64_t deadline =
      timeout ? start + static_cast<std::uint64_t>(std::max<std::int64_t>(timeout->count(), 0)) : kWaitForever;
  bool became_ready = false;

  if (options_.strategy == WaitStrategy::Block) {
    Status st = block(deadline, kWaitForever, became_ready);
    if (!st.ok()) return st;
    return ready_;
  }

  const WarmSet& warm = WarmSet::of_this_thread();
  if (options_.strategy == WaitStrategy::Spin) {
    std::uint64_t next_check = start + kHousekeepingNs;
    std::uint64_t next_warm = start + kWarmCachesIntervalNs;
    for (std::uint32_t i = 1;; ++i) {
      // Timers are looked at with the clock, every 256 polls; members on every poll.
      bool any = false;
      for (const auto& m : members_) any = any || m.impl->has_message();
      if (any && poll(monotonic_ns())) return ready_;
      poll_relax();
      if ((i & 255) == 0) {
        const std::uint64_t now = monotonic_ns();
        if (poll(now)) return ready_;
        if (cancelled()) return Status(ErrorCode::Interrupted, "interrupted");
        if (now >= deadline) return Status(ErrorCode::Timeout, "timed out");
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

  // Adaptive: plan around the member whose next message is expected first (each member's waiter
  // learns its publisher's rhythm as messages are taken). Members with nothing learnt wake the
  // set through their channel; a timer bounds the sleep by its due time.
  Waiter::tighten_timer_slack();
  AdaptivePlanner::Plan plan{0, start + adaptive::kUnlearntPollNs};
  AdaptivePlanner* planner = nullptr;
  for (const auto& m : members_) {
    AdaptivePlanner& p = m.impl->waiter().planner();
    if (p.predicted_next_ns() == 0) continue;
    const AdaptivePlanner::Plan candidate = p.plan(start);
    if (planner == nullptr || candidate.wake_at < plan.wake_at) {
      plan = candidate;
      planner = &p;
    }
  }
  if (planner == nullptr && !timers_.empty()) plan = {next_timer_due_, next_timer_due_};
  if (plan.wake_at > start + adaptive::kShortestSleepNs) {
    Status st = block(deadline, plan.wake_at, became_ready);
    if (!st.ok()) return st;
    if (became_ready) return ready_;
    if (planner != nullptr) planner->note_oversleep(monotonic_ns() - plan.wake_at);
  }
  std::uint64_t now = monotonic_ns();
  const std::uint64_t poll_until = std::max(plan.poll_until, now + 20'000);
  warm.warm();
  std::uint64_t next_warm = now + kWarmCachesIntervalNs;
  for (std::uint32_t i = 1; now < poll_until; ++i) {
    bool any = false;
    for (const auto& m : members_) any = any || m.impl->has_message();
    if (any && poll(monotonic_ns())) return ready_;
    poll_relax();
    if ((i & 63) == 0) {
      if (cancelled()) return Status(ErrorCode::Interrupted, "interrupted");
      now = monotonic_ns();
      if (poll(now)) return ready_;
      if (now >= deadline) return Status(ErrorCode::Timeout, "timed out");
      if (now >= next_warm) {
        warm.warm();
        next_warm = now + kWarmCachesIntervalNs;
      }
    }
  }
  Status st = block(deadline, kWaitForever, became_ready);
  if (!st.ok()) return st;
  return ready_;
}

}  // namespace detail

WaitSet::WaitSet(WaitOptions options) : impl_(std::make_unique<detail::WaitSetImpl>(options)) {}
WaitSet::WaitSet(WaitSet&&) noexcept = default;
WaitSet& WaitSet::operator=(WaitSet&&) noexcept = default;
WaitSet::~WaitSet() = default;

Result<std::size_t> WaitSet::add(Subscriber& subscriber) { return impl_->add(subscriber); }
void WaitSet::remove(const Subscriber& subscriber) { impl_->remove(subscriber); }
Result<std::size_t> WaitSet::add_timer(std::chrono::nanoseconds period) { return impl_->add_timer(period); }
CERULION_HOT_PATH Result<WaitSetReady> WaitSet::wait(Timeout timeout) { return impl_->wait(timeout); }

}  // namespace cerulion
