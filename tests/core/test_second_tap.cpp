// SPDX-License-Identifier: Apache-2.0
// One process, several readers of one topic: a process that taps a topic (a flashback keeper) may
// open and close another tap of it (its own dump catching up from the ring) while the first reads
// and publishers publish, growing the topic's payload as they go. No Catch2 assertion runs on the
// helper threads (Catch2 is not thread-safe): each keeps its first failure, required after the join.

#include <atomic>
#include <thread>

#include "helpers.hpp"
#include "require_ok.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// Reads a topic until told to stop, keeping its sequences in order and its first failure.
struct SteadyTap {
  Status failure;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;
  bool in_order = true;
};

}  // namespace

TEST_CASE("A process that taps a topic opens and closes more taps of it while the first reads and a publisher grows its payload",
          "[ring][tap]") {
  const auto mode = GENERATE(Mode::FreeRun, Mode::Lockstep);
  const std::string topic = unique_topic("second-tap");
  auto pub = Publisher::create(topic, publisher_options(mode, 8));
  REQUIRE(pub.ok());
  auto first = Subscriber::create(topic, subscriber_options(Role::Tap));
  REQUIRE(first.ok());
  std::atomic<bool> done{false};
  SteadyTap steady;
  std::thread reader([&] {
    std::optional<std::uint64_t> last;
    for (;;) {
      auto s = first->receive(20ms);
      if (!s.ok()) {
        if (s.status().code() == ErrorCode::Timeout) {
          if (done.load()) break;
          continue;
        }
        steady.failure = s.status();
        return;
      }
      if (last && s->sequence() <= *last) steady.in_order = false;
      last = s->sequence();
      ++steady.received;
      steady.lost += s->lost_before();
    }
  });
  // Messages of growing sizes (64 B to 1 MiB): the payload grows new generations as the taps come
  // and go, each reservation on the publisher's descriptor of the topic.
  constexpr std::uint64_t kMessages = 3000;
  Status published;
  std::thread publisher([&] {
    std::vector<std::byte> bytes(1 << 20);
    for (std::uint64_t i = 0; i < kMessages; ++i) {
      const std::size_t size = std::size_t{64} << (i * 15 / kMessages);
      std::memcpy(bytes.data(), &i, sizeof i);
      if (auto sent = pub->publish_copy(std::span(bytes).first(size), 1s); !sent.ok()) {
        published = sent.status();
        break;
      }
    }
    done.store(true);
  });
  // The second taps: each from the oldest message the ring holds, read to what is ready, closed.
  int opened = 0;
  Status second_failure;
  bool second_in_order = true;
  while (!done.load()) {
    SubscriberOptions options = subscriber_options(Role::Tap);
    options.start = StartAt::First;
    auto second = Subscriber::create(topic, options);
    if (!second.ok()) {
      second_failure = second.status();
      break;
    }
    ++opened;
    std::optional<std::uint64_t> last;
    for (;;) {
      auto s = second->try_receive();
      if (!s.ok()) {
        second_failure = s.status();
        break;
      }
      if (!s->has_value()) break;
      if (last && (**s).sequence() <= *last) second_in_order = false;
      last = (**s).sequence();
    }
    if (!second_failure.ok()) break;
  }
  publisher.join();
  reader.join();
  requireOk(published);
  requireOk(second_failure);
  requireOk(steady.failure);
  CHECK(opened > 0);
  CHECK(second_in_order);
  CHECK(steady.in_order);
  // The first tap saw every message or counted it missed, whatever the others did meanwhile.
  CHECK(steady.received + steady.lost == kMessages);
  CHECK(first->published() == kMessages);
}
