// SPDX-License-Identifier: Apache-2.0
// The event queue the CLI and tests give components: what several threads report, in order, until
// drained, within a bound.

#include <catch2/catch.hpp>

#include <thread>

#include "cerulion/recording/events.hpp"

using namespace cerulion::recording;

TEST_CASE("An event queue keeps what several threads report, each thread's in order, until drained", "[recording][events]") {
  EventQueue queue;
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&queue, t] {
      for (int i = 0; i < kEach; ++i) report(&queue, EventKind::Warning, std::to_string(t), std::to_string(i));
    });
  }
  for (auto& t : threads) t.join();
  const auto events = queue.drain();
  REQUIRE(events.size() == kThreads * kEach);
  std::vector<int> next(kThreads, 0);
  for (const auto& e : events) {
    const int t = std::stoi(e.subject);
    CHECK(e.kind == EventKind::Warning);
    CHECK(e.realtime_ns > 0);
    CHECK(e.message == std::to_string(next[t]++));
  }
  CHECK(queue.drain().empty());  // drained is gone
  CHECK(queue.left_out() == 0);
}

TEST_CASE("An event queue nobody drains keeps the first events and counts those it had no room for", "[recording][events]") {
  EventQueue queue(3);
  for (int i = 0; i < 5; ++i) report(&queue, EventKind::Problem, "/t", std::to_string(i));
  const auto events = queue.drain();
  REQUIRE(events.size() == 3);
  CHECK(events.front().message == "0");
  CHECK(events.back().message == "2");
  CHECK(queue.left_out() == 2);
  report(&queue, EventKind::Info, "", "room again");
  CHECK(queue.drain().size() == 1);
}

TEST_CASE("Reporting to no sink does nothing, and kinds have names", "[recording][events]") {
  report(nullptr, EventKind::Problem, "/t", "nobody listens");
  CHECK(std::string(to_string(EventKind::Info)) == "info");
  CHECK(std::string(to_string(EventKind::Warning)) == "warning");
  CHECK(std::string(to_string(EventKind::Problem)) == "problem");
}
