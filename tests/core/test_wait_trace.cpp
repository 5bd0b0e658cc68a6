// SPDX-License-Identifier: Apache-2.0
// WaitOptions::trace: a wait that did not find its message at once writes where it stood when the
// message came, for each strategy and for a wait set; one that found it at once writes nothing.

#include <catch2/catch.hpp>

#include <thread>

#include "cerulion/core/wait_trace.hpp"
#include "helpers.hpp"

using namespace cerulion;
using namespace cerulion::test;
using namespace std::chrono_literals;

namespace {

/// Receives through `receive` a message published from another thread 20 ms after the wait began,
/// until a wait wrote the trace (a receiver held off the CPU past the publish finds the message at
/// once; three tries make that all but impossible). Returns the trace of that wait.
template <typename Receive>
WaitTrace traced_wait(Publisher& pub, WaitTrace& trace, Receive&& receive) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    trace = {};
    // Catch2's assertions belong to the test's thread: the publisher only says whether it published.
    bool published = false;
    std::thread later([&] {
      std::this_thread::sleep_for(20ms);
      published = pub.publish(std::uint64_t{7}).ok();
    });
    const std::uint64_t before = monotonic_ns();
    receive();
    later.join();
    REQUIRE(published);
    if (trace.phase != WaitPhase::None) {
      CHECK(trace.start_ns >= before);
      CHECK(trace.ready_ns >= trace.start_ns);
      return trace;
    }
  }
  FAIL("no wait wrote its trace");
  return trace;
}

}  // namespace

TEST_CASE("A traced wait says in which phase its message came", "[wait_trace]") {
  const auto strategy = GENERATE(WaitStrategy::Block, WaitStrategy::Spin, WaitStrategy::Adaptive);
  const std::string topic = unique_topic("wait_trace");
  WaitTrace trace;
  SubscriberOptions options = subscriber_options(Role::Subscriber, strategy);
  options.wait.trace = &trace;
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun)).value();
  auto sub = Subscriber::create(topic, options).value();

  const WaitTrace seen = traced_wait(pub, trace, [&] { REQUIRE(sub.receive(5s).ok()); });
  switch (strategy) {
    case WaitStrategy::Block:
      CHECK(seen.phase == WaitPhase::Block);
      CHECK(seen.blocked_ns == seen.start_ns);
      break;
    case WaitStrategy::Spin:
      CHECK(seen.phase == WaitPhase::Poll);
      break;
    case WaitStrategy::Adaptive:
      // Nothing learnt yet: a short poll, then a block that the publish wakes.
      CHECK(seen.phase == WaitPhase::Block);
      CHECK(seen.poll_until_ns > seen.start_ns);
      CHECK(seen.blocked_ns >= seen.poll_until_ns);
      CHECK(seen.wake_at_ns == 0);
      break;
  }

  SECTION("a message there when the receive begins leaves the trace unwritten") {
    REQUIRE(pub.publish(std::uint64_t{8}).ok());
    trace = {};
    REQUIRE(sub.receive(5s).ok());
    CHECK(trace.phase == WaitPhase::None);
  }
}

TEST_CASE("A traced wait set says in which phase its message came", "[wait_trace]") {
  const std::string topic = unique_topic("wait_trace_set");
  WaitTrace trace;
  WaitOptions wait = wait_options(WaitStrategy::Block);
  wait.trace = &trace;
  WaitSet set(wait);
  auto pub = Publisher::create(topic, publisher_options(Mode::FreeRun)).value();
  auto sub = Subscriber::create(topic).value();
  REQUIRE(set.add(sub).ok());
  const WaitTrace seen = traced_wait(pub, trace, [&] { REQUIRE(set.receive(5s).ok()); });
  CHECK(seen.phase == WaitPhase::Block);
}
