// SPDX-License-Identifier: Apache-2.0
// The wait set's members, timers and polling; how it sleeps is wait_set_sleep.cpp's.
#include "cerulion/core/wait_set.hpp"

#include "wait_set_impl.hpp"

namespace cerulion {
namespace detail {

CERULION_HOT_PATH void WaitSetImpl::enrol_polling_lines() {
  WarmSet& set = WarmSet::of_this_thread();
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

CERULION_HOT_PATH AdaptivePlanner::Plan WaitSetImpl::plan_wait(std::uint64_t now, AdaptivePlanner*& learner) {
  AdaptivePlanner::Plan plan{0, now + adaptive::kUnlearntPollNs};
  learner = nullptr;
  for (const auto& m : members_) {
    AdaptivePlanner& p = m.impl->waiter().planner();
    if (p.predicted_next_ns() == 0) continue;
    const AdaptivePlanner::Plan candidate = p.plan(now, budget_scale_);
    if (learner == nullptr || candidate.wake_at < plan.wake_at) {
      plan = candidate;
      learner = &p;
    }
  }
  if (learner == nullptr && !timers_.empty()) plan = {next_timer_due_, next_timer_due_};
  return plan;
}

CERULION_HOT_PATH Result<WaitSetReady> WaitSetImpl::wait(Timeout timeout) {
  if (options_.trace != nullptr) [[unlikely]] return wait_traced(timeout);
  return wait_for<false>(timeout);
}

Result<WaitSetReady> WaitSetImpl::wait_traced(Timeout timeout) { return wait_for<true>(timeout); }

template <bool kTraced>
Result<WaitSetReady> WaitSetImpl::wait_for(Timeout timeout) {
  keep_polling_warm();
  // A member ready already, or found ready by the wait loop, returns at once, without the clock,
  // unless timers too may be due: a single subscriber's receive reads no clock then either.
  bool members_ready = timers_.empty() && poll_members();
  std::uint64_t now = members_ready ? 0 : monotonic_ns();
  const std::uint64_t deadline = deadline_after(now, timeout);
  Status damage;
  MembersTarget target{*this, damage};
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
    WaitOutcome out = wait_with<kTraced>(options_.strategy, target,
                                        {deadline, next_timer_due_, options_.cancel, kTraced ? options_.trace : nullptr},
                                        plan, learner);
    if (!out.status.ok()) return std::move(out.status);
    if (!damage.ok()) [[unlikely]] return damage;
    members_ready = out.ready;  // else a timer came due: the poll above says which
  }
}

void SubscriberImpl::leave_wait_set() {
  if (wait_set_ != nullptr) wait_set_->forget(this);
}

CERULION_HOT_PATH bool WaitSetImpl::fire_timer(std::uint64_t now, std::size_t& key) {
  if (now < next_timer_due_) return false;
  for (std::size_t i = 0; i < timers_.size(); ++i) {
    Timer& t = timers_[i];
    if (now < t.due) continue;
    t.fire(now);
    next_timer_due_ = next_timer_due();
    key = i;
    return true;
  }
  return false;
}

CERULION_HOT_PATH Result<WaitSetEvent> WaitSetImpl::receive(Timeout timeout) {
  keep_polling_warm();
  // The event is filled where it stands and every path returns `out`, so nothing is moved on the
  // way out (a Status returned instead would cost a move of the whole event).
  Result<WaitSetEvent> out(std::in_place);
  Status failure;
  SubscriberImpl::Take taken = SubscriberImpl::Take::None;
  // As wait(): without timers, a message ready already is taken without reading the clock.
  if (timers_.empty()) TakingTarget{*this, *out, failure, taken}.ready();
  if (taken == SubscriberImpl::Take::None) taken = wait_and_receive(*out, failure, timeout);
  if (taken == SubscriberImpl::Take::Failed) [[unlikely]] out.fail(std::move(failure));
  return out;
}

CERULION_HOT_PATH SubscriberImpl::Take WaitSetImpl::wait_and_receive(WaitSetEvent& event, Status& failure,
                                                                    Timeout timeout) {
  if (options_.trace != nullptr) [[unlikely]] return wait_and_receive_traced(event, failure, timeout);
  return wait_and_receive_for<false>(event, failure, timeout);
}

SubscriberImpl::Take WaitSetImpl::wait_and_receive_traced(WaitSetEvent& event, Status& failure, Timeout timeout) {
  return wait_and_receive_for<true>(event, failure, timeout);
}

template <bool kTraced>
SubscriberImpl::Take WaitSetImpl::wait_and_receive_for(WaitSetEvent& event, Status& failure, Timeout timeout) {
  SubscriberImpl::Take taken = SubscriberImpl::Take::None;
  TakingTarget target{*this, event, failure, taken};
  std::uint64_t now = monotonic_ns();
  const std::uint64_t deadline = deadline_after(now, timeout);
  for (bool first = true;; first = false) {
    if (!first) now = monotonic_ns();
    next_timer_due_ = next_timer_due();
    if (fire_timer(now, event.key_)) return SubscriberImpl::Take::Taken;  // the event is the timer's
    if (target.ready()) return taken;
    AdaptivePlanner* learner = nullptr;
    const AdaptivePlanner::Plan plan =
        options_.strategy == WaitStrategy::Adaptive ? plan_wait(now, learner) : AdaptivePlanner::Plan{0, 0};
    WaitOutcome waited = wait_with<kTraced>(options_.strategy, target,
                                           {deadline, next_timer_due_, options_.cancel, kTraced ? options_.trace : nullptr},
                                           plan, learner);
    if (!waited.status.ok()) {
      failure = std::move(waited.status);
      return SubscriberImpl::Take::Failed;
    }
    if (taken != SubscriberImpl::Take::None) return taken;
  }
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
CERULION_HOT_PATH Result<WaitSetEvent> WaitSet::receive(Timeout timeout) { return impl_->receive(timeout); }

}  // namespace cerulion
