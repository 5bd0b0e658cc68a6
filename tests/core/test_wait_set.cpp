// SPDX-License-Identifier: Apache-2.0
// The wait set: one thread waiting on several subscribers and timers, in every wait strategy.

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "child.hpp"
#include "helpers.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {
/// Takes the message a wait reported on `subscriber`; the test fails if there is none.
void require_take(Subscriber& subscriber) {
  auto sample = subscriber.try_receive();
  REQUIRE(sample.ok());
  REQUIRE(sample->has_value());
}
}  // namespace

TEST_CASE("A wait set returns whichever subscriber has a message", "[wait_set]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  const std::string a = unique_topic("ws_a"), b = unique_topic("ws_b"), c = unique_topic("ws_c");
  auto sub_a = Subscriber::create(a);
  auto sub_b = Subscriber::create(b);
  auto sub_c = Subscriber::create(c);
  REQUIRE((sub_a.ok() && sub_b.ok() && sub_c.ok()));
  WaitSet set(wait_options(strategy));
  auto key_a = set.add(*sub_a);
  auto key_b = set.add(*sub_b);
  auto key_c = set.add(*sub_c);
  REQUIRE((key_a.ok() && key_b.ok() && key_c.ok()));

  auto pub_b = Publisher::create(b);
  REQUIRE(pub_b.ok());
  // Published from another thread while the set sleeps, so the wake-up path is exercised too.
  // Catch2's assertions belong to the test's thread: the publisher only says whether it published.
  bool published = false;
  std::thread later([&] {
    std::this_thread::sleep_for(20ms);
    published = pub_b->publish_copy(bytes_of("to b")).ok();
  });
  auto ready = set.wait(5s);
  later.join();
  REQUIRE(published);
  REQUIRE(ready.ok());
  CHECK(ready->message(*key_b));
  CHECK_FALSE(ready->message(*key_a));
  CHECK_FALSE(ready->message(*key_c));
  CHECK_FALSE(ready->any_timer());
  auto sample = sub_b->try_receive();
  REQUIRE(sample.ok());
  REQUIRE(sample->has_value());
  CHECK(text_of(**sample) == "to b");

  // Nothing left: the next wait times out.
  auto nothing = set.wait(30ms);
  CHECK(nothing.code() == ErrorCode::Timeout);
}

TEST_CASE("A wait set reports every member that is ready at once", "[wait_set]") {
  const std::string a = unique_topic("ws_both_a"), b = unique_topic("ws_both_b");
  auto sub_a = Subscriber::create(a);
  auto sub_b = Subscriber::create(b);
  REQUIRE((sub_a.ok() && sub_b.ok()));
  WaitSet set;
  auto key_a = set.add(*sub_a);
  auto key_b = set.add(*sub_b);
  REQUIRE((key_a.ok() && key_b.ok()));
  auto pub_a = Publisher::create(a);
  auto pub_b = Publisher::create(b);
  REQUIRE((pub_a.ok() && pub_b.ok()));
  REQUIRE(pub_a->publish_copy(bytes_of("a")).ok());
  REQUIRE(pub_b->publish_copy(bytes_of("b")).ok());
  auto ready = set.wait(1s);
  REQUIRE(ready.ok());
  CHECK(ready->message(*key_a));
  CHECK(ready->message(*key_b));
}

TEST_CASE("A wait set delivers a steady stream from three topics in order, losing nothing", "[wait_set]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  constexpr int kPerTopic = 200;
  std::vector<std::string> topics = {unique_topic("ws_s0"), unique_topic("ws_s1"), unique_topic("ws_s2")};
  std::vector<Subscriber> subs;
  WaitSet set(wait_options(strategy));
  for (const auto& t : topics) {
    auto s = Subscriber::create(t);
    REQUIRE(s.ok());
    subs.push_back(std::move(s).value());
  }
  for (auto& s : subs) REQUIRE(set.add(s).ok());
  // Catch2's assertions belong to the test's thread: the publisher counts its failures for it.
  std::atomic<int> failed_publishes{0};
  std::thread publisher([&] {
    std::vector<Publisher> pubs;
    for (const auto& t : topics) pubs.push_back(Publisher::create(t).value());
    for (int i = 0; i < kPerTopic; ++i) {
      for (auto& p : pubs) {
        if (!p.publish(static_cast<std::uint64_t>(i)).ok()) ++failed_publishes;
      }
      std::this_thread::sleep_for(200us);
    }
  });
  std::vector<std::uint64_t> next(3, 0);
  int received = 0;
  while (received < 3 * kPerTopic) {
    auto ready = set.wait(5s);
    REQUIRE(ready.ok());
    for (std::size_t k = 0; k < 3; ++k) {
      if (!ready->message(k)) continue;
      auto sample = subs[k].try_receive();
      REQUIRE(sample.ok());
      REQUIRE(sample->has_value());
      auto value = (*sample)->as<std::uint64_t>();
      REQUIRE(value.ok());
      CHECK(**value == next[k]);
      ++next[k];
      ++received;
    }
  }
  publisher.join();
  CHECK(failed_publishes == 0);
  CHECK(next == std::vector<std::uint64_t>{kPerTopic, kPerTopic, kPerTopic});
}

