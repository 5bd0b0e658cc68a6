#include "cerulion/core/subscriber.hpp"

#include <algorithm>
#include <unistd.h>

#include "cerulion/core/names.hpp"
#include "segment.hpp"
#include "waiter.hpp"
#include "warm.hpp"

namespace cerulion {
namespace detail {

class alignas(64) SubscriberImpl {
 public:
  SubscriberImpl(std::shared_ptr<TopicSegment> segment, std::uint32_t index, SubscriberOptions options)
      : segment_(std::move(segment)),
        index_(index),
        role_(options.role),
        cursor_(segment_->participant(index).cursor.load()),
        pending_lost_(segment_->participant(index).lost.load()),
        held_from_(segment_->participant(index).floor.load()),
        waiter_(options.wait, static_cast<std::uint32_t>(1u << index), options.role == Role::Tap, segment_->depth()) {}

  ~SubscriberImpl() {
    WarmSet::of_this_thread().release(warm_ticket_);
    segment_->detach(index_);
  }

  /// One attempt to take the message at the cursor: a Sample, nullopt if none is ready.
  Result<std::optional<Sample>> try_take();

  /// Lockstep: the publisher never lets the ring overtake this subscriber's floor (its oldest
  /// held sample), so the slot needs no hold of its own and the entry carries the metadata: one
  /// cache line to read, none to write in shared state.
  Result<std::optional<Sample>> take_lockstep(Participant& me, const LogEntry& entry, std::uint32_t slot);

  Result<Sample> receive(Timeout timeout);

  void release(Sample& sample);

  /// Enrols what taking the next message touches in this thread's warm set (warm.hpp), which the
  /// wait loops prefetch while they poll. The ring entry itself is left out: polling reads it.
  void keep_next_take_warm() {
    WarmSet& set = WarmSet::of_this_thread();
    if (set.holds(warm_ticket_)) return;
    const auto* self = reinterpret_cast<const std::byte*>(this);
    const auto* waiter = reinterpret_cast<const std::byte*>(&waiter_);
    set.enroll(warm_ticket_, {{self, false},
                              {self + 64, false},
                              {waiter, false},
                              {waiter + 64, false},
                              {segment_.get(), false},
                              {&segment_->participant(index_).cursor, true},
                              {&segment_->control().room, false}});
  }

  Mode mode() const { return static_cast<Mode>(segment_->control().mode.load(std::memory_order_relaxed)); }
  Role role() const { return role_; }
  TopicSegment& segment() { return *segment_; }
  std::uint64_t lost() const { return segment_->participant(index_).lost.load(std::memory_order_relaxed); }
  std::uint64_t received() const { return segment_->participant(index_).messages.load(std::memory_order_relaxed); }

 private:
  /// The sample for the message at the cursor in `slot`. `metadata` is where its publisher wrote
  /// the publish times and pid: the ring entry (lockstep) or the slot (free run, taps).
  template <typename Metadata>
  Sample sample_at_cursor(std::uint32_t slot, std::uint64_t size, const Metadata& metadata) {
    Sample sample;
    sample.impl_ = this;
    sample.data_ = segment_->slot_data(slot);
    sample.size_ = static_cast<std::size_t>(size);
    sample.sequence_ = cursor_;
    sample.publish_time_ns_ = metadata.publish_mono_ns;
    sample.publish_realtime_ns_ = metadata.publish_real_ns;
    sample.publisher_pid_ = metadata.publisher_pid;
    sample.slot_ = slot;
    sample.lost_before_ = pending_lost_;
    return sample;
  }

