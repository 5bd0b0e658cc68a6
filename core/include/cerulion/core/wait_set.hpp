// SPDX-License-Identifier: Apache-2.0
#pragma once
// One thread waiting on several subscribers and timers at once: a node's event loop.
//
//   cerulion::WaitSet set;
//   auto imu = set.add(imu_sub);                  // subscribers stay owned by the caller
//   auto tick = set.add_timer(period);            // periodic work
//   while (auto event = set.receive()) {           // one message, taken, or one timer
//     if (event->is_timer()) { ... }
//     else if (event->key() == imu) { use(event->sample()); }
//   }
//
// wait() instead says which members are ready and leaves the taking to their try_receive().
//
// It waits with the set's strategy: spin polls every member; block sleeps in the kernel on one
// futex word, as a single subscriber does: its member's own for a set of one, else the set's
// bell, a page in /dev/shm (cerulion-bell.<id>) that every member's publishers ring, removed with
// the set (`cerulion clean` in its first member's domain removes those of processes that died). Where no bell can serve
// (members shared with different groups, a full /dev/shm, a publisher that cannot open it), the
// set sleeps on all its members' words at once (futex_waitv, Linux 5.16+; before that, short
// timed sleeps). Adaptive sleeps until just before the earliest message any member's
// publisher is expected to send (or the next timer), polls, then blocks.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"
#include "cerulion/core/subscriber.hpp"

namespace cerulion {

namespace detail {
class WaitSetImpl;
}

/// Subscribers (and, separately, timers) one WaitSet watches at most.
inline constexpr std::size_t kMaxWaitSetMembers = 64;

/// What one WaitSet::wait() found: the subscribers with a message ready to take, the timers that
/// came due. Keys are what WaitSet::add and add_timer returned.
class WaitSetReady {
 public:
  /// A message is ready: the subscriber's try_receive() returns it (unless another thread took it).
  bool message(std::size_t subscriber_key) const noexcept { return subscriber_key < 64 && (messages_ >> subscriber_key) & 1; }
  /// The timer came due (once per due time: a timer late by several periods fires once, and its
  /// next due time stays on its grid).
  bool timer(std::size_t timer_key) const noexcept { return timer_key < 64 && (timers_ >> timer_key) & 1; }
  bool any_message() const noexcept { return messages_ != 0; }
  bool any_timer() const noexcept { return timers_ != 0; }

 private:
  friend class detail::WaitSetImpl;
  std::uint64_t messages_ = 0;
  std::uint64_t timers_ = 0;
};

/// What one WaitSet::receive() returned: a message taken from one member, or one timer that came
/// due.
class WaitSetEvent {
 public:
  /// A message: sample() holds it, and key() is its subscriber's (what WaitSet::add returned).
  bool is_message() const noexcept { return sample_.valid(); }
  /// A timer came due: key() is the timer's (what WaitSet::add_timer returned).
  bool is_timer() const noexcept { return !sample_.valid(); }
  std::size_t key() const noexcept { return key_; }
  /// The message (empty for a timer). Move it out to keep it past the next receive.
  Sample& sample() noexcept { return sample_; }
  const Sample& sample() const noexcept { return sample_; }

 private:
  friend class detail::WaitSetImpl;
  std::size_t key_ = 0;
  Sample sample_;
};

/// Waits for whichever of several subscribers has a message, or a timer. Move-only. Not thread
/// safe: one thread waits on a set. A subscriber is in one set at a time; destroyed, it leaves
/// its set, and a set destroyed first lets its members go.
class WaitSet {
 public:
  /// `options.strategy` is how the set waits (the members' own strategies are not used here);
  /// `options.cancel` ends a wait with Interrupted.
  explicit WaitSet(WaitOptions options = {});
  WaitSet(WaitSet&&) noexcept;
  WaitSet& operator=(WaitSet&&) noexcept;
  ~WaitSet();

  /// Watches `subscriber`; returns its key. InvalidArgument when the set is full, already holds
  /// it, or it is in another set.
  Result<std::size_t> add(Subscriber& subscriber);
  /// Stops watching `subscriber` (its key is not reused).
  void remove(const Subscriber& subscriber);
  /// A periodic timer, first due one `period` from now; returns its key. InvalidArgument for a
  /// period ≤ 0 or a full set.
  Result<std::size_t> add_timer(std::chrono::nanoseconds period);

  /// Waits until at least one member has a message or a timer is due, up to `timeout` (Timeout)
  /// or until cancelled (Interrupted). Returns at once when something is ready already. Corrupted
  /// when a member's topic is damaged, as that member's receive would say.
  Result<WaitSetReady> wait(Timeout timeout = std::nullopt);

  /// Waits until a member has a message and takes it, or until a timer is due, up to `timeout`
  /// (Timeout) or until cancelled (Interrupted): one message or one timer per call, taken in the
  /// poll that finds it (as Subscriber::receive takes), with no try_receive() after. A due timer
  /// comes first. Members take turns: after a message from one, the next receive looks first at
  /// the member after it, so a busy topic does not keep the others waiting. A member's own errors
  /// (a damaged topic, too many samples held) end the call with that member's Status.
  Result<WaitSetEvent> receive(Timeout timeout = std::nullopt);

 private:
  std::unique_ptr<detail::WaitSetImpl> impl_;
};

}  // namespace cerulion
