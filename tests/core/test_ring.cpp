// SPDX-License-Identifier: Apache-2.0
// Ring semantics within one process: lockstep, free run, taps, n:m order, growth, loans.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "helpers.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

TEST_CASE("Subscriber misses nothing in lockstep", "[ring]") {
  auto wait = GENERATE(WaitStrategy::Adaptive, WaitStrategy::Spin, WaitStrategy::Block);
  const std::string topic = unique_topic("lockstep");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4, wait));
  REQUIRE(pub.ok());
  auto sub = Subscriber::create(topic, subscriber_options(Role::Subscriber, wait));
  REQUIRE(sub.ok());
  constexpr int kCount = 3000;
  std::atomic<int> published{0};  // Catch2 assertions are for the main thread only
  std::thread producer([&] {
    for (int i = 0; i < kCount; ++i) {
      if (!pub->publish_copy(bytes_of("message " + std::to_string(i)), 10s).ok()) return;
      ++published;
    }
  });
  for (int i = 0; i < kCount; ++i) {
    auto sample = sub->receive(10s);
    REQUIRE(sample.ok());
    CHECK(sample->sequence() == static_cast<std::uint64_t>(i));
    CHECK(text_of(*sample) == "message " + std::to_string(i));
    CHECK(sample->lost_before() == 0);
  }
  producer.join();
  CHECK(published == kCount);
  CHECK(sub->lost() == 0);
  CHECK(sub->received() == kCount);
}

TEST_CASE("Lockstep publisher waits for a slow subscriber", "[ring]") {
  const std::string topic = unique_topic("backpressure");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 2));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  REQUIRE(pub->publish_copy(bytes_of("a")).ok());
  REQUIRE(pub->publish_copy(bytes_of("b")).ok());
  auto third = pub->loan(1, 50ms);
  CHECK(third.code() == ErrorCode::Timeout);
  auto first = sub->receive(1s);
  REQUIRE(first.ok());
  CHECK(text_of(*first) == "a");
  // Taken but still held: its slot may not be reused yet.
  CHECK(pub->loan(1, 50ms).code() == ErrorCode::Timeout);
  first->release();
  CHECK(pub->publish_copy(bytes_of("c"), 1s).ok());
}

TEST_CASE("Free run subscriber is told exactly how many it lost", "[ring]") {
  const std::string topic = unique_topic("freerun");
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, 4));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  for (int i = 0; i < 10; ++i) REQUIRE(pub->publish_copy(bytes_of(std::to_string(i)), 0ms).ok());
  auto first = sub->receive(1s);
  REQUIRE(first.ok());
  CHECK(first->lost_before() == 6);
  CHECK(first->sequence() == 6);
  CHECK(text_of(*first) == "6");
  first->release();
  for (int i = 7; i < 10; ++i) {
    auto s = sub->receive(1s);
    REQUIRE(s.ok());
    CHECK(s->sequence() == static_cast<std::uint64_t>(i));
    CHECK(s->lost_before() == 0);
  }
  CHECK(sub->lost() == 6);
  auto none = sub->try_receive();
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
}

TEST_CASE("Free run publisher never waits even while samples are held", "[ring]") {
  const std::string topic = unique_topic("freerun_held");
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, 2));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  REQUIRE(pub->publish_copy(bytes_of("held")).ok());
  auto held = sub->receive(1s);
  REQUIRE(held.ok());
  for (int i = 0; i < 100; ++i) REQUIRE(pub->publish_copy(bytes_of("x" + std::to_string(i)), 0ms).ok());
  // The held sample's bytes were never reused under it.
  CHECK(text_of(*held) == "held");
}

TEST_CASE("Tap never holds a publisher back and counts what it missed", "[ring]") {
  auto mode = GENERATE(Mode::Lockstep, Mode::FreeRun);
  const std::string topic = unique_topic("tap");
  auto pub = Publisher::create(topic, publisher_options(mode, 4));
  auto tap = Subscriber::create(topic, subscriber_options(Role::Tap));
  REQUIRE(pub.ok());
  REQUIRE(tap.ok());
  CHECK(pub->subscriber_count() == 0);
  for (int i = 0; i < 50; ++i) REQUIRE(pub->publish_copy(bytes_of(std::to_string(i)), 0ms).ok());
  std::vector<std::string> seen;
  std::uint64_t lost = 0;
  for (;;) {
    auto s = tap->try_receive();
    REQUIRE(s.ok());
    if (!s->has_value()) break;
    lost += (*s)->lost_before();
    seen.push_back(text_of(**s));
  }
  CHECK(lost == 46);
  CHECK(tap->lost() == 46);
  CHECK(seen == std::vector<std::string>{"46", "47", "48", "49"});
}

