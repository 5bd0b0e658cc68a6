// SPDX-License-Identifier: Apache-2.0
// The stall trigger's decision on made-up clocks: a topic stalls when its publishers fall silent
// after a steady rate, once per silence, and never merely because the keeper stored late.

#include <catch2/catch.hpp>

#include "stall_watch.hpp"
#include "time_units.hpp"

using cerulion::flashback::detail::ChannelActivity;
using cerulion::flashback::detail::StallWatch;

using cerulion::test::kSecondNs;

namespace {

/// A topic publishing at `rate_hz`, looked at every `look_ns` by a keeper that stores what was
/// published `store_lag_ns` ago (0: as it comes).
struct SimulatedTopic {
  double rate_hz = 10;
  std::uint64_t store_lag_ns = 0;
  std::uint64_t started_ns = 100 * kSecondNs;
  std::uint64_t stopped_ns = UINT64_MAX;  // publishers' last moment
  bool tapped = true;

  std::uint64_t published_by(std::uint64_t t) const {
    const std::uint64_t end = std::min(t, stopped_ns);
    if (end < started_ns) return 0;
    return static_cast<std::uint64_t>(static_cast<double>(end - started_ns) * rate_hz / 1e9) + 1;
  }
  std::uint64_t log_time_of(std::uint64_t n) const {  // of the n-th message, 1-based
    return started_ns + static_cast<std::uint64_t>(static_cast<double>(n - 1) * 1e9 / rate_hz);
  }
  ChannelActivity at(std::uint64_t t) const {
    ChannelActivity a;
    a.topic = "/imu";
    a.stored = t >= store_lag_ns ? published_by(t - store_lag_ns) : 0;
    if (tapped) a.published = published_by(t);
    a.last_stored_realtime_ns = a.stored ? log_time_of(a.stored) : 0;
    a.rate_hz = a.stored > 1 ? rate_hz : 0;
    return a;
  }
};

/// The times at which looking every `step_ns` from `from_ns` to `to_ns` reported a stall.
std::vector<std::uint64_t> stalls_seen(StallWatch& watch, const SimulatedTopic& topic, std::uint64_t from_ns,
                                       std::uint64_t to_ns, std::uint64_t step_ns = 50'000'000) {
  std::vector<std::uint64_t> at;
  for (std::uint64_t t = from_ns; t <= to_ns; t += step_ns) {
    if (watch.look(0, topic.at(t), t)) at.push_back(t);
  }
  return at;
}

}  // namespace

TEST_CASE("A topic whose publishers stop after a steady rate stalls once, the stall time after its last message") {
  StallWatch watch(1.0);
  SimulatedTopic topic;
  topic.stopped_ns = topic.started_ns + 5 * kSecondNs;
  const auto stalls = stalls_seen(watch, topic, topic.started_ns, topic.started_ns + 20 * kSecondNs);
  REQUIRE(stalls.size() == 1);
  const std::uint64_t last_message = topic.log_time_of(topic.published_by(topic.stopped_ns));
  CHECK(stalls[0] >= last_message + kSecondNs);
  CHECK(stalls[0] <= last_message + kSecondNs + 100'000'000);
}

TEST_CASE("A stall's description names the topic, its silence and the rate it had") {
  StallWatch watch(1.0);
  SimulatedTopic topic;
  topic.stopped_ns = topic.started_ns + 5 * kSecondNs;
  std::optional<std::string> line;
  for (std::uint64_t t = topic.started_ns; t <= topic.started_ns + 10 * kSecondNs && !line; t += 50'000'000) {
    line = watch.look(0, topic.at(t), t);
  }
  REQUIRE(line);
  CHECK(*line == "/imu silent for 1.0 s (it had 10.0 Hz)");
}

