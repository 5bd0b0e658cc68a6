// SPDX-License-Identifier: Apache-2.0
#pragma once
// The subscriber behind cerulion::Subscriber, shared with the wait set (which peeks at members and
// sleeps on their wake channels).

#include <algorithm>
#include <memory>
#include <optional>

#include "cerulion/core/subscriber.hpp"
#include "segment.hpp"
#include "waiter.hpp"
#include "warm.hpp"

namespace cerulion {
namespace detail {

class WaitSetImpl;
class SubscriberImpl;

/// What a wait set polls of one member: the ring entry at the member's cursor, and the cursor.
/// The member keeps it current as it takes (join_wait_set), so a wait reads one small record per
/// member and copies nothing. Atomic because the member may be taken from on another thread.
struct PolledCursor {
  std::atomic<const std::atomic<std::uint64_t>*> entry{nullptr};
  std::atomic<std::uint64_t> cursor{0};
  std::uint64_t key_bit = 0;  ///< the member's bit in WaitSetReady
  /// The member itself, beside what is polled, so a take after the poll reads no other line.
  SubscriberImpl* member = nullptr;
};

class alignas(64) SubscriberImpl {
 public:
  SubscriberImpl(std::shared_ptr<TopicSegment> segment, std::uint32_t index, SubscriberOptions options)
      : segment_(std::move(segment)),
        index_(index),
        role_(options.role),
        cursor_(segment_->participant(index).cursor.load()),
        cursor_entry_(&segment_->log(cursor_)),
        pending_lost_(segment_->participant(index).lost.load()),
        held_from_(segment_->participant(index).floor.load()),
        waiter_(options.wait, static_cast<std::uint32_t>(1u << index), options.role == Role::Tap, segment_->depth(),
                options.poll_when_due) {}

  ~SubscriberImpl() {
    leave_wait_set();
    WarmSet::of_this_thread().release(warm_ticket_);
    segment_->detach(index_);
  }

  /// How one attempt to take a message ended.
  enum class Take : std::uint8_t { Taken, None, Failed };
  /// One attempt to take the message at the cursor into `out` (empty on entry): Taken, None when
  /// none is ready, Failed with the reason in `failure`. Out-parameters rather than a
  /// Result<optional<Sample>>: a receive polls this in a loop, and nothing is built or moved
  /// until a message is there.
  Take take(Sample& out, Status& failure);
  /// take() for Subscriber::try_receive.
  Result<std::optional<Sample>> try_take();

  /// Lockstep: the publisher never lets the ring overtake this subscriber's floor (its oldest
  /// held sample), so the slot needs no hold of its own and the entry carries the metadata: one
  /// cache line to read, none to write in shared state.
  Take take_lockstep(Participant& me, const LogEntry& entry, std::uint32_t slot, Sample& out, Status& failure);

  Result<Sample> receive(Timeout timeout);
  /// receive()'s wait for a message not there yet, out of line: the wait loops' code and stack
  /// frame stay off the path of a message that is there already. Taken, or Failed with why the
  /// wait ended (Timeout, Interrupted) or the take failed.
  [[gnu::noinline]] Take wait_and_take(Sample& out, Status& failure, Timeout timeout);

  void release(Sample& sample);

  /// Enrols what taking the next message touches in this thread's warm set (warm.hpp), which the
  /// wait loops prefetch while they poll. The ring entry itself is left out: polling reads it.
  void keep_next_take_warm() {
    if (!WarmSet::of_this_thread().holds(warm_ticket_)) [[unlikely]] enrol_take_lines();
  }
  /// keep_next_take_warm's enrolment, out of line: once per enrolment, not per message.
  [[gnu::noinline]] void enrol_take_lines();
  /// Joins wait set `set`, which polls `polled`: from now on this subscriber keeps `polled` at its
  /// cursor, and its warm lines include the ring entry there (polling reads it). One set at a time.
  void join_wait_set(WaitSetImpl* set, PolledCursor* polled) {
    wait_set_ = set;
    polled_ = polled;
    WarmSet::of_this_thread().release(warm_ticket_);  // enrolled again, with the entry, when next used
    note_cursor_moved();
  }
  /// Leaves the wait set it is in, if any (defined with the wait set).
  void leave_wait_set();
  /// The wait set this subscriber is in, or null.
  WaitSetImpl* wait_set() const noexcept { return wait_set_; }

  /// Whether a ring entry read as `entry` holds the message at `cursor` (or the ring moved past it):
  /// what take() would act on, without taking it.
  static bool entry_holds(std::uint64_t entry, std::uint64_t cursor) noexcept {
    return entry != 0 && (entry >> kSlotIndexBits) >= cursor + 1;
  }
  /// The futex a publisher notifies after publishing, and this subscriber's sleeper bit in it.
  WakeChannel& data_channel() { return segment_->control().data; }
  std::uint32_t sleeper_bit() const { return static_cast<std::uint32_t>(1u << index_); }
  /// Where this subscriber's sleeper bit goes while it sleeps on its wait set's bell (bell.hpp).
  std::atomic<std::uint32_t>& bell_sleepers() { return segment_->control().data_bell_sleepers; }
  /// The bell this subscriber's publishers ring while it sleeps on one (Participant::bell_id).
  std::atomic<std::uint64_t>& bell_id() { return segment_->participant(index_).bell_id; }
  /// What this subscriber's adaptive waiter has learnt of its publisher's rhythm.
  Waiter& waiter() { return waiter_; }
  /// What a wait does about every kHousekeepingNs: evicts dead participants, and checks that the
  /// topic's counters agree with this reader's cursor. Damage that leaves no message at the
  /// cursor would otherwise keep a reader waiting in silence while its publishers report it:
  /// Corrupted then, as they are told, else Ok. Only a wait that lasts reads the counters: no
  /// message's path does.
  [[gnu::cold]] Status look_after_ring();

