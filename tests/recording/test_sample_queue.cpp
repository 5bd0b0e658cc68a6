// SPDX-License-Identifier: Apache-2.0
// The queue between a tap set and its consumer: drops and counts when full, waits when asked to,
// and hands samples over in log-time order, topics before their first sample.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <thread>

#include "cerulion/recording/sample_queue.hpp"
#include "helpers.hpp"

using namespace cerulion;
using namespace cerulion::recording;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// A consumer that keeps what it gets, and can be held (consume() blocks until let go).
struct HeldConsumer : SampleConsumer {
  Status on_topic(const TopicDescription& topic) override {
    std::lock_guard lock(mutex);
    events.push_back("topic " + topic.topic);
    return {};
  }
  Status consume(QueuedSample& sample) override {
    std::unique_lock lock(mutex);
    entered = true;
    changed.notify_all();
    changed.wait(lock, [&] { return !held; });
    events.push_back("sample " + std::to_string(sample.topic_index) + ":" + std::to_string(sample.sequence));
    log_times.push_back(sample.log_time);
    if (fail_after && log_times.size() >= fail_after) return Status(ErrorCode::SystemError, "disk on fire");
    return {};
  }
  void hold(bool h) {
    std::lock_guard lock(mutex);
    held = h;
    changed.notify_all();
  }
  bool wait_entered() {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, 5s, [&] { return entered; });
  }
  std::size_t consumed() {
    std::lock_guard lock(mutex);
    return log_times.size();
  }
  std::mutex mutex;
  std::condition_variable changed;
  bool held = false;
  bool entered = false;
  std::size_t fail_after = 0;
  std::vector<std::string> events;
  std::vector<std::uint64_t> log_times;
};

TappedSample sample_of(std::size_t topic, std::uint64_t sequence, std::span<const std::byte> data,
                       std::uint64_t log_time = 1) {
  TappedSample s;
  s.topic_index = topic;
  s.sequence = sequence;
  s.log_time = log_time;
  s.data = data;
  return s;
}

}  // namespace

TEST_CASE("A full queue drops what does not fit while the consumer is behind", "[recording][queue]") {
  HeldConsumer consumer;
  consumer.hold(true);
  SampleQueue queue(consumer, {.max_bytes = 100});
  queue.start();
  const std::string payload(40, 'x');
  CHECK(queue.on_sample(sample_of(0, 0, bytes_of(payload))));
  REQUIRE(consumer.wait_entered());  // the consumer holds the first one: it still counts
  CHECK(queue.on_sample(sample_of(0, 1, bytes_of(payload))));
  CHECK_FALSE(queue.on_sample(sample_of(0, 2, bytes_of(payload))));  // 120 > 100
  CHECK_FALSE(queue.on_sample(sample_of(0, 3, bytes_of(payload))));
  consumer.hold(false);
  REQUIRE(eventually([&] { return consumer.consumed() == 2; }));
  CHECK(queue.on_sample(sample_of(0, 4, bytes_of(payload))));  // room again
  queue.finish();
  CHECK(consumer.consumed() == 3);
  CHECK(queue.error().ok());
}

TEST_CASE("A queue that waits for room holds the producer instead of dropping", "[recording][queue]") {
  HeldConsumer consumer;
  consumer.hold(true);
  SampleQueue queue(consumer, {.max_bytes = 100, .wait_for_room = true});
  queue.start();
  const std::string payload(40, 'x');
  CHECK(queue.on_sample(sample_of(0, 0, bytes_of(payload))));
  REQUIRE(consumer.wait_entered());
  CHECK(queue.on_sample(sample_of(0, 1, bytes_of(payload))));
  auto third = std::async(std::launch::async, [&] { return queue.on_sample(sample_of(0, 2, bytes_of(payload))); });
  CHECK(third.wait_for(200ms) == std::future_status::timeout);  // waiting, not dropped
  consumer.hold(false);
  REQUIRE(third.wait_for(5s) == std::future_status::ready);
  CHECK(third.get());
  queue.finish();
  CHECK(consumer.consumed() == 3);
}

TEST_CASE("A queue hands samples over in log-time order, each topic announced before its samples", "[recording][queue]") {
  HeldConsumer consumer;
  SampleQueue queue(consumer);
  queue.start();
  const std::string payload = "p";
  // Catch2's assertions belong to the test's thread: the producers count the samples refused.
  std::atomic<int> refused{0};
  std::vector<std::thread> producers;
  for (std::size_t t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      TopicDescription topic;
      topic.index = t;
      topic.topic = "/t" + std::to_string(t);
      queue.on_topic(topic);
      // Log times that go backwards, as reads by several threads stamped before queuing would.
      for (std::uint64_t i = 0; i < 500; ++i) {
        if (!queue.on_sample(sample_of(t, i, bytes_of(payload), 1'000'000 - i * 100 + t))) ++refused;
      }
    });
  }
  for (auto& p : producers) p.join();
  CHECK(refused == 0);
  queue.finish();
  REQUIRE(consumer.log_times.size() == 2000);
  CHECK(std::is_sorted(consumer.log_times.begin(), consumer.log_times.end()));
  for (std::size_t t = 0; t < 4; ++t) {
    auto topic = std::find(consumer.events.begin(), consumer.events.end(), "topic /t" + std::to_string(t));
    auto first = std::find(consumer.events.begin(), consumer.events.end(), "sample " + std::to_string(t) + ":0");
    REQUIRE(topic != consumer.events.end());
    CHECK(topic < first);
  }
}

TEST_CASE("A consumer's error stops the queue, which then drops and says why", "[recording][queue]") {
  HeldConsumer consumer;
  consumer.fail_after = 2;
  SampleQueue queue(consumer, {.wait_for_room = true});
  queue.start();
  const std::string payload = "p";
  CHECK(queue.on_sample(sample_of(0, 0, bytes_of(payload))));
  CHECK(queue.on_sample(sample_of(0, 1, bytes_of(payload))));
  REQUIRE(eventually([&] { return !queue.error().ok(); }));
  CHECK(queue.error().message() == "disk on fire");
  CHECK_FALSE(queue.on_sample(sample_of(0, 2, bytes_of(payload))));
  queue.finish();
}