TEST_CASE("A tap that polls where its topic's next message is due reads a periodic topic in order and never holds the publisher", "[ring]") {
  const std::string topic = unique_topic("tap_due");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 16));
  REQUIRE(pub.ok());
  auto options = subscriber_options(Role::Tap);
  options.poll_when_due = true;
  auto tap = Subscriber::create(topic, options);
  REQUIRE(tap.ok());
  CHECK(pub->subscriber_count() == 0);
  constexpr int kCount = 300;
  std::thread producer([&] {
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; i < kCount; ++i) {
      next += 1ms;  // a grid: the rate the tap learns, and then polls across
      std::this_thread::sleep_until(next);
      if (!pub->publish_copy(bytes_of(std::to_string(i)), 0ms).ok()) return;
    }
  });
  std::vector<int> seen;
  std::uint64_t lost = 0;
  while (seen.empty() || seen.back() < kCount - 1) {
    auto s = tap->receive(5s);
    if (!s.ok()) break;
    lost += s->lost_before();
    seen.push_back(std::stoi(text_of(*s)));
  }
  producer.join();
  REQUIRE_FALSE(seen.empty());
  CHECK(seen.back() == kCount - 1);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  // What a loaded machine made it miss is counted, never skipped silently.
  CHECK(seen.size() + lost == static_cast<std::size_t>(kCount));
}

TEST_CASE("A subscriber's published count is every publisher's messages, whether it read them or not", "[ring]") {
  const std::string topic = unique_topic("published");
  auto pub_1 = Publisher::create(topic, publisher_options(Mode::FreeRun, 4));
  REQUIRE(pub_1.ok());
  auto sub = Subscriber::create(topic, subscriber_options(Role::Tap));
  REQUIRE(sub.ok());
  CHECK(sub->published() == 0);
  auto pub_2 = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
  REQUIRE(pub_2.ok());
  for (int i = 0; i < 7; ++i) REQUIRE(pub_1->publish_copy(bytes_of("one"), 0ms).ok());
  for (int i = 0; i < 5; ++i) REQUIRE(pub_2->publish_copy(bytes_of("two"), 0ms).ok());
  CHECK(sub->published() == 12);  // nothing read yet, 8 of them already overwritten
  auto first = sub->try_receive();
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  CHECK((*first)->lost_before() == 8);
  CHECK(sub->published() == 12);
  // Read from another thread than the one that receives.
  std::uint64_t seen_elsewhere = 0;
  std::thread([&] { seen_elsewhere = sub->published(); }).join();
  CHECK(seen_elsewhere == 12);
}

TEST_CASE("Every subscriber sees every publisher in one total order", "[ring]") {
  const std::string topic = unique_topic("n_to_m");
  constexpr int kPerPublisher = 1000;
  auto sub_a = Subscriber::create(topic, subscriber_options());
  auto sub_b = Subscriber::create(topic, subscriber_options(Role::Subscriber, WaitStrategy::Block));
  REQUIRE(sub_a.ok());
  REQUIRE(sub_b.ok());
  auto pub_1 = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  auto pub_2 = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  REQUIRE(pub_1.ok());
  REQUIRE(pub_2.ok());
  // Threads only record; Catch2 assertions stay on the main thread.
  std::atomic<int> failures{0};
  auto produce = [&](Publisher& pub, char who) {
    for (int i = 0; i < kPerPublisher; ++i) {
      if (!pub.publish_copy(bytes_of(std::string(1, who) + std::to_string(i)), 10s).ok()) ++failures;
    }
  };
  std::vector<std::string> got_a, got_b;
  auto consume = [&](Subscriber& sub, std::vector<std::string>& got) {
    for (int i = 0; i < 2 * kPerPublisher; ++i) {
      auto s = sub.receive(10s);
      if (!s.ok() || s->sequence() != static_cast<std::uint64_t>(i)) {
        ++failures;
        return;
      }
      got.push_back(text_of(*s));
    }
  };
  std::thread ta([&] { consume(*sub_a, got_a); });
  std::thread tb([&] { consume(*sub_b, got_b); });
  std::thread p1([&] { produce(*pub_1, 'a'); });
  std::thread p2([&] { produce(*pub_2, 'b'); });
  p1.join();
  p2.join();
  ta.join();
  tb.join();
  CHECK(failures == 0);
  CHECK(got_a.size() == 2 * kPerPublisher);
  CHECK(got_a == got_b);
  // Each publisher's own messages stay in its order.
  std::map<char, int> next{{'a', 0}, {'b', 0}};
  for (const auto& m : got_a) {
    CHECK(std::stoi(m.substr(1)) == next[m[0]]);
    ++next[m[0]];
  }
  CHECK(next['a'] == kPerPublisher);
  CHECK(next['b'] == kPerPublisher);
}

