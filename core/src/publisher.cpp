// SPDX-License-Identifier: Apache-2.0
// A loan and a publish (on PublisherImpl, publisher_impl.hpp), and the Publisher and Loan that
// users hold.
#include "cerulion/core/publisher.hpp"

#include <cstring>

#include "cerulion/core/names.hpp"
#include "publisher_impl.hpp"

namespace cerulion {
namespace detail {

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
