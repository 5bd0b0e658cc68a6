// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/wait_set.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "bell.hpp"
#include "subscriber_impl.hpp"
#include "wait_loop.hpp"
#include "warm.hpp"

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
  ~WaitSetImpl() {
    drop_bell();
    for (const auto& m : members_) m.impl->join_wait_set(nullptr, nullptr);
    WarmSet::of_this_thread().release(warm_ticket_);
  }
  WaitSetImpl(const WaitSetImpl&) = delete;
  WaitSetImpl& operator=(const WaitSetImpl&) = delete;

  Result<std::size_t> add(Subscriber& subscriber) {
    SubscriberImpl* impl = subscriber.impl_.get();
    if (impl == nullptr) return Status(ErrorCode::InvalidArgument, "a moved-from subscriber cannot be waited on");
    if (next_member_key_ >= kMaxWaitSetMembers) {
      return Status(ErrorCode::InvalidArgument,
                    "a wait set watches at most " + std::to_string(kMaxWaitSetMembers) + " subscribers");
    }
    if (impl->wait_set() == this) return Status(ErrorCode::InvalidArgument, "the wait set already watches '" + subscriber.topic() + "'");
    if (impl->wait_set() != nullptr) {
      return Status(ErrorCode::InvalidArgument, "'" + subscriber.topic() + "' is in another wait set: remove it there first");
    }
    if (options_.strategy == WaitStrategy::Adaptive) impl->waiter().learn_arrivals();
    PolledCursor& polled = polled_[members_.size()];
    polled.key_bit = 1ull << next_member_key_;
    impl->join_wait_set(this, &polled);
    members_.push_back({impl, next_member_key_});
    warm_lines_stale_ = true;
    bell_stale_ = true;
    return next_member_key_++;
  }

  void remove(const Subscriber& subscriber) { forget(subscriber.impl_.get()); }

  /// Stops watching `impl` (removed, or being destroyed); the members after it move down a place.
  void forget(SubscriberImpl* impl) {
    auto it = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.impl == impl; });
    if (it == members_.end()) return;
    drop_bell();
    impl->join_wait_set(nullptr, nullptr);
    for (auto i = static_cast<std::size_t>(it - members_.begin()); i + 1 < members_.size(); ++i) {
      polled_[i].key_bit = 1ull << members_[i + 1].key;
      members_[i + 1].impl->join_wait_set(this, &polled_[i]);
    }
    members_.erase(it);
    warm_lines_stale_ = true;
    bell_stale_ = true;
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
    ready_.timers_ = timers;
    return poll_members() || timers != 0;
  }
  /// Fills `ready_`'s members with those that have a message now; true if any has. What the wait
  /// loop polls: timers are its return_at, and need the clock.
  bool poll_members() {
    std::uint64_t messages = 0;
    const std::size_t n = members_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const PolledCursor& p = polled_[i];
      const std::uint64_t cursor = p.cursor.load(std::memory_order_relaxed);
      const std::atomic<std::uint64_t>* entry = p.entry.load(std::memory_order_acquire);
      if (SubscriberImpl::entry_holds(entry->load(std::memory_order_acquire), cursor)) messages |= p.key_bit;
    }
    ready_.messages_ = messages;
    return messages != 0;
  }

  std::uint64_t next_timer_due() const {
    std::uint64_t due = UINT64_MAX;
    for (const auto& t : timers_) due = std::min(due, t.due);
    return due;
  }

  /// Enrols in this thread's warm set what polling reads: the set, the polled cursors of its first
  /// kWarmedMembers members, and those members' subscriber lines, the ring entry at the cursor
  /// among them (each member moves its own along as it takes). Idle members are never taken from,
  /// so nothing else would keep their lines warm, and after a sleep each cold one is a miss on the
  /// path of whichever message comes. Done again only when members change or the warm set let
  /// the enrolment go: not on every wait.
  void keep_polling_warm();
  static constexpr std::size_t kWarmedMembers = 8;
  enum class SetLine : std::uint32_t { Self, SelfTail, Polled, PolledSecond, PolledThird };

  void housekeeping() {
    for (const auto& m : members_) m.impl->evict_dead();
  }

  /// The bell that the members' publishers ring while the set sleeps, made when members changed;
  /// null for fewer than two members (one sleeps on its own word) and where no bell can serve:
  /// members shared with different groups, no room in /dev/shm, or a publisher that could not
  /// ring it. Then the set sleeps on its members' words at once (futex_waitv).
  Bell* bell_for_sleep();
  void make_bell();
  /// Stops using the bell: the members' records no longer name it, and it is unlinked.
  void drop_bell();
  /// One sleep on the bell (bell_for_sleep).
  bool sleep_on_bell(Bell& bell, std::uint64_t now, std::uint64_t until);

  /// One sleep of at most until `until` on all members' channels at once (registered as
  /// sleepers); true if a member had a message once registered (then it does not sleep).
  bool sleep_on_members(std::uint64_t until);
  /// The adaptive plan: around the member whose next message is expected first (each member's
  /// waiter learns its publisher's rhythm as messages are taken), whose planner is `learner`.
  /// Members with nothing learnt wake the set through their channel; with none learnt, a timer
  /// bounds the sleep by its due time.
  AdaptivePlanner::Plan plan_wait(std::uint64_t now, AdaptivePlanner*& learner);

  /// The wait loop's target (wait_loop.hpp).
  struct MembersTarget {
    WaitSetImpl& set;
    bool ready() { return set.poll_members(); }
    bool sleep(std::uint64_t until) { return set.sleep_on_members(until); }
    void housekeeping() { set.housekeeping(); }
  };

  WaitOptions options_;
  std::vector<Member> members_;
  std::vector<Timer> timers_;
  std::size_t next_member_key_ = 0;
  std::uint64_t next_timer_due_ = UINT64_MAX;
  WaitSetReady ready_;
  std::vector<FutexWaitv> waitv_;
  bool waitv_missing_ = false;
  std::optional<Bell> bell_;
  bool bell_stale_ = true;  ///< members changed since make_bell
  WarmTicket warm_ticket_;
  bool warm_lines_stale_ = true;  ///< members changed since keep_polling_warm enrolled them
  /// What poll_members reads of members_[i], kept by that member (PolledCursor).
  alignas(64) std::array<PolledCursor, kMaxWaitSetMembers> polled_;
};

