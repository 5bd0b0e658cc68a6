// SPDX-License-Identifier: Apache-2.0
#pragma once
// Waiting for a holder of shared state (the topic lock, a publish on the single-publisher fast
// path) that keeps it for microseconds unless its process stopped or died: the one pacing both
// waits use.

#include <cstdint>

#include "cerulion/core/options.hpp"  // monotonic_ns
#include "futex.hpp"                  // cpu_relax

namespace cerulion::detail {

class HolderWatch {
 public:
  static constexpr std::uint32_t kSpins = 1000;
  static constexpr std::uint64_t kCheckEveryNs = 10'000'000;
  static constexpr std::uint64_t kStuckAfterNs = 2'000'000'000;

  /// Called once per round of the wait. The first kSpins rounds spin (and return false); after
  /// that, true once every kCheckEveryNs: time to check that the holder is still alive.
  bool check_due() {
    if (spins_ < kSpins) {
      ++spins_;
      cpu_relax();
      return false;
    }
    now_ = monotonic_ns();
    if (start_ == 0) start_ = now_;
    if (now_ < next_check_) return false;
    next_check_ = now_ + kCheckEveryNs;
    return true;
  }
  /// Whether the holder, alive, has kept it for over kStuckAfterNs (as of the last check_due).
  bool stuck() const { return now_ - start_ > kStuckAfterNs; }
  /// Whether the wait is past its spinning rounds (and should sleep between checks).
  bool spun() const { return spins_ >= kSpins; }

 private:
  std::uint32_t spins_ = 0;
  std::uint64_t start_ = 0;
  std::uint64_t now_ = 0;
  std::uint64_t next_check_ = 0;
};

}  // namespace cerulion::detail
