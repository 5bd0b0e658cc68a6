// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "cerulion/measurement/statistics.hpp"

using namespace cerulion::measurement;
using Approx = Catch::Detail::Approx;

TEST_CASE("Type 7 percentiles interpolate linearly between the closest ranks", "[measurement][statistics]") {
  const std::vector<double> v{1, 2, 3, 4};
  CHECK(percentile_type7(v, 0.5) == Approx(2.5));   // h = 1.5
  CHECK(percentile_type7(v, 0.99) == Approx(3.97)); // h = 2.97
  CHECK(percentile_type7(v, 0.9) == Approx(3.7));   // h = 2.7
  CHECK(percentile_type7(v, 0.25) == Approx(1.75)); // h = 0.75
}

TEST_CASE("Percentile 0 is the minimum and percentile 1 the maximum", "[measurement][statistics]") {
  const std::vector<double> v{10, 20, 40, 80};
  CHECK(percentile_type7(v, 0.0) == 10);
  CHECK(percentile_type7(v, 1.0) == 80);
}

TEST_CASE("A single value is every percentile and no value gives zero", "[measurement][statistics]") {
  const std::vector<double> one{7};
  for (double p : {0.0, 0.5, 0.99, 1.0}) CHECK(percentile_type7(one, p) == 7);
  CHECK(percentile_type7({}, 0.5) == 0);
}

TEST_CASE("A summary sorts its samples and gives min, median, mean, p90, p99 and max", "[measurement][statistics]") {
  // 10..100 in steps of 10, shuffled; n = 10 so h = 9p.
  const Summary s = summarize({30, 10, 100, 50, 20, 90, 40, 70, 60, 80});
  CHECK(s.count == 10);
  CHECK(s.min == 10);
  CHECK(s.max == 100);
  CHECK(s.mean == Approx(55));
  CHECK(s.median == Approx(55));  // h = 4.5: between 50 and 60
  CHECK(s.p90 == Approx(91));     // h = 8.1: 90 + 0.1 * 10
  CHECK(s.p99 == Approx(99.1));   // h = 8.91: 90 + 0.91 * 10
  CHECK(summarize({}).count == 0);
}

TEST_CASE("Nanosecond samples convert to microseconds", "[measurement][statistics]") {
  const auto us = to_microseconds({1'000, 2'500, 40});
  REQUIRE(us.size() == 3);
  CHECK(us[0] == Approx(1.0));
  CHECK(us[1] == Approx(2.5));
  CHECK(us[2] == Approx(0.04));
}

TEST_CASE("The median of medians is the median of each repetition's median", "[measurement][statistics]") {
  // Medians 2, 10 and 5.5: their median is 5.5 (the pooled median would be 5).
  const std::vector<std::vector<double>> reps{{1, 2, 3}, {10, 10, 10}, {5, 6}};
  CHECK(median_of_medians(reps) == Approx(5.5));
  // An even number of repetitions interpolates; empty repetitions are left out.
  CHECK(median_of_medians({{1}, {}, {4}}) == Approx(2.5));
  CHECK(median_of_medians({}) == 0);
}

TEST_CASE("Pooled percentiles take every repetition's samples together", "[measurement][statistics]") {
  const std::vector<std::vector<double>> reps{{4, 1}, {3}, {2}};
  CHECK(pooled_percentile(reps, 0.5) == Approx(2.5));
  CHECK(pooled_percentile(reps, 0.99) == Approx(3.97));
  const Summary s = pooled_summary(reps);
  CHECK(s.count == 4);
  CHECK(s.min == 1);
  CHECK(s.max == 4);
  CHECK(s.mean == Approx(2.5));
}

TEST_CASE("A tail percentile is quotable once 20 samples lie beyond it", "[measurement][statistics]") {
  CHECK(samples_to_quote(0.99) == 2000);
  CHECK(samples_to_quote(0.9) == 200);
  CHECK(samples_to_quote(0.999) == 20000);
  CHECK_FALSE(quotable(1999, 0.99));
  CHECK(quotable(2000, 0.99));
  CHECK_FALSE(quotable(3, 0.9));
  CHECK(quotable(200, 0.9));
}
