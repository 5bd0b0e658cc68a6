// SPDX-License-Identifier: Apache-2.0
// Several processes on one topic, and processes that die at the worst moment (kill -9).

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "helpers.hpp"
#include "mapped_control.hpp"  // white box: to fake a lock holder that died
#include "child.hpp"
#include "process.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;


TEST_CASE("Messages cross processes in order", "[process]") {
  const std::string topic = unique_topic("fork_delivery");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  Child child([&](Child&) {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    if (!pub.ok()) return 1;
    if (!pub->wait_for_subscribers(1, 5s).ok()) return 2;
    for (int i = 0; i < 500; ++i) {
      if (!pub->publish_copy(bytes_of("p" + std::to_string(i)), 10s).ok()) return 3;
    }
    return 0;
  });
  for (int i = 0; i < 500; ++i) {
    auto s = sub->receive(10s);
    REQUIRE(s.ok());
    CHECK(text_of(*s) == "p" + std::to_string(i));
    CHECK(s->publisher_pid() != static_cast<std::uint32_t>(getpid()));
  }
  CHECK(child.join() == 0);
}

TEST_CASE("Publisher killed mid loan leaves others working and nothing half written", "[process]") {
  const std::string topic = unique_topic("kill_mid_loan");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  Child child([&](Child& self) {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    if (!pub.ok()) return 1;
    auto a = pub->loan(4);
    auto b = pub->loan(4);  // every loan it may hold
    if (!a.ok() || !b.ok()) return 2;
    std::memcpy(a->data().data(), "HALF", 4);
    self.signal_ready();
    pause();
    return 0;
  });
  REQUIRE(child.wait_ready());
  child.kill9();
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
  REQUIRE(pub.ok());
  // Enough messages to cycle every slot, the dead one's included.
  std::atomic<int> published{0};  // Catch2 assertions are for the main thread only
  std::thread producer([&] {
    for (int i = 0; i < 200; ++i) {
      if (!pub->publish_copy(bytes_of("ok" + std::to_string(i)), 5s).ok()) return;
      ++published;
    }
  });
  for (int i = 0; i < 200; ++i) {
    auto s = sub->receive(5s);
    REQUIRE(s.ok());
    CHECK(text_of(*s) == "ok" + std::to_string(i));
  }
  producer.join();
  CHECK(published == 200);
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->count(Role::Publisher, false) == 1);  // the dead one was evicted
}

TEST_CASE("Subscriber killed while holding a sample does not stall lockstep", "[process]") {
  const std::string topic = unique_topic("kill_holding");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 2));
  REQUIRE(pub.ok());
  Child child([&](Child& self) {
    auto sub = Subscriber::create(topic, subscriber_options());
    if (!sub.ok()) return 1;
    self.signal_ready();
    auto held = sub->receive(10s);  // then holds it for ever and never takes another
    if (!held.ok()) return 2;
    self.signal_ready();
    pause();
    return 0;
  });
  REQUIRE(child.wait_ready());
  REQUIRE(pub->publish_copy(bytes_of("first"), 5s).ok());
  REQUIRE(child.wait_ready());
  REQUIRE(pub->publish_copy(bytes_of("second"), 5s).ok());
  // Ring full of messages the (stuck) subscriber has not released: the publisher waits...
  CHECK(pub->loan(1, 100ms).code() == ErrorCode::Timeout);
  child.kill9();
  // ...until the dead subscriber is evicted (well within a second).
  auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) REQUIRE(pub->publish_copy(bytes_of("after"), 3s).ok());
  CHECK(std::chrono::steady_clock::now() - started < 3s);
  CHECK(pub->subscriber_count() == 0);
}

