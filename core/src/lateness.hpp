// SPDX-License-Identifier: Apache-2.0
#pragma once
// How late a thread's timed sleeps ended recently, shared by the adaptive wait strategy and the
// Pacer: both end their sleeps early by about this much and poll the rest.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cerulion::detail {

class LatenessRing {
 public:
  /// A timed sleep ended `late_ns` after the time it was asked to end.
  void note(std::uint64_t late_ns) noexcept {
    samples_[count_++ % kSamples] = static_cast<std::uint32_t>(std::min<std::uint64_t>(late_ns, kClampNs));
  }
  /// The second-largest of the recent samples: about the 95th percentile, robust to one outlier;
  /// `assumed` until `trusted_after` samples exist.
  [[nodiscard]] double high(double assumed, std::size_t trusted_after = 4) const noexcept {
    const std::size_t n = std::min(count_, kSamples);
    if (n < trusted_after) return assumed;
    std::uint32_t first = 0, second = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (samples_[i] > first) {
        second = first;
        first = samples_[i];
      } else if (samples_[i] > second) {
        second = samples_[i];
      }
    }
    return static_cast<double>(second);
  }

 private:
  static constexpr std::size_t kSamples = 32;
  static constexpr std::uint64_t kClampNs = 50'000'000;
  std::size_t count_ = 0;
  std::uint32_t samples_[kSamples] = {};
};

}  // namespace cerulion::detail
