// SPDX-License-Identifier: Apache-2.0
// A ping report's figures: round trips and request legs in µs, and an alternating run's halves.

#include <catch2/catch.hpp>

#include "cerulion/measurement/ping.hpp"

using namespace cerulion::measurement;
using Approx = Catch::Detail::Approx;

TEST_CASE("A ping report's figures are its round trips in µs, with request legs where it has them",
          "[measurement][ping]") {
  PingReport report;
  report.samples_ns = {3000, 1000, 2000};
  SECTION("without request legs") {
    const PingFigures f = figures_of(report);
    CHECK(f.round_trip_us.count == 3);
    CHECK(f.round_trip_us.median == Approx(2.0));
    CHECK(f.round_trip_us.min == Approx(1.0));
    CHECK_FALSE(f.request_one_way_us);
    CHECK_FALSE(f.alternate);
  }
  SECTION("with request legs") {
    report.request_legs_ns = {500, 1500};
    const PingFigures f = figures_of(report);
    REQUIRE(f.request_one_way_us);
    CHECK(f.request_one_way_us->median == Approx(1.0));
  }
}

TEST_CASE("An alternating run's figures split its round trips by how they waited, counting the warm-up",
          "[measurement][ping]") {
  PingReport report;
  report.options.alternate_wait_set = true;
  report.samples_ns = {1000, 4000, 1000, 4000, 1000};
  SECTION("an even warm-up: the first measured round trip waited on the topics") {
    report.options.warmup = 2;
    const PingFigures f = figures_of(report);
    REQUIRE(f.alternate);
    CHECK(f.alternate->direct_us.count == 3);
    CHECK(f.alternate->wait_set_us.count == 2);
    CHECK(f.alternate->median_ratio == Approx(4.0));
  }
  SECTION("an odd warm-up: the first measured round trip waited through the wait sets") {
    report.options.warmup = 1;
    const PingFigures f = figures_of(report);
    REQUIRE(f.alternate);
    CHECK(f.alternate->direct_us.count == 2);
    CHECK(f.alternate->direct_us.median == Approx(4.0));
    CHECK(f.alternate->median_ratio == Approx(0.25));
  }
  SECTION("no direct round trip: the ratio is 0, not a division by zero") {
    report.options.warmup = 1;
    report.samples_ns = {1000};
    const PingFigures f = figures_of(report);
    REQUIRE(f.alternate);
    CHECK(f.alternate->median_ratio == 0);
  }
}
