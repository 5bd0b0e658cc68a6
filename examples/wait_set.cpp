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

  // The set waits for all members and takes from them; the members never wait themselves, so
  // only the set needs the cancel flag.
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
    // One message, already taken, or the timer; the members take turns.
    auto event = set.receive(args.remaining());
    if (!event) {
      if (event.code() == cerulion::ErrorCode::Interrupted || event.code() == cerulion::ErrorCode::Timeout) break;
      std::fprintf(stderr, "wait_set: %s\n", event.message().c_str());
      return 1;
    }
    if (event->is_message()) {
      for (Topic& topic : topics) topic.received += topic.key == event->key();
      ++total;
    } else if (event->key() == tick) {
      std::printf("last second: /chatter %llu, /imu %llu, /camera/image %llu messages\n",
                  static_cast<unsigned long long>(topics[0].received),
                  static_cast<unsigned long long>(topics[1].received),
                  static_cast<unsigned long long>(topics[2].received));
      for (Topic& topic : topics) topic.received = 0;
    }
  }
  return 0;
}
