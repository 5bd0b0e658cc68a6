// SPDX-License-Identifier: Apache-2.0
// cerulion::Pacer and spin_until (cerulion/core/pacing.hpp). Only what holds however slow the
// machine is: never early, never stuck; how punctual it is shows in docs/performance.md.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "cerulion/core/options.hpp"
#include "cerulion/core/pacing.hpp"

TEST_CASE("A pacer returns at its deadline, not before, and at once for one already past", "[pacing]") {
  cerulion::Pacer pacer;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t deadline = cerulion::monotonic_ns() + 2'000'000;
    REQUIRE(pacer.sleep_until(deadline));
    CHECK(cerulion::monotonic_ns() >= deadline);
  }
  CHECK(pacer.lead_ns() >= 50'000);
  CHECK(pacer.lead_ns() <= 2'000'000);
  const std::uint64_t past = cerulion::monotonic_ns() - 1'000'000;
  CHECK(pacer.sleep_until(past));
}

TEST_CASE("A pacer returns false at once when its cancel flag is set", "[pacing]") {
  cerulion::Pacer pacer;
  std::atomic<bool> cancel{true};
  const std::uint64_t deadline = cerulion::monotonic_ns() + 5'000'000'000;
  CHECK_FALSE(pacer.sleep_until(deadline, &cancel));
  CHECK(cerulion::monotonic_ns() < deadline);
}

TEST_CASE("spin_until returns at its deadline, not before", "[pacing]") {
  const std::uint64_t deadline = cerulion::monotonic_ns() + 300'000;
  cerulion::spin_until(deadline);
  CHECK(cerulion::monotonic_ns() >= deadline);
}

TEST_CASE("A pacer's long sleep ends when another thread sets its cancel flag", "[pacing]") {
  // No signal interrupts this sleep: only the pacer's own looks at the flag can end it early.
  cerulion::Pacer pacer;
  std::atomic<bool> cancel{false};
  const std::uint64_t deadline = cerulion::monotonic_ns() + 30'000'000'000;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    cancel.store(true);
  });
  CHECK_FALSE(pacer.sleep_until(deadline, &cancel));
  CHECK(cerulion::monotonic_ns() < deadline);
  setter.join();
}
