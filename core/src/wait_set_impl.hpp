// SPDX-License-Identifier: Apache-2.0
#pragma once
// The wait set behind cerulion::WaitSet: its members, timers and polling (wait_set.cpp), and how
// it sleeps, on its bell or on all its members' words (wait_set_sleep.cpp).

#include <algorithm>
#include <bit>
#include <array>
#include <string>
#include <optional>
#include <vector>

#include "bell.hpp"
#include "cerulion/core/wait_set.hpp"
#include "subscriber_impl.hpp"
#include "wait_loop.hpp"
#include "warm.hpp"

namespace cerulion::detail {

/// One entry of futex_waitv's list; kernel headers older than 5.16 lack it, and the ABI is fixed.
struct FutexWaitv {
  std::uint64_t val;
  std::uint64_t uaddr;
  std::uint32_t flags;
  std::uint32_t reserved;
};

class WaitSetImpl {
 public:
  explicit WaitSetImpl(WaitOptions options) : options_(options), budget_scale_(adaptive::budget_scale(options.cpu_budget)) {}
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
    polled.member = impl;
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
      polled_[i].member = members_[i + 1].impl;
      members_[i + 1].impl->join_wait_set(this, &polled_[i]);
    }
    members_.erase(it);
    next_turn_ = 0;
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
  Result<WaitSetEvent> receive(Timeout timeout);
  /// receive()'s wait when nothing is ready at once, out of line: the wait loops' code and stack
  /// frame stay off the path of a message that is there already. Taken (a message, or a timer:
  /// `event` says which), or Failed with why the wait ended or the take failed.
  [[gnu::noinline]] SubscriberImpl::Take wait_and_receive(WaitSetEvent& event, Status& failure, Timeout timeout);

 private:
  /// wait() and wait_and_receive()'s bodies; `kTraced`: their loops write options_.trace. The
  /// traced ones run out of line, out of the hot section (wait_loop.hpp's WaitLoop says why).
  template <bool kTraced>
  [[gnu::always_inline]] inline Result<WaitSetReady> wait_for(Timeout timeout);
  template <bool kTraced>
  [[gnu::always_inline]] inline SubscriberImpl::Take wait_and_receive_for(WaitSetEvent& event, Status& failure,
                                                                        Timeout timeout);
  [[gnu::noinline]] Result<WaitSetReady> wait_traced(Timeout timeout);
  [[gnu::noinline]] SubscriberImpl::Take wait_and_receive_traced(WaitSetEvent& event, Status& failure, Timeout timeout);

  struct Member {
    SubscriberImpl* impl;
    std::size_t key;
  };
  struct Timer {
    std::uint64_t period;
    std::uint64_t due;
    /// Moves `due` past `now` (≥ due) on its grid: a timer several periods late fires once and
    /// keeps its phase.
    void fire(std::uint64_t now) { due += ((now - due) / period + 1) * period; }
  };

