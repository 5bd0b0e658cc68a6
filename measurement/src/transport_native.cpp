#include "transport_native.hpp"

namespace cerulion::measurement {
namespace {

class NativeResponder final : public Responder {
 public:
  NativeResponder(Subscriber requests, Publisher replies, bool stop_on_request)
      : requests_(std::move(requests)), replies_(std::move(replies)), stop_on_request_(stop_on_request) {}
  Status serve() override;

 private:
  Subscriber requests_;
  Publisher replies_;
  bool stop_on_request_;
};

CERULION_HOT_PATH Status NativeResponder::serve() {
  for (;;) {
    auto request = requests_.receive();
    if (!request.ok()) {
      if (request.code() == ErrorCode::Interrupted) return {};
      return {request.code(), "receive: " + request.message()};
    }
    std::uint64_t stamp = 0;
    const std::size_t size = request->size();
    if (size >= kStampBytes) std::memcpy(&stamp, request->data().data(), kStampBytes);
    if (stamp == kStopStamp) {
      if (stop_on_request_) return {};
      continue;
    }
    request->release();  // before loaning: lockstep never waits on our own hold
    auto reply = replies_.loan(size);
    if (!reply.ok()) {
      if (reply.code() == ErrorCode::Interrupted) return {};
      return {reply.code(), "loan: " + reply.message()};
    }
    if (size >= kStampBytes) std::memcpy(reply->data().data(), &stamp, kStampBytes);
    auto sent = replies_.publish(std::move(*reply));
    if (!sent.ok()) {
      if (sent.code() == ErrorCode::Interrupted) return {};
      return {sent.code(), "publish: " + sent.message()};
    }
  }
}

}  // namespace

Result<std::unique_ptr<Requester>> make_native_requester(const RequesterOptions& o) {
  SubscriberOptions sub_options;
  sub_options.topic.domain = o.domain;
  sub_options.wait = {o.wait, o.cancel};
  auto replies = Subscriber::create(reply_topic(o.prefix), sub_options);
  if (!replies.ok()) return replies.status();
  PublisherOptions pub_options;
  pub_options.topic.domain = o.domain;
  pub_options.topic.mode = o.mode;
  pub_options.wait = {o.wait, o.cancel};
  auto requests = Publisher::create(request_topic(o.prefix), pub_options);
  if (!requests.ok()) return requests.status();
  return std::unique_ptr<Requester>(new NativeRequester(std::move(*requests), std::move(*replies)));
}

Result<std::unique_ptr<Responder>> make_native_responder(const ResponderOptions& o) {
  SubscriberOptions sub_options;
  sub_options.topic.domain = o.domain;
  sub_options.wait = {o.wait, o.cancel};
  auto requests = Subscriber::create(request_topic(o.prefix), sub_options);
  if (!requests.ok()) return requests.status();
  PublisherOptions pub_options;
  pub_options.topic.domain = o.domain;
  pub_options.topic.mode = o.mode ? o.mode : std::optional<Mode>(requests->mode());
  pub_options.wait = {o.wait, o.cancel};
  auto replies = Publisher::create(reply_topic(o.prefix), pub_options);
  if (!replies.ok()) return replies.status();
  return std::unique_ptr<Responder>(new NativeResponder(std::move(*requests), std::move(*replies), o.stop_on_request));
}

}  // namespace cerulion::measurement
