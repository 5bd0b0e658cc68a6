// SPDX-License-Identifier: Apache-2.0
#pragma once
// Receiving: a read-only, zero-copy view of a published slot, held until the Sample is dropped.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cerulion/core/message.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion {

namespace detail {
class SubscriberImpl;
class WaitSetImpl;
}

/// Options of a subscriber or tap.
struct SubscriberOptions {
  /// Subscriber (counts for lockstep) or Tap (passive: never holds a publisher back). Unless its
  /// wait strategy is spin, a tap never sleeps on the topic's futex either, so publishers never pay
  /// a wake-up system call for it: it checks back every quarter of the time the ring takes to fill
  /// (bounded above and below, and fixed until it has learnt the rate).
  Role role = Role::Subscriber;
  /// An adaptive tap only: once it has learnt the rate, it also polls across the window where the
  /// next message is due, so a periodic topic's message is taken as it is published rather than
  /// up to a check-back interval later. Each such tap costs up to the adaptive strategy's CPU
  /// budget (wait.cpu_budget): a live view wants it, a recorder does not.
  bool poll_when_due = false;
  /// Where it starts reading: the next message published (default) or the topic's first.
  StartAt start = StartAt::Next;
  /// Used only when this subscriber creates the topic (it waits for a publisher).
  TopicOptions topic;
  WaitOptions wait;
};

/// A received message: read-only view of the publisher's bytes, valid while the Sample lives.
/// Move-only; dropping it releases the slot (in lockstep, the publisher may then reuse it).
class Sample {
 public:
  Sample() = default;
  // Inline: every receive moves its sample out through a Result, and a call per move would be
  // most of the moving.
  Sample(Sample&& other) noexcept
      : impl_(other.impl_),
        data_(other.data_),
        size_(other.size_),
        sequence_(other.sequence_),
        publish_time_ns_(other.publish_time_ns_),
        publish_realtime_ns_(other.publish_realtime_ns_),
        lost_before_(other.lost_before_),
        publisher_pid_(other.publisher_pid_),
        slot_(other.slot_),
        hold_(other.hold_) {
    other.impl_ = nullptr;
  }
  Sample& operator=(Sample&& other) noexcept;
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  ~Sample() { release(); }

  std::span<const std::byte> data() const noexcept { return {data_, size_}; }
  std::size_t size() const noexcept { return size_; }
  /// Per-topic sequence number, 0 for the topic's first message.
  std::uint64_t sequence() const noexcept { return sequence_; }
  /// CLOCK_MONOTONIC nanoseconds at publish.
  std::uint64_t publish_time_ns() const noexcept { return publish_time_ns_; }
  /// CLOCK_REALTIME nanoseconds at publish (for recordings).
  std::uint64_t publish_realtime_ns() const noexcept { return publish_realtime_ns_; }
  /// Process id of the publisher.
  std::uint32_t publisher_pid() const noexcept { return publisher_pid_; }
  /// Messages this reader lost just before this one (free run or tap only; 0 in lockstep), and
  /// for a reader that started at the topic's first message, those the ring no longer held.
  std::uint64_t lost_before() const noexcept { return lost_before_; }
  bool valid() const noexcept { return impl_ != nullptr; }
  /// The payload as characters (text, JSON), valid while the Sample lives; not checked for UTF-8.
  std::string_view text() const noexcept { return {reinterpret_cast<const char*>(data_), size_}; }

  /// The payload read as a T, valid while the Sample lives. InvalidArgument, and nothing read,
  /// when the payload is not exactly sizeof(T) bytes (a publisher of another type, or of text).
  template <Message T>
  Result<const T*> as() const {
    if (Status st = detail::check_message_view(data_, size_, sizeof(T), alignof(T)); !st.ok()) return st;
    return reinterpret_cast<const T*>(data_);
  }

  /// Releases the slot now rather than at destruction.
  void release() noexcept {
    if (impl_) give_back();
  }

 private:
  friend class detail::SubscriberImpl;
  void give_back() noexcept;
  detail::SubscriberImpl* impl_ = nullptr;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t publish_time_ns_ = 0;
  std::uint64_t publish_realtime_ns_ = 0;
  std::uint64_t lost_before_ = 0;
  std::uint32_t publisher_pid_ = 0;
  std::uint32_t slot_ = 0;
  std::uint32_t hold_ = 0;
};

/// One subscriber (or tap) on one topic. It receives every message published after it attached;
/// one started before the first publisher creates the topic and waits for it. Move-only.
class Subscriber {
 public:
  /// Opens or creates the topic and attaches. Errors as for Publisher::create.
  static Result<Subscriber> create(std::string_view topic, SubscriberOptions options = {});

  Subscriber(Subscriber&&) noexcept;
  Subscriber& operator=(Subscriber&&) noexcept;
  ~Subscriber();

  /// The next message, waiting per the wait strategy up to `timeout` (Timeout error), or until
  /// cancelled (Interrupted). LoanLimit if kMaxHeldPerParticipant samples are still held.
  /// Corrupted if the ring contradicts the topic's mode (a lockstep message overwritten before
  /// this subscriber took it): the segment is damaged, and nothing is skipped silently. Corrupted
  /// too, within about kWaitRecheckIntervalNs of waiting, if the topic's counters contradict the
  /// ring or this subscriber's place in it (publishers and inspect_topic report the same damage).
  Result<Sample> receive(Timeout timeout = std::nullopt);

  /// The next message if one is ready now; nullopt if none.
  Result<std::optional<Sample>> try_receive();

  /// Messages lost so far (free run and taps; always 0 for a lockstep subscriber).
  std::uint64_t lost() const noexcept;
  /// Messages received so far.
  std::uint64_t received() const noexcept;
  /// Messages the topic's publishers have published so far, all of them together (the sequence
  /// number the next one gets). Safe to call from any thread, beside the one that receives: a
  /// watcher tells a topic gone silent from a reader that is late.
  std::uint64_t published() const noexcept;
  /// Publishers attached now.
  std::uint32_t publisher_count() const noexcept;
  /// When the topic was created: with its name, tells it from an earlier or later topic of the
  /// same name (RemovedTopic::created_realtime_ns).
  std::uint64_t created_realtime_ns() const noexcept;
  const std::string& topic() const noexcept;
  Mode mode() const noexcept;
  Role role() const noexcept;
  /// What the topic's messages are (raw bytes until someone declares a type; see TopicOptions).
  /// Read afresh on each call: a subscriber may join before the publisher that declares it.
  Result<TopicType> type() const;

 private:
  friend class detail::WaitSetImpl;
  explicit Subscriber(std::unique_ptr<detail::SubscriberImpl> impl);
  std::unique_ptr<detail::SubscriberImpl> impl_;
};

}  // namespace cerulion
