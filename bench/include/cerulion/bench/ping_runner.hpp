// SPDX-License-Identifier: Apache-2.0
#pragma once
// How `cerulion bench` runs one repetition: `cerulion ping` in fresh processes (it starts its own
// pong, and a flashback keeper where asked), its summary (measurement/ping_summary.hpp) and raw
// samples read back. A campaign's RepetitionRunner:
//
//   bench::PingRunner runner({.domain = "default", .cancel = cerulion::stop_on_signals()});
//   auto result = bench::run_campaign(settings, lanes, [&](const auto& r) { return runner.run(r); });
//
// Each ping leads a process group of its own, with its pong, keeper and RouDi in it, and dies with
// the thread that started it; a stopped or timed-out ping is asked to stop (SIGTERM: it stops its
// helpers and removes its topics and its keeper's store), then its whole group is killed. Raw
// samples pass through an unlinked file, so a killed campaign leaves no file behind.

#include <atomic>
#include <chrono>
#include <string>

#include "cerulion/bench/campaign.hpp"
#include "cerulion/measurement/child_process.hpp"

namespace cerulion::bench {

struct PingRunnerOptions {
  /// The cerulion binary that runs `ping` (this very program by default).
  std::string program = measurement::kThisProgram;
  std::string domain = "default";
  /// Set (Ctrl-C): the running repetition is stopped and run() returns Interrupted.
  const std::atomic<bool>* cancel = nullptr;
  /// How long a ping asked to stop may take to clean up before its group is killed.
  std::chrono::nanoseconds stop_grace = std::chrono::seconds(3);
};

class PingRunner {
 public:
  explicit PingRunner(PingRunnerOptions options);
  /// One repetition; a crash, a timeout or bad output is an error naming what happened,
  /// Interrupted when the cancel flag stopped it.
  Result<Repetition> run(const RepetitionRequest& request);

 private:
  PingRunnerOptions options_;
  unsigned sequence_ = 0;
};

}  // namespace cerulion::bench
