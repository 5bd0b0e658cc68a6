// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/publisher.hpp"

#include <cstring>

#include "bell.hpp"
#include "cerulion/core/names.hpp"
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

namespace {

// A loan's and a publish's errors, out of line (Status says why).
[[gnu::cold, gnu::noinline]] Status too_large(const std::string& topic, std::size_t size, std::uint64_t ceiling) {
  return Status(ErrorCode::PayloadTooLarge,
                "payload of " + std::to_string(size) + " bytes is over topic '" + topic + "' ceiling of " +
                    std::to_string(ceiling) + " bytes",
                Subject::size_over(topic, size, ceiling));
}
[[gnu::cold, gnu::noinline]] Status too_many_loans() {
  return Status(ErrorCode::LoanLimit,
                "a publisher may hold at most " + std::to_string(kMaxHeldPerParticipant) + " loans at once");
}
[[gnu::cold, gnu::noinline]] Status no_free_slot(const std::string& topic) {
  return Status(ErrorCode::OutOfMemory, "topic '" + topic + "' has no free slot", Subject::topic(topic));
}
[[gnu::cold, gnu::noinline]] Status foreign_loan() {
  return Status(ErrorCode::InvalidArgument, "loan belongs to another publisher");
}
[[gnu::cold, gnu::noinline]] Status empty_loan() { return Status(ErrorCode::InvalidArgument, "publishing an empty loan"); }

}  // namespace

CERULION_HOT_PATH void PublisherImpl::enrol_publish_lines() {
  WarmSet& set = WarmSet::of_this_thread();
  set.enroll(warm_ticket_);
  set.set_line(warm_ticket_, WarmLine::Self, this, Access::Read);
  set.set_line(warm_ticket_, WarmLine::Segment, segment_.get(), Access::Read);
  set.set_line(warm_ticket_, WarmLine::SegmentTail, reinterpret_cast<const std::byte*>(segment_.get()) + 64,
               Access::Read);
  set.set_line(warm_ticket_, WarmLine::PublishLine, &segment_->control(), Access::Write);
  set.set_line(warm_ticket_, WarmLine::Cursor, &segment_->participant(index_).cursor, Access::Write);
}

[[gnu::noinline]] CERULION_HOT_PATH bool PublisherImpl::rescan_room(std::uint64_t seq) {
  auto lowest = segment_->min_subscriber_floor();
  cached_min_cursor_ = lowest.value_or(seq);
  // Lockstep never publishes more than depth ahead of a subscriber's floor; being further ahead
  // means the shared counters were damaged, and waiting would wait for ever.
  if (seq > cached_min_cursor_ + segment_->depth()) {
    damaged_ = true;
    return true;
  }
  return seq < cached_min_cursor_ + segment_->depth();
}

[[gnu::noinline]] CERULION_HOT_PATH void PublisherImpl::refresh_realtime_offset(std::uint64_t mono) {
  realtime_offset_ = static_cast<std::int64_t>(realtime_ns()) - static_cast<std::int64_t>(monotonic_ns());
  realtime_refreshed_at_ = mono;
}

CERULION_HOT_PATH Status PublisherImpl::wait_for_room(Timeout timeout) {
  Control& ctl = segment_->control();
  auto ready = [&]() CERULION_HOT_PATH { return has_room(ctl.published.load(std::memory_order_acquire)); };
  Status st = room_waiter_.wait(ready, ctl.room, timeout, [&] { segment_->evict_dead(); });
  if (damaged_) return damage_report();
  if (st.code() == ErrorCode::Timeout) {
    return Status(ErrorCode::Timeout, "timed out waiting for subscribers of '" + segment_->topic() +
                                          "' to take earlier messages (lockstep)",
                  Subject::topic(segment_->topic()));
  }
  return st;
}

CERULION_HOT_PATH Result<Loan> PublisherImpl::loan(std::size_t size, Timeout timeout) {
  start_fetching_publish_lines(hint_);
  if (size > segment_->max_payload()) [[unlikely]] return too_large(segment_->topic(), size, segment_->max_payload());
  if (held_ >= kMaxHeldPerParticipant) [[unlikely]] return too_many_loans();
  if (size > segment_->stride()) [[unlikely]] {
    if (Status st = segment_->use_generation_for(size); !st.ok()) return st;
  }
  if (mode_ == Mode::Lockstep && !room_now()) [[unlikely]] {
    if (Status st = wait_for_room(timeout); !st.ok()) return st;
  }
  auto slot = claim_free_slot();
  if (!slot) {
    // Only dead participants' holdings can exhaust the pool: evict them and try once more.
    segment_->evict_dead(true);
    slot = claim_free_slot();
    if (!slot) return no_free_slot(segment_->topic());
  }
  SlotControl& sc = segment_->slot(*slot);
  if (Status st = grow_slot(*slot, sc, size); !st.ok()) {
    sc.word.fetch_and(~bit());
    return st;
  }
  // Recorded now: a second loan may move this publisher to a wider generation before publishing.
  sc.generation = segment_->generation();
  ++held_;
  Loan loan;
  loan.impl_ = this;
  loan.data_ = segment_->slot_data(*slot);
  if (size > 0) prefetch(loan.data_, Access::Write);
  fetch_ring_lines();
  loan.size_ = size;
  loan.slot_ = *slot;
  return loan;
}

