// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/subscriber.hpp"

#include <algorithm>
#include <unistd.h>

#include "cerulion/core/names.hpp"
#include "subscriber_impl.hpp"

namespace cerulion {
namespace detail {

namespace {

// The take's errors, out of line (Status says why).
[[gnu::cold, gnu::noinline]] Status too_many_held() {
  return Status(ErrorCode::LoanLimit,
                "a subscriber may hold at most " + std::to_string(kMaxHeldPerParticipant) + " samples at once");
}
[[gnu::cold, gnu::noinline]] Status ring_out_of_order(const std::string& topic, std::uint64_t have,
                                                      std::uint64_t cursor) {
  return Status(ErrorCode::Corrupted, "topic '" + topic + "' is damaged: the ring holds message " +
                                          std::to_string(have - 1) + " where message " + std::to_string(cursor) +
                                          " belongs, which lockstep never allows",
                Subject::topic(topic));
}
[[gnu::cold, gnu::noinline]] Status slot_out_of_range(const std::string& topic, std::uint32_t slot,
                                                      std::uint32_t count) {
  return Status(ErrorCode::Corrupted, "topic '" + topic + "': ring entry names slot " + std::to_string(slot) +
                                          " of " + std::to_string(count),
                Subject::topic(topic));
}

}  // namespace

CERULION_HOT_PATH SubscriberImpl::Take SubscriberImpl::take(Sample& out, Status& failure) {
  if (held_ >= kMaxHeldPerParticipant) [[unlikely]] {
    failure = too_many_held();
    return Take::Failed;
  }
  for (;;) {
    const LogEntry& log_entry = *cursor_entry_;
    const std::uint64_t entry = log_entry.seq_slot.load(std::memory_order_acquire);
    const std::uint64_t want = cursor_ + 1;
    const std::uint64_t have = entry >> kSlotIndexBits;
    if (entry == 0 || have < want) return Take::None;
    Participant& me = segment_->participant(index_);
    if (have > want) [[unlikely]] {
      if (role_ == Role::Subscriber && cursor_ >= held_from_ && mode() == Mode::Lockstep) {
        failure = ring_out_of_order(segment_->topic(), have, cursor_);
        return Take::Failed;
      }
      // Overwritten before we got to it (free run, or a tap): skip to the oldest still kept.
      const std::uint64_t published = segment_->control().published.load(std::memory_order_acquire);
      const std::uint64_t depth = segment_->current_depth();
      const std::uint64_t oldest = published > depth ? published - depth : 0;
      const std::uint64_t next = std::max(oldest, cursor_ + 1);
      note_lost(me, next - cursor_);
      move_cursor(next);
      continue;
    }
    const auto slot = static_cast<std::uint32_t>(entry & kSlotIndexMask);
    if (slot >= segment_->slot_count()) [[unlikely]] {
      failure = slot_out_of_range(segment_->topic(), slot, segment_->slot_count());
      return Take::Failed;
    }
    // The entry says how it was published: no need to read the topic's mode line as well.
    if (role_ == Role::Subscriber && log_entry.mode == static_cast<std::uint32_t>(Mode::Lockstep) &&
        cursor_ >= held_from_) [[likely]] {
      return take_lockstep(me, log_entry, slot, out, failure);
    }
    SlotControl& sc = segment_->slot(slot);
    // Fetch the payload's head alongside the slot word: two transfers in flight, not in a row.
    prefetch(segment_->slot_data(slot), Access::Read);
    const std::uint64_t tag = tag_of_sequence(cursor_);
    std::uint64_t word = sc.word.load(std::memory_order_acquire);
    bool held = false;
    while (tag_of_word(word) == tag && (word & kWindowBit) != 0) {
      if (sc.word.compare_exchange_weak(word, word | bit(), std::memory_order_acq_rel)) {
        held = true;
        break;
      }
    }
    if (!held) {
      // Reused between reading the ring and taking hold: that message is gone.
      note_lost(me, 1);
      move_cursor(cursor_ + 1);
      continue;
    }
    const std::uint64_t size = sc.size;
    const std::byte* data = segment_->payload(sc.generation, slot, size);
    if (data == nullptr) [[unlikely]] {
      sc.word.fetch_and(~bit());
      failure = segment_->payload_failure(sc.generation, size);
      return Take::Failed;
    }
    keep_next_payload_warm(slot);
    fill_at_cursor(out, slot, data, size, sc);
    ++held_;
    move_past(me, out);
    // Free run: the ring never waits for us. Lockstep (before held_from_): never below what it held.
    me.floor.store(std::max(cursor_, held_from_), std::memory_order_release);
    return Take::Taken;
  }
}

CERULION_HOT_PATH SubscriberImpl::Take SubscriberImpl::take_lockstep(Participant& me, const LogEntry& entry,
                                                                     std::uint32_t slot, Sample& out,
                                                                     Status& failure) {
  // The payload's head most likely comes next, and from the publisher's cache: ask for it now.
  const std::byte* data = segment_->payload(entry.generation, slot, entry.size);
  if (data == nullptr) [[unlikely]] {
    failure = segment_->payload_failure(entry.generation, entry.size);
    return Take::Failed;
  }
  prefetch(data, Access::Read);
  keep_next_payload_warm(slot);
  fill_at_cursor(out, slot, data, entry.size, entry);
  out.hold_ = kHeldByFloor;
  held_seqs_[held_++] = cursor_;
  move_past(me, out);
  return Take::Taken;
}

CERULION_HOT_PATH void SubscriberImpl::enrol_take_lines() {
  WarmSet& set = WarmSet::of_this_thread();
  set.enroll(warm_ticket_);
  const auto* self = reinterpret_cast<const std::byte*>(this);
  const auto* waiter = reinterpret_cast<const std::byte*>(&waiter_);
  set.set_line(warm_ticket_, WarmLine::Self, self, Access::Read);
  set.set_line(warm_ticket_, WarmLine::SelfTail, self + 64, Access::Read);
  set.set_line(warm_ticket_, WarmLine::Waiter, waiter, Access::Read);
  set.set_line(warm_ticket_, WarmLine::WaiterTail, waiter + 64, Access::Read);
  set.set_line(warm_ticket_, WarmLine::Segment, segment_.get(), Access::Read);
  set.set_line(warm_ticket_, WarmLine::Cursor, &segment_->participant(index_).cursor, Access::Write);
  set.set_line(warm_ticket_, WarmLine::RoomChannel, &segment_->control().room, Access::Read);
  if (polled_ != nullptr) set.set_line(warm_ticket_, WarmLine::NextEntry, cursor_entry_, Access::Read);
}

CERULION_HOT_PATH void SubscriberImpl::enrol_next_payload(std::uint32_t slot) {
  WarmSet& set = WarmSet::of_this_thread();
  if (!set.holds(warm_ticket_)) return;
  const std::uint32_t next = slot + 1 < segment_->hot_slots() ? slot + 1 : 0;
  set.set_line(warm_ticket_, WarmLine::NextPayload, segment_->slot_data(next), Access::Read);
}

CERULION_HOT_PATH Result<std::optional<Sample>> SubscriberImpl::try_take() {
  // The take fills the returned Sample where it stands: nothing is moved on the way out.
  Result<std::optional<Sample>> out(std::in_place, std::in_place);
  Status failure;
  const Take taken = take(**out, failure);
  if (taken == Take::None) out->reset();
  if (taken == Take::Failed) [[unlikely]] out.fail(std::move(failure));
  return out;
}

CERULION_HOT_PATH Result<Sample> SubscriberImpl::receive(Timeout timeout) {
  keep_next_take_warm();
  // The take fills the returned Sample where it stands, and every path returns `out`: nothing is
  // moved on the way out.
  Result<Sample> out(std::in_place);
  Status failure;
  Take taken = take(*out, failure);
  if (taken == Take::None) taken = wait_and_take(*out, failure, timeout);
  if (taken == Take::Failed) [[unlikely]] out.fail(std::move(failure));
  return out;
}

CERULION_HOT_PATH SubscriberImpl::Take SubscriberImpl::wait_and_take(Sample& out, Status& failure, Timeout timeout) {
  Take taken = Take::None;
  // Housekeeping that finds the ring damaged ends the wait as a failed take would.
  auto ready = [&]() CERULION_HOT_PATH { return taken == Take::Failed || (taken = take(out, failure)) != Take::None; };
  auto housekeeping = [&] {
    if (Status damage = look_after_ring(); !damage.ok()) [[unlikely]] {
      failure = std::move(damage);
      taken = Take::Failed;
    }
  };
  Status st = waiter_.wait(ready, segment_->control().data, timeout, housekeeping);
  if (taken != Take::None) return taken;
  failure = std::move(st);
  return Take::Failed;
}

Status SubscriberImpl::look_after_ring() {
  segment_->evict_dead();
  const std::uint64_t published = segment_->control().published.load(std::memory_order_acquire);
  // Read after `published`: a publisher writes a message's ring entry before it counts the
  // message, so every message counted has its entry, or a newer one, in the ring.
  const std::uint64_t entry = cursor_entry_->seq_slot.load(std::memory_order_acquire);
  if (published > cursor_ && !entry_holds(entry, cursor_)) {
    return segment_->damage("its counter says " + std::to_string(published) + " messages were published, but the ring " +
                            "lacks message " + std::to_string(cursor_));
  }
  // Publishes are one at a time, so a reader is at most the one message in flight ahead of the
  // count (its publisher may be between the entry and the count, or have died there).
  if (cursor_ > published + 1) {
    return segment_->damage("a reader is at message " + std::to_string(cursor_) + " but only " +
                            std::to_string(published) + " were published");
  }
  return Status::success();
}

CERULION_HOT_PATH void SubscriberImpl::release(Sample& sample) {
  if (sample.impl_ != this) return;
  sample.impl_ = nullptr;
  if (sample.hold_ != kHeldByFloor) {
    segment_->slot(sample.slot_).word.fetch_and(~bit(), std::memory_order_acq_rel);
    --held_;
    return;
  }
  // Forget this sequence, then move the floor up to the oldest one still held (or the cursor).
  for (std::uint32_t i = 0; i < held_; ++i) {
    if (held_seqs_[i] == sample.sequence_) {
      held_seqs_[i] = held_seqs_[--held_];
      break;
    }
  }
  std::uint64_t floor = cursor_;
  for (std::uint32_t i = 0; i < held_; ++i) floor = std::min(floor, held_seqs_[i]);
  segment_->participant(index_).floor.store(floor, std::memory_order_release);
  segment_->control().room.notify();
}

}  // namespace detail

CERULION_HOT_PATH Sample& Sample::operator=(Sample&& other) noexcept {
  if (this != &other) {
    release();
    impl_ = other.impl_;
    data_ = other.data_;
    size_ = other.size_;
    sequence_ = other.sequence_;
    publish_time_ns_ = other.publish_time_ns_;
    publish_realtime_ns_ = other.publish_realtime_ns_;
    lost_before_ = other.lost_before_;
    publisher_pid_ = other.publisher_pid_;
    slot_ = other.slot_;
    hold_ = other.hold_;
    other.impl_ = nullptr;
  }
  return *this;
}

CERULION_HOT_PATH void Sample::give_back() noexcept { impl_->release(*this); }

Result<Subscriber> Subscriber::create(std::string_view topic, SubscriberOptions options) {
  auto name = normalize_topic_name(topic);
  if (!name) return name.status();
  if (Status st = validate_domain(options.topic.domain); !st.ok()) return st;
  if (options.role == Role::Publisher) {
    return Status(ErrorCode::InvalidArgument, "a subscriber's role is subscriber or tap", Subject::option("role"));
  }
  if (options.topic.type) {
    if (Status st = check_topic_type(*options.topic.type); !st.ok()) return st;
  }
  const detail::TopicSegment::OpenRequest request{*name, options.topic, detail::TopicSegment::Access::Subscribe};
  auto joined = detail::TopicSegment::join(request, options.role, std::nullopt, std::nullopt, options.start);
  if (!joined) return joined.status();
  return Subscriber(std::make_unique<detail::SubscriberImpl>(std::move(joined->segment), joined->index, options));
}

Subscriber::Subscriber(std::unique_ptr<detail::SubscriberImpl> impl) : impl_(std::move(impl)) {}
Subscriber::Subscriber(Subscriber&&) noexcept = default;
Subscriber& Subscriber::operator=(Subscriber&&) noexcept = default;
Subscriber::~Subscriber() = default;

CERULION_HOT_PATH Result<Sample> Subscriber::receive(Timeout timeout) { return impl_->receive(timeout); }
CERULION_HOT_PATH Result<std::optional<Sample>> Subscriber::try_receive() {
  impl_->keep_next_take_warm();
  return impl_->try_take();
}
std::uint64_t Subscriber::lost() const noexcept { return impl_->lost(); }
std::uint64_t Subscriber::received() const noexcept { return impl_->received(); }
std::uint64_t Subscriber::published() const noexcept {
  return impl_->segment().control().published.load(std::memory_order_acquire);
}
std::uint32_t Subscriber::publisher_count() const noexcept { return impl_->segment().count(Role::Publisher); }
std::uint64_t Subscriber::created_realtime_ns() const noexcept { return impl_->segment().config().created_realtime_ns; }
const std::string& Subscriber::topic() const noexcept { return impl_->segment().topic(); }
Mode Subscriber::mode() const noexcept { return impl_->mode(); }
Role Subscriber::role() const noexcept { return impl_->role(); }

Result<TopicType> Subscriber::type() const {
  auto declared = impl_->segment().declared_type();
  if (!declared) return declared.status();
  return declared->value_or(TopicType{});
}

}  // namespace cerulion