TEST_CASE("Topic grows while subscribers are attached", "[ring]") {
  const std::string topic = unique_topic("growth");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  REQUIRE(pub.ok());
  std::vector<std::size_t> sizes{8, 4096, 3 * 1024 * 1024 + 17, 16, 16 * 1024 * 1024, 64};
  std::atomic<bool> producer_ok{true};
  std::thread producer([&] {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      auto loan = pub->loan(sizes[i], 10s);
      if (!loan.ok()) {
        producer_ok = false;
        return;
      }
      auto* p = reinterpret_cast<unsigned char*>(loan->data().data());
      for (std::size_t b = 0; b < sizes[i]; ++b) p[b] = static_cast<unsigned char>((b * 31 + i) & 0xFF);
      if (!pub->publish(std::move(*loan), 10s).ok()) producer_ok = false;
    }
  });
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto s = sub->receive(10s);
    REQUIRE(s.ok());
    REQUIRE(s->size() == sizes[i]);
    const auto* p = reinterpret_cast<const unsigned char*>(s->data().data());
    bool exact = true;
    for (std::size_t b = 0; b < sizes[i]; ++b) exact &= p[b] == static_cast<unsigned char>((b * 31 + i) & 0xFF);
    CHECK(exact);
  }
  producer.join();
  CHECK(producer_ok);
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->largest_payload == 16 * 1024 * 1024);
}

TEST_CASE("Payload over the ceiling is refused", "[ring]") {
  const std::string topic = unique_topic("ceiling");
  PublisherOptions options = publisher_options(Mode::Lockstep);
  options.topic.max_payload = 1024;
  auto pub = Publisher::create(topic, options);
  REQUIRE(pub.ok());
  auto loan = pub->loan(1025);
  CHECK(loan.code() == ErrorCode::PayloadTooLarge);
  CHECK(loan.message().find("1024") != std::string::npos);
  CHECK(pub->loan(1024).ok());
}

TEST_CASE("A dropped loan is never delivered", "[ring]") {
  const std::string topic = unique_topic("dropped_loan");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  {
    auto loan = pub->loan(5);
    REQUIRE(loan.ok());
    std::memcpy(loan->data().data(), "half-", 5);
  }
  REQUIRE(pub->publish_copy(bytes_of("whole")).ok());
  auto s = sub->receive(1s);
  REQUIRE(s.ok());
  CHECK(text_of(*s) == "whole");
  CHECK(s->sequence() == 0);
}

TEST_CASE("Loans and held samples are limited", "[ring]") {
  const std::string topic = unique_topic("limits");
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  std::vector<Loan> loans;
  for (std::uint32_t i = 0; i < kMaxHeldPerParticipant; ++i) loans.push_back(std::move(pub->loan(1).value()));
  CHECK(pub->loan(1).code() == ErrorCode::LoanLimit);
  loans.clear();
  for (int i = 0; i < 4; ++i) REQUIRE(pub->publish_copy(bytes_of("m")).ok());
  std::vector<Sample> held;
  for (std::uint32_t i = 0; i < kMaxHeldPerParticipant; ++i) held.push_back(std::move(sub->receive(1s).value()));
  CHECK(sub->receive(10ms).code() == ErrorCode::LoanLimit);
}

TEST_CASE("Subscriber started before the publisher waits for it", "[ring]") {
  const std::string topic = unique_topic("early_subscriber");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  CHECK(sub->receive(20ms).code() == ErrorCode::Timeout);
  std::atomic<bool> published{false};
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    published = pub.ok() && pub->publish_copy(bytes_of("hello"), 5s).ok();
  });
  auto s = sub->receive(10s);
  late.join();
  CHECK(published);
  REQUIRE(s.ok());
  CHECK(text_of(*s) == "hello");
}