CERULION_HOT_PATH void WaitSetImpl::keep_polling_warm() {
  WarmSet& set = WarmSet::of_this_thread();
  if (set.holds(warm_ticket_) && !warm_lines_stale_) return;
  if (!set.holds(warm_ticket_)) set.enroll(warm_ticket_);
  set.set_line(warm_ticket_, SetLine::Self, this, Access::Read);
  set.set_line(warm_ticket_, SetLine::SelfTail, reinterpret_cast<const std::byte*>(this) + 64, Access::Read);
  const auto* polled = reinterpret_cast<const std::byte*>(polled_.data());
  set.set_line(warm_ticket_, SetLine::Polled, polled, Access::Read);
  set.set_line(warm_ticket_, SetLine::PolledSecond, polled + 64, Access::Read);
  set.set_line(warm_ticket_, SetLine::PolledThird, polled + 128, Access::Read);
  for (std::size_t i = 0; i < members_.size() && i < kWarmedMembers; ++i) members_[i].impl->keep_next_take_warm();
  warm_lines_stale_ = false;
}

CERULION_HOT_PATH bool WaitSetImpl::sleep_on_members(std::uint64_t until) {
  const std::uint64_t now = monotonic_ns();
  if (until <= now) return false;
  if (members_.empty()) {
    timespec ts = to_timespec(until);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: the caller re-checks
    return false;
  }
  if (Bell* bell = bell_for_sleep()) return sleep_on_bell(*bell, now, until);
  waitv_.resize(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) {
    WakeChannel& channel = members_[i].impl->data_channel();
    waitv_[i] = {channel.sequence.load(std::memory_order_seq_cst),
                 reinterpret_cast<std::uint64_t>(&channel.sequence), kFutexSize32, 0};
    channel.sleepers.fetch_or(members_[i].impl->sleeper_bit(), std::memory_order_seq_cst);
  }
  // A publish between our check and the registration above bumped no sequence we read: re-check.
  const bool published = poll_members();
  if (!published && members_.size() == 1) {
    // One word to sleep on: futex_wait's path is shorter than futex_waitv's, by microseconds
    // (docs/performance.md).
    const std::int64_t timeout_ns = until == kWaitForever ? -1 : static_cast<std::int64_t>(until - now);
    futex_wait(&members_.front().impl->data_channel().sequence, static_cast<std::uint32_t>(waitv_.front().val),
               timeout_ns);
  } else if (!published) {
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
  return published;
}

Bell* WaitSetImpl::bell_for_sleep() {
  if (members_.size() < 2) return nullptr;
  if (bell_stale_) {
    bell_stale_ = false;
    make_bell();
  }
  if (!bell_) return nullptr;
  for (const auto& m : members_) {
    if (m.impl->bell_id().load(std::memory_order_relaxed) != bell_->id()) {
      drop_bell();  // a publisher could not ring it
      return nullptr;
    }
  }
  return &*bell_;
}

void WaitSetImpl::make_bell() {
  drop_bell();
  // Every member's publishers must be able to open the bell: those of a topic shared with a group
  // may be other users of that group.
  std::optional<gid_t> group;
  for (const auto& m : members_) {
    const struct stat& st = m.impl->segment().file_status();
    if ((st.st_mode & 0060) == 0) continue;
    if (group && *group != st.st_gid) return;
    group = st.st_gid;
  }
  auto bell = Bell::create(members_.front().impl->segment().domain(), group);
  if (!bell) return;
  bell_ = std::move(*bell);
  for (const auto& m : members_) m.impl->bell_id().store(bell_->id(), std::memory_order_release);
}

void WaitSetImpl::drop_bell() {
  if (!bell_) return;
  for (const auto& m : members_) m.impl->bell_id().store(0, std::memory_order_relaxed);
  bell_.reset();
}

CERULION_HOT_PATH bool WaitSetImpl::sleep_on_bell(Bell& bell, std::uint64_t now, std::uint64_t until) {
  const std::uint32_t rung = bell.word().load(std::memory_order_seq_cst);
  for (const auto& m : members_) m.impl->bell_sleepers().fetch_or(m.impl->sleeper_bit(), std::memory_order_seq_cst);
  // A publish between our check and the registration above rang no bell: re-check.
  const bool published = poll_members();
  if (!published) {
    const std::int64_t timeout_ns = until == kWaitForever ? -1 : static_cast<std::int64_t>(until - now);
    futex_wait(&bell.word(), rung, timeout_ns);
  }
  for (const auto& m : members_) m.impl->bell_sleepers().fetch_and(~m.impl->sleeper_bit(), std::memory_order_relaxed);
  return published;
}

CERULION_HOT_PATH AdaptivePlanner::Plan WaitSetImpl::plan_wait(std::uint64_t now, AdaptivePlanner*& learner) {
  AdaptivePlanner::Plan plan{0, now + adaptive::kUnlearntPollNs};
  learner = nullptr;
  for (const auto& m : members_) {
    AdaptivePlanner& p = m.impl->waiter().planner();
    if (p.predicted_next_ns() == 0) continue;
    const AdaptivePlanner::Plan candidate = p.plan(now);
    if (learner == nullptr || candidate.wake_at < plan.wake_at) {
      plan = candidate;
      learner = &p;
    }
  }
  if (learner == nullptr && !timers_.empty()) plan = {next_timer_due_, next_timer_due_};
  return plan;
}

CERULION_HOT_PATH Result<WaitSetReady> WaitSetImpl::wait(Timeout timeout) {
  keep_polling_warm();
  // A member ready already, or found ready by the wait loop, returns at once, without the clock,
  // unless timers too may be due: a single subscriber's receive reads no clock then either.
  bool members_ready = timers_.empty() && poll_members();
  std::uint64_t now = members_ready ? 0 : monotonic_ns();
  const std::uint64_t deadline = deadline_after(now, timeout);
  MembersTarget target{*this};
  for (bool first = true;; first = false) {
    if (members_ready && timers_.empty()) {
      ready_.timers_ = 0;
      return ready_;
    }
    next_timer_due_ = next_timer_due();
    if (!first) now = monotonic_ns();
    if (poll(now)) return ready_;
    AdaptivePlanner* learner = nullptr;
    const AdaptivePlanner::Plan plan =
        options_.strategy == WaitStrategy::Adaptive ? plan_wait(now, learner) : AdaptivePlanner::Plan{0, 0};
    WaitOutcome out = wait_with(options_.strategy, target, {deadline, next_timer_due_, options_.cancel}, plan, learner);
    if (!out.status.ok()) return std::move(out.status);
    members_ready = out.ready;  // else a timer came due: the poll above says which
  }
}

void SubscriberImpl::leave_wait_set() {
  if (wait_set_ != nullptr) wait_set_->forget(this);
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
