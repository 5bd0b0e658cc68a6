// SPDX-License-Identifier: Apache-2.0
// The topic lock: a plain word in the segment, taken over from a holder that died (the ring is
// then repaired, since the holder may have stopped half way through a publish). Taking it also
// ends the single-publisher fast path (sole_publisher.cpp).

#include "cerulion/core/warm.hpp"

#include <algorithm>
#include <string>

#include "cerulion/core/detail/liveness.hpp"
#include "holder_watch.hpp"
#include "segment.hpp"

namespace cerulion::detail {

namespace {

constexpr std::uint32_t kLockWaiters = 1u << 31;
constexpr std::uint32_t kLockOwnerMask = kLockWaiters - 1;

}  // namespace

CERULION_HOT_PATH Status TopicSegment::lock() {
  Status st = take_lock_word();
  if (st.ok() && control_->sole_publisher.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    st = end_sole_publishing_locked();
    if (!st.ok()) unlock();
  }
  return st;
}

CERULION_HOT_PATH Status TopicSegment::take_lock_word() {
  auto& word = control_->lock_word;
  const std::uint32_t me = own_pid_;
  std::uint32_t expected = 0;
  if (word.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
    note_lock_owner();
    return Status::success();
  }
  // Contended: spin a little (holders keep it for microseconds), then sleep on the word, making
  // sure now and then (HolderWatch) that the holder is still alive.
  HolderWatch watch;
  for (;;) {
    // Acquire: a holder's identity (start time, namespace) read below is then at least as new as
    // the lock word's value.
    std::uint32_t current = word.load(std::memory_order_acquire);
    if ((current & kLockOwnerMask) == 0) {
      // Free (perhaps with the waiters bit left set): keep the bit so our unlock wakes the rest.
      if (word.compare_exchange_weak(current, me | (current & kLockWaiters), std::memory_order_acquire)) {
        note_lock_owner();
        return Status::success();
      }
      continue;
    }
    if (watch.check_due()) {
      const auto owner = static_cast<pid_t>(current & kLockOwnerMask);
      if (!process_alive(owner, control_->lock_owner_start.load(std::memory_order_relaxed),
                         control_->lock_owner_ns)) {
        // Its holder died mid-publish or mid-eviction: take the lock over, repair the ring.
        if (word.compare_exchange_strong(current, me | (current & kLockWaiters), std::memory_order_acquire)) {
          note_lock_owner();
          repair_ring_locked();
          return Status::success();
        }
        continue;
      }
      if (watch.stuck()) {
        return Status(ErrorCode::Corrupted, "topic '" + topic_ + "': its lock has been held by process " +
                                                std::to_string(owner) + " for over 2 s; if it is stuck, the topic must be removed by force",
                      Subject::topic(topic_));
      }
    }
    if (!watch.spun()) continue;
    if ((current & kLockWaiters) == 0 &&
        !word.compare_exchange_weak(current, current | kLockWaiters, std::memory_order_relaxed)) {
      continue;
    }
    futex_wait(&word, current | kLockWaiters, 1'000'000);
  }
}

void TopicSegment::note_lock_owner() {
  control_->lock_owner_start.store(own_start_time_, std::memory_order_relaxed);
  control_->lock_owner_ns = own_pid_namespace_;
}

CERULION_HOT_PATH void TopicSegment::unlock() {
  control_->lock_owner_start.store(0, std::memory_order_relaxed);
  control_->lock_owner_ns = 0;
  if (control_->lock_word.exchange(0, std::memory_order_release) & kLockWaiters) {
    futex_wake_all(&control_->lock_word);
  }
}

void TopicSegment::repair_ring_locked() {
  // Publish order is: slot tagged + window bit, log entry, `published`. A holder that died may have
  // stopped between any two of these.
  auto& published = control_->published;
  std::uint64_t next = published.load();
  std::uint64_t entry = log(next).seq_slot.load();
  if (entry != 0 && (entry >> kSlotIndexBits) == next + 1) published.store(next + 1);
  next = published.load();
  for (std::uint32_t k = 0; k < slot_count_; ++k) {
    std::uint64_t word = slots_[k].word.load();
    if ((word & kWindowBit) == 0) continue;
    bool referenced = false;
    for (std::uint32_t i = 0; i < ring_ && !referenced; ++i) {
      std::uint64_t e = log_[i].seq_slot.load();
      if (e == 0 || (e & kSlotIndexMask) != k) continue;
      std::uint64_t seq = (e >> kSlotIndexBits) - 1;
      referenced = seq < next && seq + ring_ >= next && tag_of_sequence(seq) == tag_of_word(word);
    }
    if (!referenced) slots_[k].word.fetch_and(~kWindowBit);
  }
}

std::string TopicSegment::inconsistency() const {
  // Readers first, then `published`: cursors only grow, so one read before a later `published` is
  // never ahead of it unless something wrote garbage.
  std::uint64_t furthest_reader = 0;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    const Participant& p = participants_[i];
    if (p.state.load(std::memory_order_acquire) != kActive || p.role == static_cast<std::uint32_t>(Role::Publisher)) {
      continue;
    }
    furthest_reader = std::max(furthest_reader, p.cursor.load(std::memory_order_acquire));
  }
  const std::uint64_t published = control_->published.load(std::memory_order_acquire);
  const std::string what = "topic '" + topic_ + "' is damaged: ";
  if (furthest_reader > published) {
    return what + "a reader is at message " + std::to_string(furthest_reader) + " but only " +
           std::to_string(published) + " were published";
  }
  if (published == 0) return {};
  // The entry of the newest message was written before `published` moved past it; later publishes
  // may have overwritten it since, but only with newer messages.
  const std::uint64_t entry = log_[(published - 1) % ring_].seq_slot.load(std::memory_order_acquire);
  const std::uint64_t newest = entry >> kSlotIndexBits;  // sequence + 1, 0 if never written
  if (newest < published || (newest - published) % ring_ != 0) {
    return what + "its counter says " + std::to_string(published) + " messages were published, but the ring's " +
           "entry for the newest " + (newest == 0 ? std::string("was never written") : "holds message " + std::to_string(newest - 1));
  }
  return {};
}

Status TopicSegment::damage(const std::string& otherwise) const {
  std::string why = inconsistency();
  if (why.empty()) why = "topic '" + topic_ + "' is damaged: " + otherwise;
  return Status(ErrorCode::Corrupted, why, Subject::topic(topic_));
}

}  // namespace cerulion::detail
