// SPDX-License-Identifier: Apache-2.0
#pragma once
// Publishing: loan a slot of the topic's shared memory, write the payload in place, publish it.
// Subscribers then read the very same bytes (zero copy).
//
//   auto pub = cerulion::Publisher::create("/robot/cmd");
//   auto loan = pub->loan(64);
//   std::memcpy(loan->data().data(), bytes, 64);
//   auto seq = pub->publish(std::move(*loan));
//
// A trivially copyable struct travels as itself: pub->publish(imu), or pub->loan_as<Frame>() to
// write a large one in place.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "cerulion/core/message.hpp"
#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion {

namespace detail {
class PublisherImpl;
}

/// Options of a publisher: the topic's settings (used if this publisher creates the topic) and how
/// it waits for room in lockstep.
struct PublisherOptions {
  TopicOptions topic;
  WaitOptions wait;
};

/// A writable slot lent by a Publisher. Publish it with Publisher::publish(); dropping it
/// unpublished returns the slot, and nothing of it is ever delivered. Move-only.
class Loan {
 public:
  Loan() = default;
  // Inline, as Sample's: a loan is moved out through a Result on every message.
  Loan(Loan&& other) noexcept : impl_(other.impl_), data_(other.data_), size_(other.size_), slot_(other.slot_) {
    other.impl_ = nullptr;
  }
  Loan& operator=(Loan&& other) noexcept;
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ~Loan() {
    if (impl_) give_back();
  }

  /// The payload bytes, writable in place; size() bytes long.
  std::span<std::byte> data() const noexcept { return {data_, size_}; }
  /// Bytes that will be published.
  std::size_t size() const noexcept { return size_; }
  /// Publishes fewer bytes than were loaned (new_size ≤ the loaned size; larger is clamped).
  void shrink(std::size_t new_size) noexcept { size_ = new_size < size_ ? new_size : size_; }
  bool valid() const noexcept { return impl_ != nullptr; }

 private:
  friend class Publisher;
  friend class detail::PublisherImpl;
  /// Returns the slot of a loan dropped unpublished.
  void give_back() noexcept;
  detail::PublisherImpl* impl_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint32_t slot_ = 0;
};

/// A Loan sized for one T, written in place through -> or *. The T is default-initialized: its
/// bytes are whatever the slot held before, so write every field (as with any loan).
template <Message T>
class TypedLoan {
 public:
  explicit TypedLoan(Loan loan) noexcept : loan_(std::move(loan)) {}
  T* get() const noexcept { return reinterpret_cast<T*>(loan_.data().data()); }
  T* operator->() const noexcept { return get(); }
  T& operator*() const noexcept { return *get(); }
  /// The untyped loan, for Publisher::publish.
  Loan& loan() noexcept { return loan_; }

 private:
  Loan loan_;
};

/// One publisher on one topic. Several publishers may share a topic; their messages reach every
/// subscriber in one total order, numbered by a per-topic sequence. Move-only; the destructor
/// leaves the topic (and removes its segment when it was the last participant). A publisher belongs
/// to the process that created it (the topic lock records that process): after fork() the child
/// creates its own.
class Publisher {
 public:
  /// Opens or creates the topic and joins it as a publisher. Fails with InvalidTopicName,
  /// PermissionDenied, Corrupted, Incompatible (e.g. an explicit depth that differs from the
  /// topic's), TooManyParticipants or SystemError.
  static Result<Publisher> create(std::string_view topic, PublisherOptions options = {});

  Publisher(Publisher&&) noexcept;
  Publisher& operator=(Publisher&&) noexcept;
  ~Publisher();

  /// Lends a slot for `size` bytes (0 ≤ size ≤ max_payload()). In lockstep it first waits, per the
  /// wait strategy and up to `timeout`, until every subscriber has room for one more message.
  /// The bytes are not cleared: they hold whatever the slot carried before.
  Result<Loan> loan(std::size_t size, Timeout timeout = std::nullopt);

  /// Publishes a loan; returns its sequence number (0 for a topic's first message).
  Result<std::uint64_t> publish(Loan&& loan, Timeout timeout = std::nullopt);

  /// Loans, copies `bytes` and publishes: the convenient path for small messages.
  Result<std::uint64_t> publish_copy(std::span<const std::byte> bytes, Timeout timeout = std::nullopt);
  /// Publishes a copy of `text` (its characters, no terminating zero): text and JSON messages.
  Result<std::uint64_t> publish_text(std::string_view text, Timeout timeout = std::nullopt) {
    return publish_copy(std::as_bytes(std::span(text.data(), text.size())), timeout);
  }

  /// Lends a slot for one T (see TypedLoan). Slots are 64-byte aligned, so any T up to that
  /// alignment fits.
  template <Message T>
  Result<TypedLoan<T>> loan_as(Timeout timeout = std::nullopt) {
    static_assert(alignof(T) <= 64, "slots are 64-byte aligned");
    auto raw = loan(sizeof(T), timeout);
    if (!raw.ok()) return raw.status();
    ::new (static_cast<void*>(raw->data().data())) T;
    return TypedLoan<T>(std::move(raw).value());
  }

  /// Publishes a typed loan.
  template <Message T>
  Result<std::uint64_t> publish(TypedLoan<T>&& typed, Timeout timeout = std::nullopt) {
    return publish(std::move(typed.loan()), timeout);
  }

  /// Publishes the bytes of `value` (a copy into the slot): the convenient path for small structs.
  template <Message T>
  Result<std::uint64_t> publish(const T& value, Timeout timeout = std::nullopt) {
    return publish_copy(std::as_bytes(std::span<const T, 1>(&value, 1)), timeout);
  }

  /// Waits until at least `count` subscribers (taps not counted) are attached.
  Status wait_for_subscribers(std::uint32_t count, Timeout timeout);

  /// Subscribers attached now (taps not counted).
  std::uint32_t subscriber_count() const noexcept;
  const std::string& topic() const noexcept;
  Mode mode() const noexcept;
  std::uint32_t depth() const noexcept;
  std::uint64_t max_payload() const noexcept;
  /// What the topic's messages are (raw bytes until someone declares a type; see TopicOptions).
  /// Corrupted if the stored type is damaged.
  Result<TopicType> type() const;

 private:
  explicit Publisher(std::unique_ptr<detail::PublisherImpl> impl);
  std::unique_ptr<detail::PublisherImpl> impl_;
};

}  // namespace cerulion
