// SPDX-License-Identifier: Apache-2.0
#pragma once
// The latency campaign of docs/benchmark-method.md: for every lane and payload size,
// R repetitions (each in fresh processes) of warm-up then N round trips on a slot grid; the cell's
// median is the median of the repetition medians, its percentiles are pooled over all samples, and a
// cell that skips more than 1 % of its slots falls back 100 -> 50 -> 20 Hz, then fails.
//
// The campaign does not measure by itself: a RepetitionRunner runs one repetition (the binary
// starts `cerulion ping` for it), so a lane that crashes or hangs fails its cell and nothing else.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cerulion/bench/lanes.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion::bench {

/// What to measure. Defaults: the quick campaign (plan_campaign says how long it takes).
struct CampaignSettings {
  std::vector<std::string> lanes;  ///< empty: every available lane
  std::vector<std::uint64_t> sizes = {64, 1u << 20, 16u << 20};
  unsigned repetitions = 3;
  std::uint64_t samples = 500;     ///< measured round trips per repetition
  std::uint64_t warmup = 100;
  double rate_hz = 100;
  std::string wait = "adaptive";   ///< wait strategy of the native lanes
  bool flashback = true;           ///< a flashback keeper on the native lanes
  /// Rates tried in turn when a cell skips too many slots (the first is rate_hz).
  std::vector<double> fallback_rates = {50, 20};
  /// Skipped slots above this fraction fail the repetition at that rate.
  double max_skipped_fraction = 0.01;
  std::uint64_t headline_size = 64;
  /// Where raw samples go ("" = not kept): one file per cell and repetition.
  std::string samples_dir;
  /// Starting one repetition's processes (ping, pong, keeper, a daemon), for the plan's estimate.
  double startup_s = 0.5;
};

/// How long a campaign takes, from its settings alone: cells x repetitions x (warm-up + round
/// trips) / rate + start-up, before a single process starts.
struct CampaignPlan {
  std::size_t cells = 0;        ///< lane x size cells to measure (available lanes only)
  unsigned repetitions = 0;
  double rate_hz = 0;
  double repetition_s = 0;      ///< one repetition at the asked rate, start-up included
  double expected_s = 0;        ///< every cell kept at the asked rate
  double lowest_rate_hz = 0;    ///< the last fallback
  /// Every cell falling back to the lowest rate, after a failed repetition at each rate above it.
  double all_fall_back_s = 0;
};
CampaignPlan plan_campaign(const CampaignSettings& settings, const std::vector<Lane>& lanes);
/// One repetition at `rate_hz`, start-up included.
double repetition_seconds(const CampaignSettings& settings, double rate_hz);
/// "18 cells (6 lanes x 3 sizes) x 3 repetitions x (100 warm-up + 500) round trips at 100 Hz, plus
/// start-up: about 5 min 33 s; about 29 min if every cell falls back to 20 Hz".
std::string describe_plan(const CampaignPlan& plan, const CampaignSettings& settings, std::size_t lanes);
/// "45 s", "5 min 33 s", "1 h 02 min".
std::string duration_text(double seconds);

/// The full campaign's sizes (64 B to 16 MiB) and counts.
CampaignSettings full_campaign();

/// One repetition as a runner reports it.
struct Repetition {
  std::vector<std::uint64_t> samples_ns;
  std::uint64_t skipped_slots = 0;
  std::uint64_t lost = 0;
  double achieved_rate_hz = 0;
  double cpu_pct_ping = 0, cpu_pct_pong = 0;
  std::uint64_t rss_ping = 0, rss_pong = 0;
};

/// What a runner is asked for.
struct RepetitionRequest {
  const Lane* lane = nullptr;
  std::uint64_t size = 64;
  double rate_hz = 100;
  std::uint64_t samples = 500;
  std::uint64_t warmup = 100;
  std::string wait;
  bool flashback = true;
  std::string samples_path;   ///< "" = do not keep raw samples
};

/// Runs one repetition in fresh processes. An error fails the cell with its message as reason;
/// Interrupted (Ctrl-C) ends the campaign.
using RepetitionRunner = std::function<Result<Repetition>(const RepetitionRequest&)>;

enum class CellStatus { Ok, Failed, Unavailable };
const char* to_string(CellStatus status) noexcept;

/// One lane at one size.
struct Cell {
  std::string lane;
  std::uint64_t size = 0;
  CellStatus status = CellStatus::Ok;
  std::string reason;                 ///< why failed / unavailable
  double rate_hz = 0;                 ///< the rate measured at (after any fallback)
  bool fell_back = false;
  std::vector<double> repetition_medians_us;
  double median_us = 0;               ///< median of the repetition medians
  double p90_us = 0, p99_us = 0, max_us = 0, min_us = 0;  ///< pooled over every sample
  bool p99_quotable = false;          ///< at least 20 samples beyond the 99th percentile
  std::uint64_t samples = 0;
  std::uint64_t skipped_slots = 0;
  std::uint64_t lost = 0;
  double achieved_rate_hz = 0;
  double cpu_pct_ping = 0, cpu_pct_pong = 0;  ///< mean over repetitions
  std::uint64_t rss_ping = 0, rss_pong = 0;   ///< peak over repetitions
  std::vector<std::string> samples_files;
};

/// Where the campaign is, for a progress display: counted in cells, whose number is known before
/// the first starts and stays the same however many rates a cell needs.
struct Progress {
  std::string lane;
  std::uint64_t size = 0;
  unsigned repetition = 0;   ///< 1-based
  unsigned repetitions = 0;
  double rate_hz = 0;
  bool fallback = false;     ///< measuring at a lower rate than asked
  std::size_t cell = 0;      ///< 1-based: the cell being measured
  std::size_t cells = 0;     ///< cells to measure (available lanes x sizes)
  double planned_done_s = 0; ///< the plan's seconds of the repetitions run so far, fallbacks included
  /// The plan's seconds still ahead, this repetition included: the rest of this cell at its
  /// current rate, the cells after it at the asked rate.
  double planned_left_s = 0;
};

struct CampaignResult {
  CampaignSettings settings;
  std::vector<Lane> lanes;   ///< as resolved (available or not)
  std::vector<Cell> cells;   ///< lane-major, sizes in order
  std::uint64_t started_realtime_ns = 0;
  double duration_s = 0;
  /// The runner said Interrupted: `cells` holds the cells finished before, the rest were not run.
  bool interrupted = false;
};

/// The lanes a campaign will run: `wanted` (all known when empty) with their availability.
/// InvalidArgument naming an unknown lane.
Result<std::vector<Lane>> resolve_lanes(const std::vector<std::string>& wanted, const std::vector<Lane>& known);

/// Runs the campaign. Unavailable lanes get Unavailable cells; a repetition that fails fails its
/// cell, and the campaign goes on; one that is interrupted ends it.
CampaignResult run_campaign(const CampaignSettings& settings, const std::vector<Lane>& lanes,
                            const RepetitionRunner& runner, const std::function<void(const Progress&)>& progress = {});

/// The lanes that were available and measured nothing: every cell failed. Each is the lane's
/// first failed cell (its reason says why). What a campaign was asked for and did not give.
std::vector<Cell> lanes_without_results(const CampaignResult& result);

/// Raw samples file name of a cell's repetition: "<lane>_<size>B_rep<k>.u64le".
std::string samples_file_name(const std::string& lane, std::uint64_t size, unsigned repetition);

}  // namespace cerulion::bench
