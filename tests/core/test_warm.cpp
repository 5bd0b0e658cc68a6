// SPDX-License-Identifier: Apache-2.0
// The per-thread warm set (core/src/warm.hpp): what a waiting thread keeps in its cache.

#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <thread>

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

TEST_CASE("Publishers and subscribers enrol in the thread that uses them", "[warm]") {
  const std::string topic = unique_topic("warm");
  std::thread([&] {
    const WarmSet& mine = WarmSet::of_this_thread();
    REQUIRE(mine.enrolled() == 0);
    {
      auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
      auto sub = Subscriber::create(topic, subscriber_options());
      REQUIRE(pub.ok());
      REQUIRE(sub.ok());
      CHECK(mine.enrolled() == 0);  // joining alone enrols nothing
      REQUIRE(pub->publish_copy(bytes_of("hot"), std::chrono::seconds(1)).ok());
      CHECK(mine.enrolled() == 1);
      auto got = sub->receive(std::chrono::seconds(1));
      REQUIRE(got.ok());
      CHECK(text_of(*got) == "hot");
      CHECK(mine.enrolled() == 2);
      warm_caches();
      // A second thread using them enrols them there too, and leaves this thread's entries alone.
      std::thread([&] {
        REQUIRE(pub->publish_copy(bytes_of("again"), std::chrono::seconds(1)).ok());
        CHECK(WarmSet::of_this_thread().enrolled() == 1);
      }).join();
      CHECK(mine.enrolled() == 2);
    }
    // Leaving frees the entries the owners still hold: the subscriber's. The publisher's ticket
    // went to the second thread, so its old entry here stays until reused (a stale entry only
    // costs a prefetch).
    CHECK(mine.enrolled() == 1);
    warm_caches();
  }).join();
}

TEST_CASE("A subscriber of messages a page or larger keeps the next one's payload warm", "[warm]") {
  // Each large message is on a page of its own, whose translation is gone after an idle gap.
  auto [size, enrolled] = GENERATE(std::pair<std::size_t, bool>{8192, true}, std::pair<std::size_t, bool>{64, false});
  const std::string topic = unique_topic("warm_payload");
  std::thread([&, size = size, enrolled = enrolled] {
    auto pub = Publisher::create(topic, publisher_options(Mode::Lockstep));
    auto sub = Subscriber::create(topic, subscriber_options());
    REQUIRE((pub.ok() && sub.ok()));
    const std::vector<std::byte> payload(size, std::byte{7});
    for (int i = 0; i < 3; ++i) REQUIRE(pub->publish_copy(payload, std::chrono::seconds(1)).ok());
    REQUIRE(sub->receive(std::chrono::seconds(1)).ok());
    const WarmSet before_second = WarmSet::of_this_thread();
    auto second = sub->receive(std::chrono::seconds(1));
    REQUIRE(second.ok());
    // The publisher's own lines are in its own mapping of the topic: never the subscriber's address.
    CHECK(before_second.has_line(second->data().data()) == enrolled);
  }).join();
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
