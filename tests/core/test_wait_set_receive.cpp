// SPDX-License-Identifier: Apache-2.0
// WaitSet::receive: a node's loop that takes one message (or one timer) per call from whichever
// member has it.

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "helpers.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// Three subscribers in one set, keys 0, 1 and 2, and a publisher on each topic.
struct ThreeTopics {
  explicit ThreeTopics(WaitStrategy strategy, const std::string& stem) : set(wait_options(strategy)) {
    for (int k = 0; k < 3; ++k) {
      names.push_back(unique_topic(stem + std::to_string(k)));
      subs.push_back(Subscriber::create(names.back()).value());
      REQUIRE(set.add(subs.back()).value() == static_cast<std::size_t>(k));
    }
  }
  std::vector<Publisher> publishers() const {
    std::vector<Publisher> pubs;
    for (const auto& n : names) pubs.push_back(Publisher::create(n).value());
    return pubs;
  }
  std::vector<std::string> names;
  std::vector<Subscriber> subs;
  WaitSet set;
};

/// The value of a message that receive() returned; the test fails unless it is one.
std::uint64_t value_of(const Result<WaitSetEvent>& event) {
  REQUIRE(event.ok());
  REQUIRE(event->is_message());
  auto value = event->sample().as<std::uint64_t>();
  REQUIRE(value.ok());
  return **value;
}

}  // namespace

TEST_CASE("A wait set's receive takes the message of whichever member has one", "[wait_set][receive]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  ThreeTopics three(strategy, "wsr_any");
  auto pub_b = Publisher::create(three.names[1]).value();
  // Published from another thread while the set sleeps, so the wake-up path takes it too. Catch2's
  // assertions belong to the test's thread: the publisher only says whether it published.
  bool published = false;
  std::thread later([&] {
    std::this_thread::sleep_for(20ms);
    published = pub_b.publish(std::uint64_t{42}).ok();
  });
  auto event = three.set.receive(5s);
  later.join();
  REQUIRE(published);
  CHECK(value_of(event) == 42);
  CHECK(event->key() == 1);
  CHECK_FALSE(event->is_timer());
  // Taken, not only reported: nothing is left for the subscriber or the next receive.
  CHECK_FALSE(three.subs[1].try_receive().value().has_value());
  CHECK(three.set.receive(30ms).code() == ErrorCode::Timeout);
}

TEST_CASE("A wait set's receive delivers a steady stream from three topics in order, losing nothing",
          "[wait_set][receive]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  constexpr std::uint64_t kPerTopic = 200;
  ThreeTopics three(strategy, "wsr_stream");
  // Catch2's assertions belong to the test's thread: the publisher counts its failures for it.
  std::atomic<int> failed_publishes{0};
  std::thread publisher([&] {
    auto pubs = three.publishers();
    for (std::uint64_t i = 0; i < kPerTopic; ++i) {
      for (auto& p : pubs) {
        if (!p.publish(i).ok()) ++failed_publishes;
      }
      std::this_thread::sleep_for(200us);
    }
  });
  std::vector<std::uint64_t> next(3, 0);
  for (std::uint64_t received = 0; received < 3 * kPerTopic; ++received) {
    auto event = three.set.receive(5s);
    const std::uint64_t value = value_of(event);
    REQUIRE(event->key() < 3);
    CHECK(value == next[event->key()]);
    ++next[event->key()];
  }
  publisher.join();
  CHECK(failed_publishes == 0);
  CHECK(next == std::vector<std::uint64_t>{kPerTopic, kPerTopic, kPerTopic});
  CHECK(three.set.receive(30ms).code() == ErrorCode::Timeout);
}

TEST_CASE("A wait set's receive gives its members turns, so a busy topic does not keep the others waiting",
          "[wait_set][receive]") {
  ThreeTopics three(WaitStrategy::Adaptive, "wsr_turns");
  auto pubs = three.publishers();
  // The first topic has three messages queued, the others one each.
  for (std::uint64_t i = 0; i < 3; ++i) REQUIRE(pubs[0].publish(i).ok());
  REQUIRE(pubs[1].publish(std::uint64_t{10}).ok());
  REQUIRE(pubs[2].publish(std::uint64_t{20}).ok());
  std::vector<std::pair<std::size_t, std::uint64_t>> order;
  for (int i = 0; i < 5; ++i) {
    auto event = three.set.receive(1s);
    const std::uint64_t value = value_of(event);
    order.emplace_back(event->key(), value);
  }
  using Taken = std::vector<std::pair<std::size_t, std::uint64_t>>;
  CHECK(order == Taken{{0, 0}, {1, 10}, {2, 20}, {0, 1}, {0, 2}});
}

