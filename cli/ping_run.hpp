// SPDX-License-Identifier: Apache-2.0
#pragma once
// `cerulion ping`'s run: the measurement library's run_ping with what the CLI adds (a pong
// process started from this binary, the flashback keeper), its errors turned into Exit.

#include <optional>

#include "cerulion/measurement/ping.hpp"
#include "cerulion/measurement/ping_summary.hpp"
#include "ping_flashback.hpp"

namespace cerulion::cli {

struct PingRun {
  measurement::PingReport report;
  std::optional<measurement::PingKeeperFigures> keeper;  ///< with flashback
};

/// Runs the measurement; with `flashback`, a keeper taps both topics meanwhile. Throws Exit on
/// setup errors (CLI boundary code).
PingRun run_ping(const measurement::PingOptions& options, bool flashback);

}  // namespace cerulion::cli
