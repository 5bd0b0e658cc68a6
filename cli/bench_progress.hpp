// SPDX-License-Identifier: Apache-2.0
#pragma once
// `cerulion bench`'s progress line on stderr, and the commit a report names. The repetitions
// themselves run in the bench library (bench/ping_runner.hpp).

#include <chrono>
#include <string>

#include "cerulion/bench/campaign.hpp"

namespace cerulion::cli {

/// A progress bar (cell, lane, size, repetition, rate, ETA) on a terminal, plain lines otherwise.
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
