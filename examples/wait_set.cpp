// SPDX-License-Identifier: Apache-2.0
// One thread serving three topics and a timer: the event loop of a node. It takes whatever the
// talker, imu_publisher and camera_publisher send, and once a second prints how much arrived.
#include <chrono>
#include <cstdio>
#include <optional>

#include <cerulion/core/stop.hpp>
#include <cerulion/core/subscriber.hpp>
#include <cerulion/core/wait_set.hpp>

#include "args.hpp"
#include "messages.hpp"

namespace {

struct Topic {
  const char* name;
  std::optional<cerulion::Subscriber> sub = std::nullopt;
  std::size_t key = 0;
  std::uint64_t received = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const example::Args args = example::parse_args(argc, argv);

  // The set waits for all members; the members never wait themselves (try_receive), so only the
  // set needs the cancel flag.
  cerulion::WaitOptions wait;
  wait.cancel = cerulion::stop_on_signals();
  cerulion::WaitSet set(wait);

  Topic topics[] = {{"/chatter"}, {"/imu"}, {"/camera/image"}};
  for (Topic& topic : topics) {
    cerulion::SubscriberOptions options;
    options.topic.depth = 4;  // used only by a topic this node creates: the camera's depth
    auto sub = cerulion::Subscriber::create(topic.name, options);
    if (!sub) {
      std::fprintf(stderr, "wait_set: %s\n", sub.message().c_str());
      return 1;
    }
    topic.sub.emplace(std::move(sub).value());
    topic.key = set.add(*topic.sub).value();  // fails only for a full set or a duplicate
  }
  const std::size_t tick = set.add_timer(std::chrono::seconds(1)).value();

  std::uint64_t total = 0;
  while (!args.finished(total)) {
    auto ready = set.wait(args.remaining());
    if (!ready) {
      if (ready.code() == cerulion::ErrorCode::Interrupted || ready.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "wait_set: %s\n", ready.message().c_str());
      return 1;
    }
    for (Topic& topic : topics) {
      if (!ready->message(topic.key)) continue;
      // Take everything ready now, so one busy topic costs one wake-up, not one per message.
      for (;;) {
        auto sample = topic.sub->try_receive();
        if (!sample) {
          std::fprintf(stderr, "wait_set: %s: %s\n", topic.name, sample.message().c_str());
          return 1;
        }
        if (!*sample) break;
        ++topic.received;
        ++total;
      }
    }
    if (ready->timer(tick)) {
      std::printf("last second: /chatter %llu, /imu %llu, /camera/image %llu messages\n",
                  static_cast<unsigned long long>(topics[0].received),
                  static_cast<unsigned long long>(topics[1].received),
                  static_cast<unsigned long long>(topics[2].received));
      for (Topic& topic : topics) topic.received = 0;
    }
  }
  return 0;
}