TEST_CASE("A wait set wakes for each message published to any member while it sleeps", "[wait_set]") {
  // A set of one sleeps on its member's word alone (futex_wait); a set of three on its bell,
  // which each member's publisher rings (bell.hpp).
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  auto member_count = GENERATE(std::size_t{1}, std::size_t{3});
  constexpr std::uint64_t kMessages = 30;
  std::vector<std::string> topics;
  std::vector<Subscriber> subs;
  WaitSet set(wait_options(strategy));
  for (std::size_t m = 0; m < member_count; ++m) {
    topics.push_back(unique_topic("ws_wake" + std::to_string(m)));
    subs.push_back(Subscriber::create(topics.back()).value());
    REQUIRE(set.add(subs.back()).value() == m);
  }
  std::atomic<std::uint64_t> taken{0};
  // Catch2's assertions belong to the test's thread: the publisher counts its failures for it.
  std::atomic<int> failed_publishes{0};
  std::thread publisher([&] {
    std::vector<Publisher> pubs;
    for (const auto& t : topics) pubs.push_back(Publisher::create(t).value());
    for (std::uint64_t i = 0; i < kMessages; ++i) {
      std::this_thread::sleep_for(2ms);  // long enough for the set to be asleep
      if (!pubs[i % pubs.size()].publish(i).ok()) ++failed_publishes;
      // One message at a time, so that each one has to wake the set.
      for (int spins = 0; taken.load() <= i && spins < 50'000; ++spins) std::this_thread::sleep_for(100us);
    }
  });
  const std::uint64_t start = monotonic_ns();
  std::uint64_t next = 0;
  while (next < kMessages) {
    auto ready = set.wait(5s);
    REQUIRE(ready.ok());
    const std::size_t member = next % member_count;
    REQUIRE(ready->message(member));
    auto sample = subs[member].try_receive();
    REQUIRE(sample.ok());
    REQUIRE(sample->has_value());
    CHECK(*(*sample)->as<std::uint64_t>().value() == next);
    taken.store(++next);
  }
  publisher.join();
  CHECK(failed_publishes == 0);
  // A missed wake-up would still end each sleep at the next liveness check (100 ms): 3 s in all.
  CHECK(static_cast<double>(monotonic_ns() - start) / 1e9 < 1.5);
}

TEST_CASE("A wait set timer fires on its period between messages", "[wait_set]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  const std::string topic = unique_topic("ws_timer");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  WaitSet set(wait_options(strategy));
  REQUIRE(set.add(*sub).ok());
  // The clock starts before the timer does: its first period counts from add_timer.
  const std::uint64_t start = monotonic_ns();
  auto tick = set.add_timer(10ms);
  REQUIRE(tick.ok());
  int fired = 0;
  while (fired < 5) {
    auto ready = set.wait(1s);
    REQUIRE(ready.ok());
    CHECK(ready->timer(*tick));
    CHECK_FALSE(ready->any_message());
    ++fired;
  }
  const double elapsed_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
  // Five periods of 10 ms: never early (a timer waits for its due time), and not stuck.
  CHECK(elapsed_ms >= 50.0);
  CHECK(elapsed_ms < 1000.0);
}

TEST_CASE("A wait set refuses what it cannot watch", "[wait_set]") {
  const std::string topic = unique_topic("ws_refuse");
  auto sub = Subscriber::create(topic);
  REQUIRE(sub.ok());
  WaitSet set;
  REQUIRE(set.add(*sub).ok());
  CHECK(set.add(*sub).code() == ErrorCode::InvalidArgument);  // twice
  CHECK(set.add_timer(0ms).code() == ErrorCode::InvalidArgument);
  CHECK(set.add_timer(-5ms).code() == ErrorCode::InvalidArgument);
  Subscriber moved = std::move(*sub);
  CHECK(set.add(*sub).code() == ErrorCode::InvalidArgument);  // moved from
  set.remove(moved);
  CHECK(set.wait(10ms).code() == ErrorCode::Timeout);
}

TEST_CASE("A wait set follows members taken from between waits", "[wait_set]") {
  const std::string topic = unique_topic("ws_follow");
  auto sub = Subscriber::create(topic);
  auto pub = Publisher::create(topic);
  REQUIRE((sub.ok() && pub.ok()));
  WaitSet set;
  auto key = set.add(*sub);
  REQUIRE(key.ok());
  for (int i = 0; i < 3; ++i) REQUIRE(pub->publish(static_cast<std::uint64_t>(i)).ok());
  auto ready = set.wait(1s);
  REQUIRE(ready.ok());
  REQUIRE(ready->message(*key));
  // All three taken after one report: the set must not report them again.
  for (int i = 0; i < 3; ++i) require_take(*sub);
  CHECK(set.wait(30ms).code() == ErrorCode::Timeout);
  REQUIRE(pub->publish(std::uint64_t{3}).ok());
  ready = set.wait(1s);
  REQUIRE(ready.ok());
  CHECK(ready->message(*key));
}

TEST_CASE("A wait set keeps its members' keys when one leaves", "[wait_set]") {
  const std::string a = unique_topic("ws_keys_a"), b = unique_topic("ws_keys_b"), c = unique_topic("ws_keys_c");
  auto sub_a = Subscriber::create(a);
  auto sub_b = Subscriber::create(b);
  auto sub_c = Subscriber::create(c);
  auto pub_c = Publisher::create(c);
  REQUIRE((sub_a.ok() && sub_b.ok() && sub_c.ok() && pub_c.ok()));
  WaitSet set;
  REQUIRE(set.add(*sub_a).ok());
  REQUIRE(set.add(*sub_b).ok());
  auto key_c = set.add(*sub_c);
  REQUIRE(key_c.ok());

  SECTION("removed") { set.remove(*sub_b); }
  SECTION("destroyed") { sub_b = Subscriber::create(unique_topic("ws_keys_other")); }

  REQUIRE(pub_c->publish_copy(bytes_of("c")).ok());
  auto ready = set.wait(1s);
  REQUIRE(ready.ok());
  CHECK(ready->message(*key_c));
  CHECK_FALSE(ready->message(1));
  require_take(*sub_c);
  CHECK(set.wait(30ms).code() == ErrorCode::Timeout);
}

TEST_CASE("A subscriber is in one wait set at a time", "[wait_set]") {
  const std::string topic = unique_topic("ws_one_set");
  auto sub = Subscriber::create(topic);
  auto pub = Publisher::create(topic);
  REQUIRE((sub.ok() && pub.ok()));
  WaitSet second;
  auto first = std::make_unique<WaitSet>();
  REQUIRE(first->add(*sub).ok());
  auto refused = second.add(*sub);
  CHECK(refused.code() == ErrorCode::InvalidArgument);
  CHECK_THAT(refused.message(), Catch::Contains("another wait set"));

  SECTION("free again once removed from the first") { first->remove(*sub); }
  SECTION("free again once the first is destroyed") { first.reset(); }

  REQUIRE(second.add(*sub).ok());
  REQUIRE(pub->publish_copy(bytes_of("x")).ok());
  auto ready = second.wait(1s);
  REQUIRE(ready.ok());
  CHECK(ready->any_message());
}

TEST_CASE("SIGTERM through stop_on_signals ends a wait set's wait with Interrupted", "[wait_set][stop]") {
  auto strategy = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Block, WaitStrategy::Spin);
  const std::string topic = unique_topic("ws_stop");
  // In a child of its own: the handlers are process-wide, and Catch installs its own in this one.
  Child child([&](Child& self) {
    auto sub = Subscriber::create(topic);
    if (!sub.ok()) return 2;
    const std::atomic<bool>* stop = stop_on_signals();
    if (stop != stop_on_signals()) return 3;  // installed once, the same flag every time
    WaitSet set(wait_options(strategy, stop));
    if (!set.add(*sub).ok()) return 4;
    self.signal_ready();
    auto ready = set.wait(10s);
    if (ready.code() != ErrorCode::Interrupted) return 5;
    if (!stop_requested() || stop_signal() != SIGTERM) return 6;
    return 0;
  });
  REQUIRE(child.wait_ready());
  std::this_thread::sleep_for(30ms);
  child.terminate();
  CHECK(child.join() == 0);
}
