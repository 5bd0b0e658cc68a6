// SPDX-License-Identifier: Apache-2.0
#include "transport_native.hpp"

namespace cerulion::measurement {
namespace {

class NativeResponder final : public Responder {
 public:
  NativeResponder(NativeInbox requests, Publisher replies, bool stop_on_request, std::unique_ptr<WaitTrace> trace)
      : requests_(std::move(requests)),
        replies_(std::move(replies)),
        stop_on_request_(stop_on_request),
        trace_(std::move(trace)) {}
  Status serve() override;

 private:
  NativeInbox requests_;
  Publisher replies_;
  bool stop_on_request_;
  std::unique_ptr<WaitTrace> trace_;  ///< where the requests' subscriber records its waits; null: off
};

/// How serving ended when a step failed: Ok for an interrupt, else the step's error named. Out of
/// line, as the message path's errors are (Status says why).
[[gnu::cold, gnu::noinline]] Status serving_ended(const char* step, const Status& error) {
  if (error.code() == ErrorCode::Interrupted) return {};
  return {error.code(), std::string(step) + ": " + error.message()};
}

CERULION_HOT_PATH Status NativeResponder::serve() {
  // Read once: the loop's calls could change any member for all the compiler knows, and a member
  // read per request is a line of this object touched per request.
  WaitTrace* const trace = trace_.get();
  for (;;) {
    if (trace != nullptr) [[unlikely]] *trace = {};  // a request there at once leaves it unwritten
    auto request = requests_.take(std::nullopt);
    if (!request.ok()) [[unlikely]] return serving_ended("receive", request.status());
    const std::uint64_t request_publish_ns = request->publish_time_ns();
    const std::uint64_t leg = monotonic_ns() - request_publish_ns;
    std::uint64_t stamp = 0;
    const std::size_t size = request->size();
    if (size >= kStampBytes) std::memcpy(&stamp, request->data().data(), kStampBytes);
    if (stamp == kStopStamp) {
      if (stop_on_request_) return {};
      continue;
    }
    request->release();  // before loaning: lockstep never waits on our own hold
    auto reply = replies_.loan(size);
    if (!reply.ok()) [[unlikely]] return serving_ended("loan", reply.status());
    if (size >= kStampBytes) std::memcpy(reply->data().data(), &stamp, kStampBytes);
    if (size >= kRequestLegOffset + 8) std::memcpy(reply->data().data() + kRequestLegOffset, &leg, 8);
    if (trace != nullptr) [[unlikely]] encode_responder_trace(reply->data(), request_publish_ns, *trace);
    auto sent = replies_.publish(std::move(*reply));
    if (!sent.ok()) [[unlikely]] return serving_ended("publish", sent.status());
  }
}

}  // namespace

bool NativeRequester::last_trip(TripTrace& trip) const {
  if (!trace_) return false;
  trip = last_trip_;
  return true;
}

Result<Reply> NativeRequester::receive_traced(std::chrono::nanoseconds timeout) {
  *trace_ = {};  // a reply there at once leaves it unwritten
  auto sample = replies_.take(timeout);
  if (!sample.ok()) return sample.status();
  const std::uint64_t arrived_ns = monotonic_ns();
  last_trip_ = {};
  (void)decode_responder_trace(sample->data(), last_trip_);
  last_trip_.requester = *trace_;
  last_trip_.reply_publish_ns = sample->publish_time_ns();
  last_trip_.arrived_ns = arrived_ns;
  return reply_of(*sample, arrived_ns);
}

Status NativeInbox::use_wait_set(WaitOptions wait, std::vector<Subscriber> idle, bool alternate) {
  idle_ = std::move(idle);
  alternate_ = alternate;
  set_ = std::make_unique<WaitSet>(wait);
  // The measured topic is key 0; take() relies on it.
  auto key = set_->add(subscriber_);
  if (!key.ok()) return key.status();
  for (auto& s : idle_) {
    if (auto k = set_->add(s); !k.ok()) return k.status();
  }
  return {};
}

Result<NativeInbox> make_native_inbox(Subscriber subscriber, const TransportOptions& o, const char* side,
                                      WaitTrace* subscriber_trace) {
  NativeInbox inbox(std::move(subscriber));
  if (o.wait_set_members == 0) return inbox;
  std::vector<Subscriber> idle;
  for (std::uint32_t k = 1; k < o.wait_set_members; ++k) {
    SubscriberOptions options;
    options.topic.domain = o.domain;
    options.topic.max_payload = o.topic_ceiling;
    options.wait = {o.wait, o.cancel, nullptr, o.cpu_budget};
    auto s = Subscriber::create(o.prefix + "/idle/" + side + "/" + std::to_string(k), options);
    if (!s.ok()) return s.status();
    idle.push_back(std::move(s).value());
  }
  if (Status st = inbox.use_wait_set({o.wait, o.cancel, subscriber_trace, o.cpu_budget}, std::move(idle), o.alternate_wait_set); !st.ok()) return st;
  return inbox;
}

Result<std::unique_ptr<Requester>> make_native_requester(const RequesterOptions& o) {
  auto trace = o.trace_waits ? std::make_unique<WaitTrace>() : nullptr;
  SubscriberOptions sub_options;
  sub_options.topic.domain = o.domain;
  sub_options.topic.max_payload = o.topic_ceiling;
  sub_options.wait = {o.wait, o.cancel, trace.get(), o.cpu_budget};
  auto reply_subscriber = Subscriber::create(reply_topic(o.prefix), sub_options);
  if (!reply_subscriber.ok()) return reply_subscriber.status();
  auto replies = make_native_inbox(std::move(*reply_subscriber), o, "ping", trace.get());
  if (!replies.ok()) return replies.status();
  PublisherOptions pub_options;
  pub_options.topic.domain = o.domain;
  pub_options.topic.max_payload = o.topic_ceiling;
  pub_options.topic.mode = o.mode;
  pub_options.wait = {o.wait, o.cancel, nullptr, o.cpu_budget};
  auto requests = Publisher::create(request_topic(o.prefix), pub_options);
  if (!requests.ok()) return requests.status();
  return std::unique_ptr<Requester>(new NativeRequester(std::move(*requests), std::move(*replies), std::move(trace)));
}

Result<std::unique_ptr<Responder>> make_native_responder(const ResponderOptions& o) {
  auto trace = o.trace_waits ? std::make_unique<WaitTrace>() : nullptr;
  SubscriberOptions sub_options;
  sub_options.topic.domain = o.domain;
  sub_options.topic.max_payload = o.topic_ceiling;
  sub_options.wait = {o.wait, o.cancel, trace.get(), o.cpu_budget};
  auto request_subscriber = Subscriber::create(request_topic(o.prefix), sub_options);
  if (!request_subscriber.ok()) return request_subscriber.status();
  const Mode request_mode = request_subscriber->mode();
  auto requests = make_native_inbox(std::move(*request_subscriber), o, "pong", trace.get());
  if (!requests.ok()) return requests.status();
  PublisherOptions pub_options;
  pub_options.topic.domain = o.domain;
  pub_options.topic.max_payload = o.topic_ceiling;
  pub_options.topic.mode = o.mode ? o.mode : std::optional<Mode>(request_mode);
  pub_options.wait = {o.wait, o.cancel, nullptr, o.cpu_budget};
  auto replies = Publisher::create(reply_topic(o.prefix), pub_options);
  if (!replies.ok()) return replies.status();
  return std::unique_ptr<Responder>(
      new NativeResponder(std::move(*requests), std::move(*replies), o.stop_on_request, std::move(trace)));
}

}  // namespace cerulion::measurement
