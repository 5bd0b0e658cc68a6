// SPDX-License-Identifier: Apache-2.0
// The single-publisher fast path (core/src/sole_publisher.cpp): a topic's only publisher publishes
// without the topic lock, and whoever takes the lock ends that first, whether it is a second
// publisher joining mid-stream, a subscriber, or someone finding the publisher dead mid-publish.

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "child.hpp"
#include "helpers.hpp"
#include "mapped_control.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// What each message of the mid-stream test says: who sent it and its count from that sender.
struct Stamp {
  std::uint32_t sender;
  std::uint32_t count;
};

Result<std::uint64_t> publish_stamp(Publisher& pub, std::uint32_t sender, std::uint32_t count) {
  const Stamp stamp{sender, count};
  return pub.publish(stamp, 10s);
}

/// Publishes `rounds` times `per_round` messages as `sender`, through a publisher created afresh
/// each round and gone at its end: publishers joining and leaving mid-stream. False on a failure.
bool come_and_go(const std::string& topic, std::uint32_t sender, std::uint32_t rounds, std::uint32_t per_round) {
  std::uint32_t count = 0;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
    if (!pub.ok()) return false;
    for (std::uint32_t i = 0; i < per_round; ++i) {
      if (!publish_stamp(*pub, sender, count++).ok()) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("The only publisher of a topic publishes without the topic lock until a second one joins",
          "[sole_publisher]") {
  const std::string topic = unique_topic("sole");
  auto first = Publisher::create(topic, publisher_options(Mode::Lockstep, 8));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(first.ok());
  REQUIRE(sub.ok());
  MappedControl control(topic);
  REQUIRE(control.valid());
  REQUIRE(first->publish_copy(bytes_of("one"), 1s).ok());  // locked: the publish that takes the fast path
  CHECK(control->sole_publisher.load() != 0);
  REQUIRE(first->publish_copy(bytes_of("two"), 1s).ok());
  CHECK(control->lock_word.load() == 0);
  CHECK(control->sole_publisher.load() != 0);

  {
    auto second = Publisher::create(topic, publisher_options(Mode::Lockstep, 8));
    REQUIRE(second.ok());
    CHECK(control->sole_publisher.load() == 0);  // joining took the lock, which ended the fast path
    CHECK(control->publishers.load() == 2);
    REQUIRE(first->publish_copy(bytes_of("three"), 1s).ok());
    REQUIRE(second->publish_copy(bytes_of("four"), 1s).ok());
    CHECK(control->sole_publisher.load() == 0);  // two publishers: every publish locks
  }
  CHECK(control->publishers.load() == 1);
  REQUIRE(first->publish_copy(bytes_of("five"), 1s).ok());
  CHECK(control->sole_publisher.load() != 0);  // alone again
  for (const char* want : {"one", "two", "three", "four", "five"}) {
    auto got = sub->receive(1s);
    REQUIRE(got.ok());
    CHECK(text_of(*got) == want);
  }
}

TEST_CASE("Publishers joining and leaving mid-stream keep one total order and lose nothing", "[sole_publisher]") {
  const std::string topic = unique_topic("sole_mid_stream");
  auto steady = Publisher::create(topic, publisher_options(Mode::Lockstep));
  auto sub = Subscriber::create(topic, subscriber_options(Role::Subscriber, WaitStrategy::Spin));
  REQUIRE(steady.ok());
  REQUIRE(sub.ok());
  constexpr std::uint32_t kSteady = 20000, kRounds = 10, kPerRound = 1000;
  // Sender 0 publishes all along; sender 1 (a thread of this process) and sender 2 (another
  // process) keep joining and leaving.
  std::atomic<bool> steady_ok{true}, visitor_ok{true};
  std::thread steady_thread([&] {
    for (std::uint32_t i = 0; i < kSteady; ++i) {
      if (!publish_stamp(*steady, 0, i).ok()) {
        steady_ok = false;
        return;
      }
    }
  });
  std::thread visitor([&] { visitor_ok = come_and_go(topic, 1, kRounds, kPerRound); });
  Child other_process([&](Child&) { return come_and_go(topic, 2, kRounds, kPerRound) ? 0 : 1; });

  std::map<std::uint32_t, std::uint32_t> next_count;
  std::uint64_t next_sequence = 0;
  std::uint32_t out_of_order = 0;
  const std::uint32_t total = kSteady + 2 * kRounds * kPerRound;
  for (std::uint32_t received = 0; received < total; ++received) {
    auto got = sub->receive(10s);
    REQUIRE(got.ok());
    REQUIRE(got->size() == sizeof(Stamp));
    Stamp stamp{};
    std::memcpy(&stamp, got->data().data(), sizeof stamp);
    // One total order: every sequence number once, in order, and each sender's messages in its order.
    if (got->sequence() != next_sequence || stamp.count != next_count[stamp.sender]) ++out_of_order;
    next_sequence = got->sequence() + 1;
    next_count[stamp.sender] = stamp.count + 1;
  }
  steady_thread.join();
  visitor.join();
  CHECK(other_process.join() == 0);
  CHECK(steady_ok);
  CHECK(visitor_ok);
  CHECK(out_of_order == 0);
  CHECK(next_count[0] == kSteady);
  CHECK(next_count[1] == kRounds * kPerRound);
  CHECK(next_count[2] == kRounds * kPerRound);
}

TEST_CASE("Ending the fast path waits for the publish in progress", "[sole_publisher]") {
  const std::string topic = unique_topic("sole_in_progress");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_copy(bytes_of("x"), 1s).ok());
  MappedControl control(topic);
  REQUIRE(control.valid());
  REQUIRE(control->sole_publisher.load() != 0);
  // This process's publisher is "in the middle of a publish" until the flag below is set.
  control->sole_busy.store(1);
  std::atomic<bool> publish_over{false}, joined_during_publish{false};
  std::thread joiner([&] {
    auto sub = Subscriber::create(topic, subscriber_options());
    joined_during_publish = sub.ok() && !publish_over.load();
  });
  std::this_thread::sleep_for(100ms);
  publish_over = true;
  control->sole_busy.store(0);
  joiner.join();
  CHECK_FALSE(joined_during_publish);
  CHECK(control->sole_publisher.load() == 0);
}

TEST_CASE("A sole publisher that died in the middle of a publish is repaired by the next to take the lock",
          "[sole_publisher]") {
  const std::string topic = unique_topic("sole_died");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  Child child([&](Child&) {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    if (!pub.ok()) return 1;
    if (!pub->publish_copy(bytes_of("before"), 1s).ok()) return 2;
    MappedControl control(topic);
    if (!control.valid() || control->sole_publisher.load() == 0) return 3;
    control->sole_busy.store(1);  // as if killed between its first and last write of a publish
    ::kill(::getpid(), SIGKILL);
    return 4;
  });
  CHECK(child.join() == 128 + SIGKILL);
  auto got = sub->receive(1s);
  REQUIRE(got.ok());
  CHECK(text_of(*got) == "before");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));  // takes the lock
  REQUIRE(pub.ok());
  MappedControl control(topic);
  CHECK(control->sole_busy.load() == 0);
  REQUIRE(pub->publish_copy(bytes_of("after"), 1s).ok());
  got = sub->receive(1s);
  REQUIRE(got.ok());
  CHECK(text_of(*got) == "after");
}