TEST_CASE("Publisher killed at random moments never corrupts the stream", "[process]") {
  const std::string topic = unique_topic("kill_random");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  std::uint64_t last_seq = 0;
  bool first = true;
  for (int round = 0; round < 5; ++round) {
    Child child([&](Child& self) {
      auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
      if (!pub.ok()) return 1;
      self.signal_ready();
      for (std::uint64_t i = 0;; ++i) {
        auto loan = pub->loan(64);
        if (!loan.ok()) return 2;
        // Every payload is 64 copies of one byte: a torn one would be visible.
        std::memset(loan->data().data(), static_cast<int>('a' + i % 26), 64);
        if (!pub->publish(std::move(*loan)).ok()) return 3;
      }
    });
    REQUIRE(child.wait_ready());
    for (int i = 0; i < 100; ++i) {
      auto s = sub->receive(5s);
      REQUIRE(s.ok());
      REQUIRE(s->size() == 64);
      const auto* p = reinterpret_cast<const char*>(s->data().data());
      CHECK(std::all_of(p, p + 64, [&](char c) { return c == p[0]; }));
      if (!first) CHECK(s->sequence() > last_seq);
      last_seq = s->sequence();
      first = false;
    }
    child.kill9();
  }
  // A fresh publisher still works after five violent deaths.
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
  REQUIRE(pub.ok());
  REQUIRE(pub->publish_copy(bytes_of("alive")).ok());
  for (;;) {
    auto s = sub->receive(5s);
    REQUIRE(s.ok());
    if (text_of(*s) == "alive") break;
  }
}

TEST_CASE("Topic lock held by a dead process is taken over", "[process]") {
  const std::string topic = unique_topic("dead_lock_holder");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(pub.ok());
  REQUIRE(sub.ok());
  // A child takes the topic lock the way the library does (its pid in the lock word) and dies
  // holding it, as a publisher killed mid-publish would.
  Child child([&](Child&) {
    MappedControl control(topic);
    if (!control.valid()) return 1;
    std::uint32_t expected = 0;
    if (!control->lock_word.compare_exchange_strong(expected, static_cast<std::uint32_t>(getpid()))) return 3;
    return 0;  // exits holding the lock
  });
  REQUIRE(child.join() == 0);
  auto started = std::chrono::steady_clock::now();
  REQUIRE(pub->publish_copy(bytes_of("after the holder died"), 5s).ok());
  CHECK(std::chrono::steady_clock::now() - started < 1s);
  auto s = sub->receive(1s);
  REQUIRE(s.ok());
  CHECK(text_of(*s) == "after the holder died");
}

TEST_CASE("Participant of another pid namespace is never evicted", "[process]") {
  // A container sharing /dev/shm has pids that mean nothing here: its participants must not be
  // judged dead just because their pid does not exist in our namespace.
  const std::string topic = unique_topic("other_namespace");
  auto foreign = Subscriber::create(topic, subscriber_options());
  REQUIRE(foreign.ok());
  int fd = ::shm_open(segment_name(default_domain(), topic).c_str(), O_RDWR, 0);
  REQUIRE(fd >= 0);
  void* base = ::mmap(nullptr, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(base != MAP_FAILED);
  const auto* config = static_cast<const cerulion::detail::Config*>(base);
  auto* records = reinterpret_cast<cerulion::detail::Participant*>(static_cast<char*>(base) +
                                                                   config->participants_offset);
  cerulion::detail::Participant* record = nullptr;
  for (std::uint32_t i = 0; i < kMaxParticipants; ++i) {
    if (records[i].state.load() == cerulion::detail::kActive) record = &records[i];
  }
  REQUIRE(record != nullptr);
  record->pid = 4'194'000;            // no such pid here
  record->pid_namespace = 0x7fff0001;  // and another namespace
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));  // sweeps
  REQUIRE(pub.ok());
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->count(Role::Subscriber) == 1);
  // The same record in our own namespace is dead and goes.
  record->pid_namespace = 0;
  auto sweeper = Publisher::create(topic, publisher_options(Mode::FreeRun, std::nullopt));
  REQUIRE(sweeper.ok());
  info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->count(Role::Subscriber, false) == 0);
  ::munmap(base, 65536);
}