TEST_CASE("A wait set's receive returns a due timer before messages, once per due time", "[wait_set][receive]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  const std::string topic = unique_topic("wsr_timer");
  auto sub = Subscriber::create(topic).value();
  auto pub = Publisher::create(topic).value();
  WaitSet set(wait_options(strategy));
  const std::size_t member = set.add(sub).value();
  const std::uint64_t start = monotonic_ns();  // the timer's first due time is a period after its adding
  const std::size_t tick = set.add_timer(20ms).value();

  SECTION("a timer alone comes on its period") {
    for (int fired = 0; fired < 3; ++fired) {
      auto event = set.receive(1s);
      REQUIRE(event.ok());
      CHECK(event->is_timer());
      CHECK(event->key() == tick);
      CHECK_FALSE(event->sample().valid());
    }
    // Three periods: never early, since a timer waits for its due time.
    CHECK(monotonic_ns() - start >= 60'000'000);
  }
  SECTION("a timer due while a message waits comes first, then the message") {
    REQUIRE(pub.publish(std::uint64_t{7}).ok());
    std::this_thread::sleep_for(50ms);  // two periods and more: the timer fires once, not twice
    auto first = set.receive(1s);
    REQUIRE(first.ok());
    CHECK(first->is_timer());
    auto second = set.receive(1s);
    CHECK(value_of(second) == 7);
    CHECK(second->key() == member);
  }
}

TEST_CASE("A sample a wait set's receive returned outlives the next receive", "[wait_set][receive]") {
  ThreeTopics three(WaitStrategy::Spin, "wsr_keep");
  auto pubs = three.publishers();
  REQUIRE(pubs[0].publish(std::uint64_t{1}).ok());
  REQUIRE(pubs[1].publish(std::uint64_t{2}).ok());
  auto first = three.set.receive(1s);
  REQUIRE(value_of(first) == 1);
  Sample kept = std::move(first->sample());
  auto second = three.set.receive(1s);
  CHECK(value_of(second) == 2);
  REQUIRE(kept.valid());
  CHECK(*kept.as<std::uint64_t>().value() == 1);
}

TEST_CASE("A wait set's receive ends with its member's error, its timeout or its cancel, and takes nothing",
          "[wait_set][receive]") {
  const std::string topic = unique_topic("wsr_errors");
  auto sub = Subscriber::create(topic).value();
  auto pub = Publisher::create(topic).value();
  std::atomic<bool> cancel{false};

  SECTION("a member holding all the samples it may") {
    WaitSet set;
    REQUIRE(set.add(sub).ok());
    std::vector<Sample> held;
    for (std::uint32_t i = 0; i <= kMaxHeldPerParticipant; ++i) REQUIRE(pub.publish(std::uint64_t{i}).ok());
    for (std::uint32_t i = 0; i < kMaxHeldPerParticipant; ++i) held.push_back(std::move(set.receive(1s)->sample()));
    auto refused = set.receive(1s);
    CHECK(refused.code() == ErrorCode::LoanLimit);
    held.clear();
    // The message that was refused is still there once the samples are back.
    CHECK(value_of(set.receive(1s)) == kMaxHeldPerParticipant);
  }
  SECTION("a timeout") {
    WaitSet set;
    REQUIRE(set.add(sub).ok());
    CHECK(set.receive(20ms).code() == ErrorCode::Timeout);
  }
  SECTION("a cancel") {
    WaitSet set(wait_options(WaitStrategy::Block, &cancel));
    REQUIRE(set.add(sub).ok());
    std::thread canceller([&] {
      std::this_thread::sleep_for(20ms);
      cancel.store(true);
    });
    auto interrupted = set.receive(10s);
    canceller.join();
    CHECK(interrupted.code() == ErrorCode::Interrupted);
    // Nothing published, nothing taken: the subscriber still starts at the first message.
    REQUIRE(pub.publish(std::uint64_t{5}).ok());
    CHECK(*sub.try_receive().value().value().as<std::uint64_t>().value() == 5);
  }
  SECTION("an empty set") {
    WaitSet set;
    CHECK(set.receive(20ms).code() == ErrorCode::Timeout);
  }
}
