// SPDX-License-Identifier: Apache-2.0
#pragma once
// How `cerulion bench` runs one repetition: `cerulion ping` in fresh processes (it starts its own
// pong), its JSON and raw samples read back; and the progress line on stderr.

#include <chrono>
#include <string>

#include "cerulion/bench/campaign.hpp"

namespace cerulion::cli {

class BenchRunner {
 public:
  explicit BenchRunner(std::string domain);
  /// One repetition; a crash, a timeout or bad output is an error naming the lane.
  Result<bench::Repetition> run(const bench::RepetitionRequest& request);

 private:
  std::string domain_;
  unsigned sequence_ = 0;
};

/// A progress bar (lane, size, repetition, ETA) on a terminal, plain lines otherwise.
class ProgressDisplay {
 public:
  ProgressDisplay();
  void show(const bench::Progress& progress);
  void finish();

 private:
  bool tty_ = false;
  bool drew_ = false;
  std::chrono::steady_clock::time_point started_;
};

/// The commit this binary was built from ("" when unknown).
std::string build_commit();

}  // namespace cerulion::cli