  /// Fills `ready_` with what is ready now; true if anything is.
  CERULION_HOT_PATH bool poll(std::uint64_t now) {
    std::uint64_t timers = 0;
    if (!timers_.empty() && now >= next_timer_due_) {
      for (std::size_t i = 0; i < timers_.size(); ++i) {
        Timer& t = timers_[i];
        if (now < t.due) continue;
        timers |= 1ull << i;
        t.fire(now);
      }
    }
    ready_.timers_ = timers;
    return poll_members() || timers != 0;
  }
  /// Whether the member `p` polls has a message at its cursor (what its take would act on).
  static bool has_message(const PolledCursor& p) {
    const std::uint64_t cursor = p.cursor.load(std::memory_order_relaxed);
    const std::atomic<std::uint64_t>* entry = p.entry.load(std::memory_order_acquire);
    return SubscriberImpl::entry_holds(entry->load(std::memory_order_acquire), cursor);
  }
  /// Fills `ready_`'s members with those that have a message now; true if any has. What the wait
  /// loop polls: timers are its return_at, and need the clock.
  bool poll_members() {
    std::uint64_t messages = 0;
    const std::size_t n = members_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const PolledCursor& p = polled_[i];
      if (has_message(p)) messages |= p.key_bit;
    }
    ready_.messages_ = messages;
    return messages != 0;
  }

  /// Takes one message into `event` from the first member with one, starting at the member whose
  /// turn it is: Taken (event's key set), None, or Failed with `failure`. Polls and takes in one
  /// pass: a message found is taken at once, as a single subscriber's poll takes it.
  SubscriberImpl::Take take_first_ready(WaitSetEvent& event, Status& failure) {
    const std::size_t n = members_.size();
    std::size_t i = next_turn_;
    for (std::size_t k = 0; k < n; ++k) {
      const PolledCursor& p = polled_[i];
      const std::size_t next = i + 1 < n ? i + 1 : 0;
      if (has_message(p)) {
        const SubscriberImpl::Take taken = p.member->take(event.sample_, failure);
        if (taken != SubscriberImpl::Take::None) {
          event.key_ = static_cast<std::size_t>(std::countr_zero(p.key_bit));
          next_turn_ = next;
          return taken;
        }
      }
      i = next;
    }
    return SubscriberImpl::Take::None;
  }
  /// The first timer due at `now`, moved to its next due time on its grid; its key in `key`.
  bool fire_timer(std::uint64_t now, std::size_t& key);

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
  void keep_polling_warm() {
    if (warm_lines_stale_ || !WarmSet::of_this_thread().holds(warm_ticket_)) [[unlikely]] enrol_polling_lines();
  }
  /// keep_polling_warm's enrolment, out of line: once per change, not per wait.
  [[gnu::noinline]] void enrol_polling_lines();
  static constexpr std::size_t kWarmedMembers = 8;
  enum class SetLine : std::uint32_t { Self, SelfTail, Polled, PolledSecond, PolledThird };

  /// Each member's look after its ring (SubscriberImpl::look_after_ring): the first member found
  /// damaged ends the wait with its Status, as its own receive would.
  Status housekeeping() {
    for (const auto& m : members_) {
      if (Status damage = m.impl->look_after_ring(); !damage.ok()) return damage;
    }
    return Status::success();
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
    Status& failure;  ///< a damaged member's, found by housekeeping: ends the wait
    bool ready() { return !failure.ok() || set.poll_members(); }
    bool sleep(std::uint64_t until) { return !failure.ok() || set.sleep_on_members(until); }
    void housekeeping() { failure = set.housekeeping(); }
  };

  /// receive()'s target: ready when a member's message is taken (or taking it failed).
  struct TakingTarget {
    WaitSetImpl& set;
    WaitSetEvent& event;
    Status& failure;
    SubscriberImpl::Take& taken;
    bool ready() {
      return taken == SubscriberImpl::Take::Failed ||
             (taken = set.take_first_ready(event, failure)) != SubscriberImpl::Take::None;
    }
    bool sleep(std::uint64_t until) {
      return taken == SubscriberImpl::Take::Failed || (set.sleep_on_members(until) && ready());
    }
    void housekeeping() {
      if (Status damage = set.housekeeping(); !damage.ok()) [[unlikely]] {
        failure = std::move(damage);
        taken = SubscriberImpl::Take::Failed;
      }
    }
  };

  WaitOptions options_;
  std::vector<Member> members_;
  std::size_t next_turn_ = 0;  ///< the member receive() looks at first
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
  /// Of options_.cpu_budget, for its members' plans; beside warm_lines_stale_, which every wait reads.
  double budget_scale_;
  /// What poll_members reads of members_[i], kept by that member (PolledCursor).
  alignas(64) std::array<PolledCursor, kMaxWaitSetMembers> polled_;
};

}  // namespace cerulion::detail
