// SPDX-License-Identifier: Apache-2.0
#pragma once
// The publisher behind cerulion::Publisher: its state and the steps of a loan and a publish that
// are inlined into them. Only publisher.cpp includes it, so the message path compiles in one file
// as before (core/CMakeLists.txt says why that matters).

#include <memory>
#include <optional>
#include <string>

#include "bell.hpp"
#include "cerulion/core/publisher.hpp"
#include "segment.hpp"
#include "waiter.hpp"
#include "warm.hpp"

namespace cerulion {
namespace detail {

class alignas(64) PublisherImpl {
 public:
  PublisherImpl(std::shared_ptr<TopicSegment> segment, std::uint32_t index, PublisherOptions options)
      : segment_(std::move(segment)),
        index_(index),
        // Attaching a publisher fixed the topic's mode for good: no need to read it again.
        mode_(static_cast<Mode>(segment_->control().mode.load(std::memory_order_acquire))),
        room_waiter_(options.wait, static_cast<std::uint32_t>(1u << index)),
        member_waiter_(WaitOptions{WaitStrategy::Block, options.wait.cancel, nullptr, kDefaultWaitCpuBudget}, static_cast<std::uint32_t>(1u << index)) {}

  ~PublisherImpl() {
    WarmSet::of_this_thread().release(warm_ticket_);
    segment_->detach(index_);
  }

  Result<Loan> loan(std::size_t size, Timeout timeout);

  Result<std::uint64_t> publish(Loan& loan, Timeout timeout);

  void drop(Loan& loan) {
    if (loan.impl_ != this) return;
    segment_->slot(loan.slot_).word.fetch_and(~bit());
    --held_;
    loan.impl_ = nullptr;
  }

  Status wait_for_subscribers(std::uint32_t count, Timeout timeout) {
    auto ready = [&] { return segment_->count(Role::Subscriber) >= count; };
    return member_waiter_.wait(ready, segment_->control().members, timeout, [&] { segment_->evict_dead(); });
  }

  Mode mode() const { return mode_; }
  TopicSegment& segment() { return *segment_; }

 private:
  /// A core that has not published for a while misses on every line a publish touches (warm.hpp),
  /// and misses in a row add up. A loan therefore asks for all of them at once, so they arrive
  /// together while the caller fills the payload: the publish line, `slot`, the ring entry after
  /// this publisher's last one, and its cursor. The publish asks again for the loan's slot:
  /// whatever ran in between (filling a camera frame of megabytes) may have evicted them.
  void start_fetching_publish_lines(std::uint32_t slot) {
    prefetch(&segment_->control(), Access::Write);
    prefetch(&segment_->slot(slot), Access::Write);
    prefetch(segment_->log_after(last_entry_), Access::Write);
    prefetch(&segment_->participant(index_).cursor, Access::Write);
  }

  std::uint64_t bit() const { return 1ull << index_; }

  /// Enrols what the next loan and publish touch in this thread's warm set (warm.hpp); the next
  /// slot changes with every loan, so its two lines are updated each time. Not the ring entry the
  /// next publish fills, nor the slot that publish closes: finding that slot means reading the
  /// entry, which the polling subscribers' cores hold, and the read stalled the publish
  /// (docs/performance.md); the loan reads it once instead (fetch_ring_lines).
  ///
  /// The next loan most likely takes the slot at the round-robin hint, which nobody touches until
  /// then: its lines are also fetched for writing right away, which takes their transfer off the
  /// next publish.
  void keep_next_publish_warm() {
    const SlotControl* next_slot = &segment_->slot(hint_);
    const std::byte* next_data = segment_->slot_data(hint_);
    prefetch(next_slot, Access::Write);
    prefetch(next_data, Access::Write);
    WarmSet& set = WarmSet::of_this_thread();
    if (!set.holds(warm_ticket_)) [[unlikely]] enrol_publish_lines();
    set.set_line(warm_ticket_, WarmLine::NextSlot, next_slot, Access::Write);
    set.set_line(warm_ticket_, WarmLine::NextData, next_data, Access::Write);
  }
  /// keep_next_publish_warm's lines that stay, out of line: once per enrolment, not per message.
  [[gnu::noinline]] void enrol_publish_lines();
  /// The lines keep_next_publish_warm enrols.
  enum class WarmLine : std::uint32_t { Self, Segment, SegmentTail, PublishLine, Cursor, NextSlot, NextData };

  /// The ring entry the publish most likely fills, and the slot whose window that entry closes.
  void fetch_ring_lines() {
    LogEntry& entry = segment_->log(segment_->control().published.load(std::memory_order_relaxed));
    const std::uint64_t old = entry.seq_slot.load(std::memory_order_relaxed);
    const auto old_slot = static_cast<std::uint32_t>(old & kSlotIndexMask);
    if (old != 0 && old_slot < segment_->slot_count()) prefetch(&segment_->slot(old_slot), Access::Write);
  }

  bool has_room(std::uint64_t seq) {
    // Cursors only grow, so a cached minimum is a safe lower bound; rescan only when it blocks.
    if (seq < cached_min_cursor_ + segment_->depth()) [[likely]] return true;
    return rescan_room(seq);
  }
  /// has_room's rescan, out of line: once per depth messages, so it stays off the lines every
  /// publish runs through.
  bool rescan_room(std::uint64_t seq);

