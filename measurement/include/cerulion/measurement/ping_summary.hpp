// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `cerulion ping --json` prints about a run, and what `cerulion bench` reads back from the
// ping it started: one type, written and read by the same code. Figures are in µs, rounded as
// printed (to the nanosecond; percentages to a hundredth); a tail percentile of too few round trips
// is absent (null), since it would only be their largest.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cerulion/core/status.hpp"
#include "cerulion/measurement/ping.hpp"
#include "cerulion/measurement/slow_phases.hpp"
#include "cerulion/measurement/tail_explain.hpp"

namespace cerulion::measurement {

/// What a flashback keeper run beside the measurement (`ping --flashback`) cost and kept.
struct PingKeeperFigures {
  double cpu_pct = 0;              ///< of the measured phase
  std::uint64_t rss_bytes = 0;     ///< peak
  std::uint64_t messages = 0;      ///< taken on both topics
  std::uint64_t lost = 0;
  std::uint64_t memory_bytes = 0;  ///< held in its store at the end
  double compression_ratio = 1;
};

struct PingSummary {
  // The run as asked.
  std::uint64_t size_bytes = 0;
  double rate_hz = 0;
  std::uint64_t warmup = 0;
  std::string process;    ///< "multi" / "single"
  std::string transport;
  std::string mode;
  std::string wait;
  std::optional<int> cpu_ping, cpu_pong;
  // What happened.
  std::uint64_t count = 0;  ///< measured round trips
  std::uint64_t skipped_slots = 0;
  std::uint64_t lost = 0;
  struct RoundTrip {
    double min = 0, median = 0, mean = 0, max = 0;
    std::optional<double> p90, p99;  ///< absent until enough round trips lie beyond them
  } rtt_us;
  struct Leg {
    double min = 0, median = 0, max = 0;
  };
  std::optional<Leg> request_one_way_us;  ///< where the transport reports request legs
  double cpu_pct_ping = 0, cpu_pct_pong = 0;
  bool cpu_pong_resolved = true;
  bool peer_may_share_cpu = false;
  std::uint64_t rss_ping = 0, rss_pong = 0;
  bool pong_gone = false;
  struct Alternate {
    double direct_median_us = 0, wait_set_median_us = 0;
    std::uint64_t direct_count = 0, wait_set_count = 0;
    double ratio = 0;
  };
  std::optional<Alternate> alternate;  ///< an alternating run's halves
  bool flashback = false;
  std::optional<PingKeeperFigures> keeper;  ///< with flashback
  std::optional<TailBreakdown> tail;        ///< with explain_tail: explain_tail() of the run
  std::optional<SlowPhases> phases;         ///< with explain_tail: find_slow_phases() of the run
};

/// The summary of a run (its figures from figures_of()), with a keeper's figures where one ran.
[[nodiscard]] PingSummary summary_of(const PingReport& report, const PingFigures& figures,
                                     const std::optional<PingKeeperFigures>& keeper = std::nullopt);

/// One line of JSON, without a newline.
[[nodiscard]] std::string to_json(const PingSummary& summary);

/// Reads to_json()'s output: the last line of `text` that is a JSON object (a program's whole
/// stdout may be given). InvalidArgument saying what is missing or malformed.
[[nodiscard]] Result<PingSummary> ping_summary_from_json(std::string_view text);

}  // namespace cerulion::measurement
