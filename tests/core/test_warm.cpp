// SPDX-License-Identifier: Apache-2.0
// The per-thread warm set (core/src/warm.hpp): what a waiting thread keeps in its cache.

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "helpers.hpp"
#include "process.hpp"
#include "warm.hpp"

using namespace cerulion;
using namespace cerulion::test;
using cerulion::detail::WarmSet;
using cerulion::detail::WarmTicket;
using cerulion::detail::Access;

TEST_CASE("Warm set keeps one entry per owner and gives the oldest away when full", "[warm]") {
  WarmSet set;
  WarmTicket first;
  set.enroll(first);
  CHECK(set.holds(first));
  CHECK(set.enrolled() == 1);
  std::vector<WarmTicket> others(WarmSet::kEntries - 1);
  for (auto& t : others) set.enroll(t);
  CHECK(set.enrolled() == WarmSet::kEntries);
  for (const auto& t : others) CHECK(set.holds(t));

  SECTION("a new owner takes an old one's entry, and the old ticket no longer holds it") {
    WarmTicket newcomer;
    set.enroll(newcomer);
    CHECK(set.holds(newcomer));
    CHECK_FALSE(set.holds(first));
    CHECK(set.enrolled() == WarmSet::kEntries);
  }
  SECTION("a released entry is free for the next owner, and a stale release changes nothing") {
    set.release(first);
    CHECK_FALSE(set.holds(first));
    CHECK(set.enrolled() == WarmSet::kEntries - 1);
    set.release(first);
    CHECK(set.enrolled() == WarmSet::kEntries - 1);
    WarmTicket next;
    set.enroll(next);
    CHECK(next.index == first.index);
    for (const auto& t : others) CHECK(set.holds(t));
  }
  SECTION("a ticket of another set is not held") {
    WarmSet other;
    CHECK_FALSE(other.holds(first));
  }
}

TEST_CASE("Warming never faults on memory that is gone", "[warm]") {
  enum class Line : std::uint32_t { First, Second };
  WarmSet set;
  WarmTicket ticket;
  set.enroll(ticket);
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  set.set_line(ticket, Line::First, page, Access::Write);
  set.set_line(ticket, Line::Second, static_cast<char*>(page) + 64, Access::Read);
  set.warm();
  REQUIRE(munmap(page, 4096) == 0);
  set.warm();  // prefetching an unmapped address is a no-op, not a fault
  set.set_line(ticket, Line::First, nullptr, Access::Read);
  set.warm();
  CHECK(set.holds(ticket));  // and reaching this line means no prefetch faulted
}

namespace {

/// What the checks made on threads of a test's own found wrong: Catch2's assertions belong to the
/// test's thread, so these threads note their failures and the test asserts none after the join.
class Noted {
 public:
  /// Notes `what` unless `ok`; returns `ok`, so that a thread can stop where a REQUIRE would.
  bool check(bool ok, const std::string& what) {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mutex_);
      failed_.push_back(what);
    }
    return ok;
  }
  std::vector<std::string> failed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> failed_;
};

}  // namespace

TEST_CASE("Publishers and subscribers enrol in the thread that uses them", "[warm]") {
  const std::string topic = unique_topic("warm");
  Noted noted;
  std::thread([&] {
    const WarmSet& mine = WarmSet::of_this_thread();
    noted.check(mine.enrolled() == 0, "a new thread starts with no entries");
    {
      auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
      auto sub = Subscriber::create(topic, subscriber_options());
      if (!noted.check(pub.ok() && sub.ok(), "the publisher and the subscriber are created")) return;
      noted.check(mine.enrolled() == 0, "joining alone enrols nothing");
      if (!noted.check(pub->publish_copy(bytes_of("hot"), std::chrono::seconds(1)).ok(), "'hot' is published")) return;
      noted.check(mine.enrolled() == 1, "publishing enrols the publisher");
      auto got = sub->receive(std::chrono::seconds(1));
      if (!noted.check(got.ok(), "'hot' is received")) return;
      noted.check(text_of(*got) == "hot", "what is received is 'hot'");
      noted.check(mine.enrolled() == 2, "receiving enrols the subscriber");
      warm_caches();
      // A second thread using them enrols them there too, and leaves this thread's entries alone.
      std::thread([&] {
        noted.check(pub->publish_copy(bytes_of("again"), std::chrono::seconds(1)).ok(),
                    "'again' is published from a second thread");
        noted.check(WarmSet::of_this_thread().enrolled() == 1, "the second thread enrols the publisher");
      }).join();
      noted.check(mine.enrolled() == 2, "the second thread leaves the first one's entries alone");
    }
    // Leaving frees the entries the owners still hold: the subscriber's. The publisher's ticket
    // went to the second thread, so its old entry here stays until reused (a stale entry only
    // costs a prefetch).
    noted.check(mine.enrolled() == 1, "leaving frees the subscriber's entry");
    warm_caches();
  }).join();
  CHECK(noted.failed() == std::vector<std::string>{});
}

TEST_CASE("A subscriber of messages a page or larger keeps the next one's payload warm", "[warm]") {
  // Each large message is on a page of its own, whose translation is gone after an idle gap.
  auto [size, enrolled] = GENERATE(std::pair<std::size_t, bool>{8192, true}, std::pair<std::size_t, bool>{64, false});
  const std::string topic = unique_topic("warm_payload");
  Noted noted;
  std::thread([&, size = size, enrolled = enrolled] {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
    auto sub = Subscriber::create(topic, subscriber_options());
    if (!noted.check(pub.ok() && sub.ok(), "the publisher and the subscriber are created")) return;
    const std::vector<std::byte> payload(size, std::byte{7});
    for (int i = 0; i < 3; ++i) {
      if (!noted.check(pub->publish_copy(payload, std::chrono::seconds(1)).ok(), "three messages are published")) return;
    }
    if (!noted.check(sub->receive(std::chrono::seconds(1)).ok(), "the first message is received")) return;
    const WarmSet before_second = WarmSet::of_this_thread();
    auto second = sub->receive(std::chrono::seconds(1));
    if (!noted.check(second.ok(), "the second message is received")) return;
    // The publisher's own lines are in its own mapping of the topic: never the subscriber's address.
    noted.check(before_second.has_line(second->data().data()) == enrolled,
                enrolled ? "the next payload's line is enrolled" : "a small payload's line is not enrolled");
  }).join();
  CHECK(noted.failed() == std::vector<std::string>{});
}

namespace {

CERULION_HOT_PATH int a_message_loop_of_our_own(int x) { return x + 1; }

bool in_hot_text(const void* code) {
  const auto* address = static_cast<const char*>(code);
  return address >= __start_cerulion_hot_text && address < __stop_cerulion_hot_text;
}

}  // namespace

TEST_CASE("Message path code sits in the section the warm set reads", "[warm]") {
  // warm_caches() reads this section's lines, so code left outside it goes cold between messages.
  REQUIRE(+__start_cerulion_hot_text < +__stop_cerulion_hot_text);
  CHECK(in_hot_text(reinterpret_cast<const void*>(&cerulion::warm_caches)));
  CHECK(in_hot_text(reinterpret_cast<const void*>(&a_message_loop_of_our_own)));
  CHECK(a_message_loop_of_our_own(1) == 2);
  cerulion::warm_caches();  // reading the section never faults
}