  /// Lockstep: whether there is room for one more message now, without waiting (the common
  /// case, answered from the cached minimum cursor); false too when the counters are damaged, so
  /// that wait_for_room reports it.
  bool room_now() {
    return has_room(segment_->control().published.load(std::memory_order_acquire)) && !damaged_;
  }

  [[gnu::cold, gnu::noinline]] Status damage_report() const {
    return segment_->damage("a lockstep subscriber is further behind than its depth of " +
                            std::to_string(segment_->depth()) + " allows");
  }

  /// Out of line: its wait loops stay out of the loan's and the publish's code and stack frames.
  [[gnu::noinline]] Status wait_for_room(Timeout timeout);

  /// Wakes the readers asleep for a message: on the topic's word, and on their wait sets' bells.
  void notify_readers(Control& ctl) {
    ctl.data.notify();  // its fence orders the load below after the publish too
    const std::uint32_t bell_sleepers = ctl.data_bell_sleepers.load(std::memory_order_acquire);  // their bell_id too
    if (bell_sleepers != 0) [[unlikely]] ring_bells(bell_sleepers);
  }
  /// Rings the bells of the readers in `sleepers`. One this process cannot ring (it is gone, or
  /// is no bell) is marked unreachable in the reader's record, and the wait set stops using it.
  [[gnu::noinline, gnu::cold]] void ring_bells(std::uint32_t sleepers) {
    for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
      if ((sleepers & (1u << i)) == 0) continue;
      std::atomic<std::uint64_t>& bell_id = segment_->participant(i).bell_id;
      std::uint64_t id = bell_id.load(std::memory_order_acquire);
      if (id == 0 || id == kUnreachableBell || ring_bell(id)) continue;
      bell_id.compare_exchange_strong(id, kUnreachableBell);
    }
  }

  std::optional<std::uint32_t> claim_free_slot() {
    const std::uint32_t hot = segment_->hot_slots();
    const std::uint32_t total = segment_->slot_count();
    // Round robin over the hot slots keeps reuse FIFO (the next one is the one released longest
    // ago) and the touched memory small; the rest of the pool is the overflow for held samples.
    for (std::uint32_t probe = 0; probe < total; ++probe) {
      std::uint32_t k = probe;
      if (probe < hot) k = hint_ + probe < hot ? hint_ + probe : hint_ + probe - hot;  // no division
      SlotControl& sc = segment_->slot(k);
      std::uint64_t word = sc.word.load(std::memory_order_acquire);
      if (!slot_is_free(word)) continue;
      if (sc.word.compare_exchange_strong(word, (kLoanTag << kTagShift) | bit(), std::memory_order_acq_rel)) {
        if (k < hot) hint_ = k + 1 < hot ? k + 1 : 0;
        return k;
      }
    }
    return std::nullopt;
  }

  Status grow_slot(std::uint32_t slot, SlotControl& sc, std::size_t size) {
    // A slot's memory is committed as it grows, and committed before anyone writes it: a page
    // written without it would fault (SIGBUS) in every process that touches it once /dev/shm is
    // full. Only the loan's holder grows a slot.
    const std::uint32_t generation = segment_->generation();
    std::uint64_t high = sc.high_water.load(std::memory_order_relaxed);
    const std::uint32_t high_generation = sc.high_water_generation.load(std::memory_order_relaxed);
    if (high_generation == generation && size <= high) return Status::success();
    if (high_generation != generation) {
      // The slot moves to another generation: what it committed in the old one is nobody's now.
      segment_->release_payload(high_generation, slot, high);
      high = 0;
    }
    if (Status st = segment_->reserve_payload(generation, slot, high, size); !st.ok()) return st;
    sc.high_water_generation.store(generation, std::memory_order_relaxed);
    sc.high_water.store(size, std::memory_order_relaxed);
    std::uint64_t largest = segment_->control().largest_payload.load(std::memory_order_relaxed);
    while (largest < size && !segment_->control().largest_payload.compare_exchange_weak(largest, size)) {
    }
    return Status::success();
  }

  /// CLOCK_REALTIME derived from a CLOCK_MONOTONIC reading: one clock read per publish instead
  /// of two. The offset is refreshed every kRealtimeRefreshNs so clock adjustments show up promptly.
  std::uint64_t realtime_from_monotonic(std::uint64_t mono) {
    if (mono - realtime_refreshed_at_ > kRealtimeRefreshNs || realtime_refreshed_at_ == 0) [[unlikely]] {
      refresh_realtime_offset(mono);
    }
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(mono) + realtime_offset_);
  }
  static constexpr std::uint64_t kRealtimeRefreshNs = 100'000'000;
  void refresh_realtime_offset(std::uint64_t mono);

  // Everything a loan and a publish read or write here fits the first cache line.
  std::shared_ptr<TopicSegment> segment_;
  std::uint32_t index_;
  std::uint32_t held_ = 0;
  std::uint64_t cached_min_cursor_ = 0;
  std::uint64_t realtime_refreshed_at_ = 0;
  std::int64_t realtime_offset_ = 0;
  std::uint32_t hint_ = 0;
  Mode mode_;
  bool damaged_ = false;  ///< the shared counters contradict each other (has_room)
  WarmTicket warm_ticket_;
  LogEntry* last_entry_ = &segment_->log(0);  ///< the ring entry of this publisher's last publish
  Waiter room_waiter_;
  Waiter member_waiter_;
};

}  // namespace detail
}  // namespace cerulion