  Mode mode() const { return static_cast<Mode>(segment_->control().mode.load(std::memory_order_relaxed)); }
  Role role() const { return role_; }
  TopicSegment& segment() { return *segment_; }
  std::uint64_t lost() const { return segment_->participant(index_).lost.load(std::memory_order_relaxed); }
  std::uint64_t received() const { return segment_->participant(index_).messages.load(std::memory_order_relaxed); }

 private:
  /// The lines keep_next_take_warm enrols.
  enum class WarmLine : std::uint32_t {
    Self, SelfTail, Waiter, WaiterTail, Segment, Cursor, RoomChannel, NextEntry, NextPayload
  };

  /// Makes `sample` the message at the cursor in `slot`, of `data` (TopicSegment::payload).
  /// `metadata` is where its publisher wrote the publish times and pid: the ring entry (lockstep)
  /// or the slot (free run, taps).
  template <typename Metadata>
  void fill_at_cursor(Sample& sample, std::uint32_t slot, const std::byte* data, std::uint64_t size,
                      const Metadata& metadata) {
    sample.impl_ = this;
    sample.data_ = data;
    sample.size_ = static_cast<std::size_t>(size);
    sample.sequence_ = cursor_;
    sample.publish_time_ns_ = metadata.publish_mono_ns;
    sample.publish_realtime_ns_ = metadata.publish_real_ns;
    sample.publisher_pid_ = metadata.publisher_pid;
    sample.slot_ = slot;
    sample.lost_before_ = pending_lost_;
    sample.hold_ = 0;
  }

  /// Moves the cursor past `sample`, just taken: publishers see the new cursor, the count grows,
  /// and the adaptive waiter learns when it was published.
  void move_past(Participant& me, const Sample& sample) {
    pending_lost_ = 0;
    cursor_ += 1;
    cursor_entry_ = segment_->log_after(cursor_entry_);
    me.cursor.store(cursor_, std::memory_order_release);
    me.messages.store(me.messages.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    waiter_.record_arrival(sample.publish_time_ns_);
    note_cursor_moved();
  }

  /// Moves the cursor to `sequence`, and the ring entry polling reads with it: the entry is found
  /// once per message, not once per poll (a division by the depth).
  void move_cursor(std::uint64_t sequence) {
    cursor_ = sequence;
    cursor_entry_ = &segment_->log(sequence);
    note_cursor_moved();
  }
  /// Tells the wait set (polled_) and this thread's warm set where the cursor's ring entry is now.
  void note_cursor_moved() {
    if (polled_ == nullptr) return;
    polled_->cursor.store(cursor_, std::memory_order_relaxed);
    polled_->entry.store(&cursor_entry_->seq_slot, std::memory_order_release);
    WarmSet& set = WarmSet::of_this_thread();
    if (set.holds(warm_ticket_)) set.set_line(warm_ticket_, WarmLine::NextEntry, cursor_entry_, Access::Read);
  }

  /// Enrols the payload the next message most likely has: a single publisher loans the slots in
  /// turn (PublisherImpl::claim_free_slot), so it is the slot after `slot`. Only slots of a page
  /// or more: smaller ones share the page of the message just taken, whose translation is warm.
  /// After an idle gap, a large message's page has lost its translation (the TLB and the page
  /// table lines): a prefetch walks it, a prefetch never faults (docs/performance.md).
  void keep_next_payload_warm(std::uint32_t slot) {
    if (segment_->stride() >= kPageBytes) [[unlikely]] enrol_next_payload(slot);  // off the small path
  }
  [[gnu::noinline]] void enrol_next_payload(std::uint32_t slot);

  /// Counts `n` messages lost: in the shared count at once, and in the next sample's lost_before.
  void note_lost(Participant& me, std::uint64_t n) {
    me.lost.fetch_add(n, std::memory_order_relaxed);
    pending_lost_ += n;
  }
  std::uint64_t bit() const { return 1ull << index_; }

  // What taking a message reads and writes here comes first; then the waiter's own hot lines.
  std::shared_ptr<TopicSegment> segment_;
  std::uint32_t index_;
  Role role_;
  std::uint32_t held_ = 0;
  std::uint64_t cursor_;
  LogEntry* cursor_entry_;  ///< the ring entry of the message at the cursor (move_cursor)
  std::uint64_t pending_lost_;  ///< counted, not yet told: goes into the next sample's lost_before
  /// The first sequence this subscriber's floor held from the start. Only a subscriber that began
  /// at the topic's first message has older ones to read, and reads them as a tap does.
  std::uint64_t held_from_;
  std::uint64_t held_seqs_[kMaxHeldPerParticipant] = {};
  static constexpr std::uint32_t kHeldByFloor = 1;  ///< Sample::hold_: kept by the floor, no slot bit
  WarmTicket warm_ticket_;
  WaitSetImpl* wait_set_ = nullptr;  ///< the wait set this subscriber is in (join_wait_set)
  PolledCursor* polled_ = nullptr;   ///< what that set polls, kept at the cursor
  alignas(64) Waiter waiter_;
};

}  // namespace detail
}  // namespace cerulion
