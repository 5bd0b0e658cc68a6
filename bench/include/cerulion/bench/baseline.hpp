// SPDX-License-Identifier: Apache-2.0
#pragma once
// Comparing a campaign with an earlier one's JSON: a ratio per cell, and a regression when one of
// cerulion's own lanes got slower than the tolerance allows (a check for users' CI).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cerulion/core/status.hpp"

namespace cerulion::bench {

struct CellComparison {
  std::string lane;
  std::uint64_t size = 0;
  double baseline_us = 0;
  double current_us = 0;
  double ratio = 0;         ///< current / baseline
  bool regressed = false;   ///< a native lane slower than the tolerance
};

/// Parses `text` as a bench JSON (InvalidArgument saying why it is not one) and compares every
/// cell measured in both. Native lanes whose ratio exceeds `tolerance` are regressions.
Result<std::vector<CellComparison>> compare_with_baseline(const nlohmann::ordered_json& current,
                                                          const std::string& baseline_text, double tolerance);

}  // namespace cerulion::bench