  /// Moves the cursor past `sample`, just taken: publishers see the new cursor, the count grows,
  /// and the adaptive waiter learns when it was published.
  void move_past(Participant& me, const Sample& sample) {
    pending_lost_ = 0;
    ++cursor_;
    me.cursor.store(cursor_, std::memory_order_release);
    me.messages.store(me.messages.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    waiter_.record_arrival(sample.publish_time_ns_);
  }

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
  std::uint64_t pending_lost_;  ///< counted, not yet told: goes into the next sample's lost_before
  /// The first sequence this subscriber's floor held from the start. Only a subscriber that began
  /// at the topic's first message has older ones to read, and reads them as a tap does.
  std::uint64_t held_from_;
  std::uint64_t held_seqs_[kMaxHeldPerParticipant] = {};
  static constexpr std::uint32_t kHeldByFloor = 1;  ///< Sample::hold_: kept by the floor, no slot bit
  WarmTicket warm_ticket_;
  alignas(64) Waiter waiter_;
};

CERULION_HOT_PATH Result<std::optional<Sample>> SubscriberImpl::try_take() {
  if (held_ >= kMaxHeldPerParticipant) {
    return Status(ErrorCode::LoanLimit, "a subscriber may hold at most " +
                                            std::to_string(kMaxHeldPerParticipant) + " samples at once");
  }
  Participant& me = segment_->participant(index_);
  for (;;) {
    const LogEntry& log_entry = segment_->log(cursor_);
    const std::uint64_t entry = log_entry.seq_slot.load(std::memory_order_acquire);
    const std::uint64_t want = cursor_ + 1;
    const std::uint64_t have = entry >> kSlotIndexBits;
    if (entry == 0 || have < want) return std::optional<Sample>{};
    if (have > want) {
      if (role_ == Role::Subscriber && cursor_ >= held_from_ && mode() == Mode::Lockstep) {
        return Status(ErrorCode::Corrupted, "topic '" + segment_->topic() + "' is damaged: the ring holds message " +
                                                std::to_string(have - 1) + " where message " + std::to_string(cursor_) +
                                                " belongs, which lockstep never allows");
      }
      // Overwritten before we got to it (free run, or a tap): skip to the oldest still kept.
      const std::uint64_t published = segment_->control().published.load(std::memory_order_acquire);
      const std::uint64_t oldest = published > segment_->depth() ? published - segment_->depth() : 0;
      const std::uint64_t next = std::max(oldest, cursor_ + 1);
      note_lost(me, next - cursor_);
      cursor_ = next;
      continue;
    }
    const auto slot = static_cast<std::uint32_t>(entry & kSlotIndexMask);
    if (slot >= segment_->slot_count()) {
      return Status(ErrorCode::Corrupted, "topic '" + segment_->topic() + "': ring entry names slot " +
                                              std::to_string(slot) + " of " +
                                              std::to_string(segment_->slot_count()));
    }
    // The entry says how it was published: no need to read the topic's mode line as well.
    if (role_ == Role::Subscriber && log_entry.mode == static_cast<std::uint32_t>(Mode::Lockstep) &&
        cursor_ >= held_from_) {
      return take_lockstep(me, log_entry, slot);
    }
    SlotControl& sc = segment_->slot(slot);
    // Fetch the payload's head alongside the slot word: two transfers in flight, not in a row.
    __builtin_prefetch(segment_->slot_data(slot), 0, 3);
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
      ++cursor_;
      continue;
    }
    const std::uint64_t size = sc.size;
    if (size > segment_->max_payload()) {
      sc.word.fetch_and(~bit());
      return Status(ErrorCode::Corrupted, "topic '" + segment_->topic() + "': slot size over the ceiling");
    }
    Sample sample = sample_at_cursor(slot, size, sc);
    ++held_;
    move_past(me, sample);
    // Free run: the ring never waits for us. Lockstep (before held_from_): never below what it held.
    me.floor.store(std::max(cursor_, held_from_), std::memory_order_release);
    return std::optional<Sample>(std::move(sample));
  }
}

CERULION_HOT_PATH Result<std::optional<Sample>> SubscriberImpl::take_lockstep(Participant& me, const LogEntry& entry, std::uint32_t slot) {
  // The payload's head most likely comes next, and from the publisher's cache: ask for it now.
  __builtin_prefetch(segment_->slot_data(slot), 0, 3);
  if (entry.size > segment_->max_payload()) {
    return Status(ErrorCode::Corrupted, "topic '" + segment_->topic() + "': message size over the ceiling");
  }
  Sample sample = sample_at_cursor(slot, entry.size, entry);
  sample.hold_ = kHeldByFloor;
  held_seqs_[held_++] = cursor_;
  move_past(me, sample);
  return std::optional<Sample>(std::move(sample));
}

CERULION_HOT_PATH Result<Sample> SubscriberImpl::receive(Timeout timeout) {
  keep_next_take_warm();
  std::optional<Sample> got;
  Status failure;
  auto ready = [&]() CERULION_HOT_PATH {
    auto r = try_take();
    if (!r.ok()) {
      failure = r.status();
      return true;
    }
    if (r->has_value()) {
      got = std::move(**r);
      return true;
    }
    return false;
  };
  Status st = waiter_.wait(ready, segment_->control().data, timeout, [&] { segment_->evict_dead(); });
  if (!failure.ok()) return failure;
  if (!st.ok()) return st;
  return std::move(*got);
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

CERULION_HOT_PATH Sample::Sample(Sample&& other) noexcept { *this = std::move(other); }

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

CERULION_HOT_PATH Sample::~Sample() { release(); }

CERULION_HOT_PATH void Sample::release() noexcept {
  if (impl_) impl_->release(*this);
}

Result<Subscriber> Subscriber::create(std::string_view topic, SubscriberOptions options) {
  auto name = normalize_topic_name(topic);
  if (!name) return name.status();
  if (Status st = validate_domain(options.topic.domain); !st.ok()) return st;
  if (options.role == Role::Publisher) return Status(ErrorCode::InvalidArgument, "a subscriber's role is subscriber or tap");
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
std::uint32_t Subscriber::publisher_count() const noexcept { return impl_->segment().count(Role::Publisher); }
const std::string& Subscriber::topic() const noexcept { return impl_->segment().topic(); }
Mode Subscriber::mode() const noexcept { return impl_->mode(); }
Role Subscriber::role() const noexcept { return impl_->role(); }

}  // namespace cerulion