TEST_CASE("Late subscriber gets messages from then on", "[ring]") {
  const std::string topic = unique_topic("late_subscriber");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_copy(bytes_of("before")).ok());
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  REQUIRE(pub->publish_copy(bytes_of("after")).ok());
  auto s = sub->receive(1s);
  REQUIRE(s.ok());
  CHECK(text_of(*s) == "after");
  CHECK(s->sequence() == 1);
}

TEST_CASE("Cancel flag interrupts a wait", "[ring]") {
  std::atomic<bool> cancel{false};
  const std::string topic = unique_topic("cancel");
  SubscriberOptions options = subscriber_options(Role::Subscriber, WaitStrategy::Block);
  options.wait.cancel = &cancel;
  auto sub = Subscriber::create(topic, options);
  REQUIRE(sub.ok());
  std::thread canceller([&] {
    std::this_thread::sleep_for(30ms);
    cancel.store(true);
  });
  auto s = sub->receive(30s);
  canceller.join();
  CHECK(s.code() == ErrorCode::Interrupted);
}

TEST_CASE("Mode is fixed by the first publisher", "[ring]") {
  const std::string topic = unique_topic("mode");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  auto free_run = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
  REQUIRE(free_run.ok());
  CHECK(sub->mode() == Mode::FreeRun);
  auto lockstep = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  CHECK(lockstep.code() == ErrorCode::Incompatible);
  PublisherOptions other_depth = publisher_options(Mode::FreeRun, 64);
  CHECK(Publisher::create(topic, other_depth).code() == ErrorCode::Incompatible);
}

TEST_CASE("A topic a subscriber created takes the depth its first publisher asks for", "[ring]") {
  const std::string topic = unique_topic("provisional_depth");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  auto before = inspect_topic(topic);
  REQUIRE(before.ok());
  CHECK(before->depth == kDefaultDepth);
  CHECK_FALSE(before->mode_fixed);

  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 4));
  REQUIRE(pub.ok());
  CHECK(pub->depth() == 4);
  auto after = inspect_topic(topic);
  REQUIRE(after.ok());
  CHECK(after->depth == 4);
  CHECK(after->mode_fixed);
  // Lockstep with depth 4: four messages ahead of the subscriber, and no fifth.
  for (int i = 0; i < 4; ++i) REQUIRE(pub->publish_copy(bytes_of(std::to_string(i)), 0ms).ok());
  CHECK(pub->publish_copy(bytes_of("4"), 0ms).code() == ErrorCode::Timeout);
  for (int i = 0; i < 4; ++i) {
    auto s = sub->receive(1s);
    REQUIRE(s.ok());
    CHECK(text_of(*s) == std::to_string(i));
  }
  CHECK(pub->publish_copy(bytes_of("4"), 1s).ok());
  auto fifth = sub->receive(1s);
  REQUIRE(fifth.ok());
  CHECK(text_of(*fifth) == "4");

  // Fixed now: another depth is refused, saying which to ask for; none takes the topic's.
  auto other = Publisher::create(topic, publisher_options(Mode::Lockstep, 8));
  CHECK(other.code() == ErrorCode::Incompatible);
  CHECK_THAT(other.message(), Catch::Contains("exists with depth 4, not 8") && Catch::Contains("ask for depth 4"));
  auto any = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  REQUIRE(any.ok());
  CHECK(any->depth() == 4);
}

TEST_CASE("A publisher asking more depth than a subscriber created its topic with is told who created it and how to fix it",
          "[ring]") {
  const std::string topic = unique_topic("provisional_room");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 64));
  CHECK(pub.code() == ErrorCode::Incompatible);
  CHECK(pub.subject() == Subject::topic(topic));
  CHECK_THAT(pub.message(), Catch::Contains("created by a subscriber (pid " + std::to_string(::getpid())) &&
                                Catch::Contains("room for 16 messages") && Catch::Contains("start the publisher first"));
  // Nothing was fixed by the refused publisher: a fitting one still sets the depth.
  auto fitting = Publisher::create(topic, publisher_options(Mode::FreeRun, 2));
  REQUIRE(fitting.ok());
  CHECK(fitting->depth() == 2);
  CHECK(sub->mode() == Mode::FreeRun);
}