TEST_CASE("Whoever evicts a dead participant leaves a record of who died, in what role, and who noticed",
          "[process]") {
  const std::string topic = unique_topic("death_log");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  auto member = [&](Role role) {
    return std::make_unique<Child>([&, role](Child& self) {
      if (role == Role::Publisher) {
        auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
        if (!pub.ok()) return 1;
        self.signal_ready();
        pause();
      } else {
        SubscriberOptions options = subscriber_options();
        options.role = role;
        auto reader = Subscriber::create(topic, options);
        if (!reader.ok()) return 1;
        self.signal_ready();
        pause();
      }
      return 0;
    });
  };
  std::vector<std::pair<Role, std::uint32_t>> died;
  for (Role role : {Role::Publisher, Role::Tap, Role::Subscriber, Role::Publisher}) {
    auto child = member(role);
    REQUIRE(child->wait_ready());
    died.emplace_back(role, static_cast<std::uint32_t>(child->pid()));
    child->kill9();
    // Joining sweeps the dead out: the eviction this test makes happen (a waiting reader's would do).
    auto joined = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
    REQUIRE(joined.ok());
  }
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->deaths_total == died.size());
  REQUIRE(info->deaths.size() == died.size());
  for (std::size_t i = 0; i < died.size(); ++i) {
    CHECK(info->deaths[i].number == i + 1);
    CHECK(info->deaths[i].role == died[i].first);
    CHECK(info->deaths[i].pid == died[i].second);
    CHECK(info->deaths[i].noticed_by == static_cast<std::uint32_t>(getpid()));
    CHECK(info->deaths[i].noticed_realtime_ns > 0);
  }
  CHECK(info->count(Role::Publisher, false) == 0);  // evicted: in the record, no longer a participant
}

TEST_CASE("The death record keeps the most recent deaths when more die than it holds", "[process]") {
  const std::string topic = unique_topic("death_log_wraps");
  auto sub = Subscriber::create(topic, subscriber_options());
  REQUIRE(sub.ok());
  const std::size_t deaths = kMaxParticipants + 3;
  std::vector<std::uint32_t> pids;
  for (std::size_t i = 0; i < deaths; ++i) {
    Child child([&](Child& self) {
      auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt));
      if (!pub.ok()) return 1;
      self.signal_ready();
      pause();
      return 0;
    });
    REQUIRE(child.wait_ready());
    pids.push_back(static_cast<std::uint32_t>(child.pid()));
    child.kill9();
    REQUIRE(Publisher::create(topic, publisher_options(Mode::Lockstep, std::nullopt)).ok());
  }
  auto info = inspect_topic(topic);
  REQUIRE(info.ok());
  CHECK(info->deaths_total == deaths);
  REQUIRE(info->deaths.size() == kMaxParticipants);
  CHECK(info->deaths.front().pid == pids[deaths - kMaxParticipants]);
  CHECK(info->deaths.back().pid == pids.back());
  CHECK(info->deaths.back().number == deaths);
}

TEST_CASE("A publisher whose short waits for room time out again and again still evicts a dead subscriber",
          "[process]") {
  const std::string topic = unique_topic("short_waits");
  auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep, 2));
  REQUIRE(pub.ok());
  Child subscriber([&](Child& self) {
    auto sub = Subscriber::create(topic, subscriber_options());
    if (!sub.ok()) return 1;
    self.signal_ready();
    for (;;) std::this_thread::sleep_for(1s);
  });
  REQUIRE(subscriber.wait_ready());
  subscriber.kill9();
  // The ring fills: the dead subscriber never releases what it was sent.
  REQUIRE(pub->publish_copy(bytes_of("a"), 0ms).ok());
  REQUIRE(pub->publish_copy(bytes_of("b"), 0ms).ok());
  // Every wait is far shorter than the housekeeping interval; the dead subscriber goes all the same.
  bool published = false;
  for (int attempt = 0; attempt < 500 && !published; ++attempt) {
    published = pub->publish_copy(bytes_of("c"), 10ms).ok();
  }
  CHECK(published);
}