CERULION_HOT_PATH Result<std::uint64_t> PublisherImpl::publish(Loan& loan, Timeout timeout) {
  if (loan.impl_ != this) [[unlikely]] return foreign_loan();
  start_fetching_publish_lines(loan.slot_);
  Control& ctl = segment_->control();
  SlotControl& sc = segment_->slot(loan.slot_);
  const std::uint64_t now_mono = monotonic_ns();
  sc.size = loan.size_;
  sc.publish_mono_ns = now_mono;
  sc.publish_real_ns = realtime_from_monotonic(now_mono);
  sc.publisher_pid = segment_->own_pid();
  for (;;) {
    if (mode_ == Mode::Lockstep && !room_now()) [[unlikely]] {
      if (Status st = wait_for_room(timeout); !st.ok()) return st;
    }
    // The topic's only publisher orders its publishes by itself (sole_publisher.cpp).
    const bool sole = segment_->enter_sole_publish(index_);
    if (!sole) [[unlikely]] {
      if (Status st = segment_->lock(); !st.ok()) return st;
    }
    const std::uint64_t seq = ctl.published.load(std::memory_order_relaxed);
    if (mode_ == Mode::Lockstep && (!has_room(seq) || damaged_)) [[unlikely]] {
      sole ? segment_->leave_sole_publish() : segment_->unlock();
      if (damaged_) return damage_report();
      continue;  // another publisher took the room first
    }
    LogEntry& entry = segment_->log(seq);
    last_entry_ = &entry;
    const std::uint64_t old = entry.seq_slot.load(std::memory_order_relaxed);
    // The loan's holder bit becomes the ring window's hold.
    sc.word.store((tag_of_sequence(seq) << kTagShift) | kWindowBit, std::memory_order_release);
    entry.size = sc.size;
    entry.publish_mono_ns = sc.publish_mono_ns;
    entry.publish_real_ns = sc.publish_real_ns;
    entry.publisher_pid = sc.publisher_pid;
    entry.mode = static_cast<std::uint32_t>(mode_);
    entry.generation = sc.generation;
    entry.seq_slot.store(make_log_entry(seq, loan.slot_), std::memory_order_release);
    ctl.published.store(seq + 1, std::memory_order_release);
    if (old != 0) {
      const auto old_slot = static_cast<std::uint32_t>(old & kSlotIndexMask);
      if (old_slot < segment_->slot_count()) segment_->slot(old_slot).word.fetch_and(~kWindowBit);
    }
    if (sole) [[likely]] {
      segment_->leave_sole_publish();
    } else {
      segment_->offer_sole_publishing_locked(index_);
      segment_->unlock();
    }
    notify_readers(ctl);
    auto& messages = segment_->participant(index_).messages;  // only we write it, beside our cursor
    messages.store(messages.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    --held_;
    loan.impl_ = nullptr;
    keep_next_publish_warm();
    return seq;
  }
}

}  // namespace detail

CERULION_HOT_PATH Loan& Loan::operator=(Loan&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->drop(*this);
    impl_ = other.impl_;
    data_ = other.data_;
    size_ = other.size_;
    slot_ = other.slot_;
    other.impl_ = nullptr;
  }
  return *this;
}

void Loan::give_back() noexcept { impl_->drop(*this); }

Result<Publisher> Publisher::create(std::string_view topic, PublisherOptions options) {
  auto name = normalize_topic_name(topic);
  if (!name) return name.status();
  if (Status st = validate_domain(options.topic.domain); !st.ok()) return st;
  if (options.topic.type) {
    if (Status st = check_topic_type(*options.topic.type); !st.ok()) return st;
  }
  const detail::TopicSegment::OpenRequest request{*name, options.topic, detail::TopicSegment::Access::Publish};
  auto joined = detail::TopicSegment::join(request, Role::Publisher, options.topic.mode, options.topic.depth);
  if (!joined) return joined.status();
  return Publisher(std::make_unique<detail::PublisherImpl>(std::move(joined->segment), joined->index, options));
}

Publisher::Publisher(std::unique_ptr<detail::PublisherImpl> impl) : impl_(std::move(impl)) {}
Publisher::Publisher(Publisher&&) noexcept = default;
Publisher& Publisher::operator=(Publisher&&) noexcept = default;
Publisher::~Publisher() = default;

CERULION_HOT_PATH Result<Loan> Publisher::loan(std::size_t size, Timeout timeout) { return impl_->loan(size, timeout); }

CERULION_HOT_PATH Result<std::uint64_t> Publisher::publish(Loan&& loan, Timeout timeout) {
  if (!loan.valid()) [[unlikely]] return detail::empty_loan();
  auto result = impl_->publish(loan, timeout);
  if (!result.ok()) impl_->drop(loan);  // nothing half-published: the slot goes back
  return result;
}

Result<std::uint64_t> Publisher::publish_copy(std::span<const std::byte> bytes, Timeout timeout) {
  auto loan = impl_->loan(bytes.size(), timeout);
  if (!loan) return loan.status();
  if (!bytes.empty()) std::memcpy(loan->data().data(), bytes.data(), bytes.size());
  return publish(std::move(*loan), timeout);
}

Status Publisher::wait_for_subscribers(std::uint32_t count, Timeout timeout) {
  return impl_->wait_for_subscribers(count, timeout);
}

std::uint32_t Publisher::subscriber_count() const noexcept { return impl_->segment().count(Role::Subscriber); }
const std::string& Publisher::topic() const noexcept { return impl_->segment().topic(); }
Mode Publisher::mode() const noexcept { return impl_->mode(); }
std::uint32_t Publisher::depth() const noexcept { return impl_->segment().depth(); }
std::uint64_t Publisher::max_payload() const noexcept { return impl_->segment().max_payload(); }

Result<TopicType> Publisher::type() const {
  auto declared = impl_->segment().declared_type();
  if (!declared) return declared.status();
  return declared->value_or(TopicType{});
}

}  // namespace cerulion