TEST_CASE("A topic stored late by a starved keeper never stalls while its publishers publish") {
  StallWatch watch(1.0);
  SimulatedTopic topic;
  SECTION("a keeper that lags steadily by more than the stall time") { topic.store_lag_ns = 3 * kSecondNs; }
  SECTION("a keeper that stores nothing for ten stall times, then catches up") {}
  const std::uint64_t frozen_from = topic.started_ns + 3 * kSecondNs, frozen_to = frozen_from + 10 * kSecondNs;
  for (std::uint64_t t = topic.started_ns; t <= topic.started_ns + 30 * kSecondNs; t += 50'000'000) {
    auto a = topic.at(t);
    if (topic.store_lag_ns == 0 && t >= frozen_from && t < frozen_to) {
      a.stored = topic.published_by(frozen_from);
      a.last_stored_realtime_ns = topic.log_time_of(a.stored);
    }
    INFO("at " << (t - topic.started_ns) / 1e9 << " s, " << a.stored << " stored of " << *a.published);
    REQUIRE_FALSE(watch.look(0, a, t));
  }
}

TEST_CASE("A late keeper's silence counts from the last publish it saw, not from the last message it stored") {
  StallWatch watch(1.0);
  SimulatedTopic topic;
  topic.store_lag_ns = 2 * kSecondNs;  // stores what was published 2 s ago
  topic.stopped_ns = topic.started_ns + 10 * kSecondNs;
  const auto stalls = stalls_seen(watch, topic, topic.started_ns, topic.started_ns + 30 * kSecondNs);
  REQUIRE(stalls.size() == 1);
  // Stored messages stop moving 2 s after the publishers did, and the stall comes 1 s after that
  // at the latest; never while the published count still moved.
  CHECK(stalls[0] >= topic.stopped_ns + kSecondNs);
  CHECK(stalls[0] <= topic.stopped_ns + 2 * kSecondNs + kSecondNs + 100'000'000);
}

TEST_CASE("A topic not tapped is judged by what the store took") {
  StallWatch watch(1.0);
  SimulatedTopic topic;
  topic.tapped = false;
  topic.stopped_ns = topic.started_ns + 5 * kSecondNs;
  CHECK(stalls_seen(watch, topic, topic.started_ns, topic.started_ns + 20 * kSecondNs).size() == 1);
}

TEST_CASE("A topic that stalled and came back stalls again when it stops again") {
  StallWatch watch(1.0);
  SimulatedTopic first;
  first.stopped_ns = first.started_ns + 5 * kSecondNs;
  CHECK(stalls_seen(watch, first, first.started_ns, first.started_ns + 10 * kSecondNs).size() == 1);
  // Resumes at +10 s, where its count left off, and stops again at +15 s.
  SimulatedTopic second = first;
  const std::uint64_t before = first.published_by(first.stopped_ns);
  second.started_ns = first.started_ns + 10 * kSecondNs;
  second.stopped_ns = second.started_ns + 5 * kSecondNs;
  std::vector<std::uint64_t> stalls;
  for (std::uint64_t t = second.started_ns; t <= second.started_ns + 10 * kSecondNs; t += 50'000'000) {
    auto a = second.at(t);
    a.stored += before;
    *a.published += before;
    if (watch.look(0, a, t)) stalls.push_back(t);
  }
  REQUIRE(stalls.size() == 1);
  CHECK(stalls[0] >= second.stopped_ns + kSecondNs);
}

TEST_CASE("A topic that sends now and then, or has sent only a few messages, never stalls") {
  StallWatch watch(2.0);
  SimulatedTopic topic;
  SECTION("a rate giving fewer than three messages in the stall time") {
    topic.rate_hz = 1;
    topic.stopped_ns = topic.started_ns + 30 * kSecondNs;
  }
  SECTION("fewer than ten messages before it stopped") {
    topic.rate_hz = 10;
    topic.stopped_ns = topic.started_ns + 500'000'000;
  }
  CHECK(stalls_seen(watch, topic, topic.started_ns, topic.started_ns + 60 * kSecondNs).empty());
}

TEST_CASE("Channels are watched apart: one stalling says nothing of another") {
  StallWatch watch(1.0);
  SimulatedTopic stops, keeps;
  stops.stopped_ns = stops.started_ns + 3 * kSecondNs;
  int stalls_of_stops = 0, stalls_of_keeps = 0;
  for (std::uint64_t t = stops.started_ns; t <= stops.started_ns + 10 * kSecondNs; t += 50'000'000) {
    if (watch.look(1, stops.at(t), t)) ++stalls_of_stops;
    if (watch.look(2, keeps.at(t), t)) ++stalls_of_keeps;
  }
  CHECK(stalls_of_stops == 1);
  CHECK(stalls_of_keeps == 0);
}
