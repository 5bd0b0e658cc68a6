// SPDX-License-Identifier: Apache-2.0
#pragma once
// Comparing a campaign with an earlier one (read back with read_json_report): a finding per cell
// in both, and a regression when one of cerulion's own lanes got slower than the tolerance allows,
// fails now, or could keep only a lower rate than before (a check for users' CI). Medians measured
// at different rates are not compared: the rate changes what a round trip costs.

#include <cstdint>
#include <string>
#include <vector>

#include "cerulion/bench/campaign.hpp"

namespace cerulion::bench {

enum class Finding {
  Compared,     ///< measured in both at the same rate, within the tolerance (or not a cerulion lane)
  Slower,       ///< measured in both at the same rate, slower than the tolerance allows
  Fails,        ///< fails now
  Unavailable,  ///< the lane is unavailable now
  FellBack,     ///< measured now, at a lower rate than the baseline's
  RateDiffers,  ///< measured now at a higher rate than the baseline's: not compared
  Measured,     ///< measured now; failed or unavailable in the baseline
};
const char* to_string(Finding finding) noexcept;

struct CellComparison {
  std::string lane;
  std::uint64_t size = 0;
  Finding finding = Finding::Compared;
  bool native = false;      ///< one of cerulion's own lanes
  bool regressed = false;   ///< fails the check: Slower, Fails, Unavailable or FellBack on a native lane
  CellStatus baseline_status = CellStatus::Ok, current_status = CellStatus::Ok;
  double baseline_us = 0, current_us = 0;  ///< medians (0 when not measured)
  double ratio = 0;                        ///< current / baseline when both were measured
  double baseline_rate_hz = 0, current_rate_hz = 0;
  bool current_fell_back = false;  ///< measured now at a lower rate than the campaign asked
  std::string reason;       ///< why the current cell failed or is unavailable
};

struct BaselineComparison {
  std::vector<CellComparison> cells;   ///< the current campaign's cells that the baseline has, in order
  /// This campaign ran cerulion cells, but none of them could be checked against the baseline
  /// (other lanes, sizes or rates): the check checked nothing, and fails.
  bool nothing_checked = false;
  [[nodiscard]] bool regressed() const;
};

/// Compares every cell of `current` with the same lane and size in `baseline`.
[[nodiscard]] BaselineComparison compare_with_baseline(const CampaignResult& current, const CampaignResult& baseline,
                                                       double tolerance);

/// One line for a cell: "native-multi 64 B: 4.16 µs @100 Hz -> 5.30 µs @20 Hz  FELL BACK (...)".
[[nodiscard]] std::string describe(const CellComparison& cell, double tolerance);
/// What fails the check, in one phrase ("2 cerulion cells slower than 1.25x, 1 failing"); "" when
/// nothing does.
[[nodiscard]] std::string regression_summary(const BaselineComparison& comparison, double tolerance);

}  // namespace cerulion::bench
