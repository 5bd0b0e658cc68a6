// SPDX-License-Identifier: Apache-2.0
#pragma once
// The native transport: cerulion topics with zero-copy loans. Declared here (not only in its .cpp)
// so round_trip.cpp can run a loop compiled for NativeRequester: `final` lets the compiler call
// and inline these methods directly, so the hot path has no virtual call.

#include <cstring>
#include <memory>
#include <vector>

#include "cerulion/core/publisher.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/core/wait_set.hpp"
#include "cerulion/core/wait_trace.hpp"
#include "cerulion/core/warm.hpp"
#include "cerulion/measurement/transport.hpp"

namespace cerulion::measurement {

/// Takes the next message of one subscriber: from the subscriber itself, or through a wait set
/// that also watches idle topics (TransportOptions::wait_set_members).
class NativeInbox {
 public:
  explicit NativeInbox(Subscriber subscriber) : subscriber_(std::move(subscriber)) {}
  NativeInbox(NativeInbox&&) = default;

  /// Watches `subscriber` and `idle` (topics nobody publishes on) through one wait set.
  Status use_wait_set(WaitOptions wait, std::vector<Subscriber> idle, bool alternate);

  [[gnu::always_inline]] inline Result<Sample> take(Timeout timeout) {
    if (!set_ || (alternate_ && takes_++ % 2 == 0)) return subscriber_.receive(timeout);
    for (;;) {
      auto event = set_->receive(timeout);
      if (!event.ok()) return event.status();
      // Key 0 is the measured topic; an idle one has no publisher, and no timer is set.
      if (event->is_message() && event->key() == 0) return std::move(event->sample());
    }
  }
  Subscriber& subscriber() noexcept { return subscriber_; }
  const Subscriber& subscriber() const noexcept { return subscriber_; }

 private:
  Subscriber subscriber_;
  std::vector<Subscriber> idle_;
  std::unique_ptr<WaitSet> set_;
  bool alternate_ = false;  ///< every other take waits on the subscriber itself
  std::uint64_t takes_ = 0;
};

/// `side` names the idle topics ("ping" or "pong"), so the two sides' wait sets stay apart.
/// `subscriber_trace`: where its waits (the subscriber's or the wait set's) are recorded; may be null.
[[nodiscard]] Result<NativeInbox> make_native_inbox(Subscriber subscriber, const TransportOptions& options,
                                                    const char* side, WaitTrace* subscriber_trace = nullptr);

class NativeRequester final : public Requester {
 public:
  /// `trace`: where the replies' subscriber records its waits (SubscriberOptions::wait.trace);
  /// null when not tracing.
  NativeRequester(Publisher requests, NativeInbox replies, std::unique_ptr<WaitTrace> trace)
      : requests_(std::move(requests)), trace_(std::move(trace)), replies_(std::move(replies)) {}

  std::uint64_t max_payload() const noexcept override { return requests_.max_payload(); }
  Status wait_for_responder(std::chrono::nanoseconds timeout) override {
    return requests_.wait_for_subscribers(1, timeout);
  }
  bool responder_present() const noexcept override { return replies_.subscriber().publisher_count() > 0; }

  // Loan first (the method times from the timestamp written after the loan), then the engine
  // waits for the slot: the loan's work warms the path the publish takes.
  [[gnu::always_inline]] inline Status prepare(std::size_t size, std::chrono::nanoseconds timeout) override {
    if (loan_.valid()) loan_ = Loan();  // one not sent (an early end): return it before asking again
    auto loan = requests_.loan(size, timeout);
    if (!loan.ok()) return loan.status();
    loan_ = std::move(*loan);
    return {};
  }
  [[gnu::always_inline]] inline void keep_warm() noexcept override { warm_caches(); }
  // The timestamp is the last thing written before publishing; no payload byte is filled.
  [[gnu::always_inline]] inline Status send(std::uint64_t stamp, std::chrono::nanoseconds timeout) override {
    if (!loan_.valid()) return {ErrorCode::InvalidArgument, "send without a prepared request"};
    std::memcpy(loan_.data().data(), &stamp, kStampBytes);
    auto sent = requests_.publish(std::move(loan_), timeout);
    if (!sent.ok()) return sent.status();
    return {};
  }
  [[gnu::always_inline]] inline Result<Reply> receive(std::chrono::nanoseconds timeout) override {
    if (trace_) [[unlikely]] return receive_traced(timeout);
    auto sample = replies_.take(timeout);
    if (!sample.ok()) return sample.status();
    return reply_of(*sample, monotonic_ns());
  }

  bool last_trip(TripTrace& trip) const override;

 private:
  [[gnu::always_inline]] static Reply reply_of(const Sample& sample, std::uint64_t arrived_ns) {
    Reply reply;
    reply.arrived_ns = arrived_ns;
    reply.responder_pid = sample.publisher_pid();
    std::memcpy(&reply.stamp, sample.data().data(), kStampBytes);
    if (sample.size() >= kRequestLegOffset + 8) {
      std::memcpy(&reply.request_leg_ns, sample.data().data() + kRequestLegOffset, 8);
    }
    return reply;
  }
  /// receive() with trace_ set, out of line: the trace reset before the take and what the reply
  /// says of both sides' waits kept for last_trip() after it, off the untraced round trip's path.
  [[gnu::noinline]] Result<Reply> receive_traced(std::chrono::nanoseconds timeout);

  // What a round trip reads, in as few lines as the inbox allows: trace_ before the inbox, whose
  // idle_ and takes_ a round trip leaves alone (behind it, the pointer took a line of its own).
  Publisher requests_;
  Loan loan_;
  std::unique_ptr<WaitTrace> trace_;
  NativeInbox replies_;
  TripTrace last_trip_;
};

[[nodiscard]] Result<std::unique_ptr<Requester>> make_native_requester(const RequesterOptions& options);
[[nodiscard]] Result<std::unique_ptr<Responder>> make_native_responder(const ResponderOptions& options);

}  // namespace cerulion::measurement
