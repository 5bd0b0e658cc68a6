// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include <catch2/catch.hpp>

#include "cerulion/measurement/rate_window.hpp"

using namespace cerulion::measurement;
using Approx = Catch::Detail::Approx;

namespace {
constexpr std::uint64_t kMs = 1'000'000;
}

TEST_CASE("A rate window reports the rate and the spread of its messages' periods", "[measurement][rate]") {
  RateWindow w(100);
  // Periods of 8, 10 and 12 ms: mean 10 ms, population std dev sqrt(8/3) ms.
  const std::uint64_t times[] = {0, 8 * kMs, 18 * kMs, 30 * kMs};
  for (std::uint64_t i = 0; i < 4; ++i) w.add(i, times[i]);
  const RateReport r = w.report();
  CHECK(r.rate_hz == Approx(100));
  CHECK(r.min_period_s == Approx(0.008));
  CHECK(r.max_period_s == Approx(0.012));
  CHECK(r.std_dev_s == Approx(std::sqrt(8.0 / 3.0) * 1e-3));
  CHECK(r.window == 3);
  CHECK(r.new_messages == 4);
}

TEST_CASE("A rate window spreads a gap in the sequence over the messages it missed", "[measurement][rate]") {
  RateWindow w(100);
  w.add(0, 0);
  w.add(4, 40 * kMs);  // three missed: one period of 10 ms, not 40
  const RateReport r = w.report();
  CHECK(r.rate_hz == Approx(100));
  CHECK(r.window == 1);
  CHECK(r.new_messages == 2);
}

TEST_CASE("A rate window keeps only its last periods", "[measurement][rate]") {
  RateWindow w(2);
  w.add(0, 0);
  w.add(1, 100 * kMs);  // falls out of the window
  w.add(2, 110 * kMs);
  w.add(3, 120 * kMs);
  const RateReport r = w.report();
  CHECK(r.window == 2);
  CHECK(r.rate_hz == Approx(100));
  CHECK(r.max_period_s == Approx(0.010));
}

TEST_CASE("A rate window reports no rate before two messages, and counts new messages per report",
          "[measurement][rate]") {
  RateWindow w(10);
  RateReport r = w.report();
  CHECK(r.rate_hz == 0);
  CHECK(r.window == 0);
  CHECK(r.new_messages == 0);
  w.add(7, 5 * kMs);
  r = w.report();
  CHECK(r.rate_hz == 0);
  CHECK(r.new_messages == 1);
  w.add(8, 15 * kMs);
  r = w.report();
  CHECK(r.rate_hz == Approx(100));
  CHECK(r.new_messages == 1);  // counted afresh since the previous report
}

TEST_CASE("A rate window adds no period for a message older than the previous one", "[measurement][rate]") {
  RateWindow w(10);
  w.add(5, 50 * kMs);
  w.add(3, 30 * kMs);  // a reordered or restarted sequence: no negative or false period
  w.add(4, 40 * kMs);
  const RateReport r = w.report();
  CHECK(r.window == 1);
  CHECK(r.rate_hz == Approx(100));
  CHECK(r.new_messages == 3);
}
