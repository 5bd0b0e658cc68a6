// SPDX-License-Identifier: Apache-2.0
#pragma once
// Statistics of round-trip samples as docs/benchmark-method.md defines them: Hyndman-Fan type 7
// percentiles (numpy's default), a summary, and the aggregates of a campaign's repetitions.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cerulion::measurement {

/// Percentile of ascending `sorted` values, Hyndman-Fan type 7: linear interpolation between the
/// closest ranks at h = (n - 1) p. `p` in [0, 1]; 0 for no values.
[[nodiscard]] double percentile_type7(const std::vector<double>& sorted, double p);

/// Samples that must lie beyond a tail percentile before it is quoted (docs/benchmark-method.md): with
/// fewer, the "p99" of a handful of samples is only their largest.
inline constexpr std::size_t kTailSamples = 20;
/// The fewest samples for which percentile `p` (in (0, 1)) has kTailSamples beyond it: 2000 for
/// the 99th, 200 for the 90th.
[[nodiscard]] std::size_t samples_to_quote(double p);
/// Whether `count` samples are enough to quote percentile `p`.
[[nodiscard]] bool quotable(std::size_t count, double p);

/// min/median/mean/p90/p99/max of a sample set, in the samples' unit.
struct Summary {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, p99 = 0, max = 0;
};
[[nodiscard]] Summary summarize(std::vector<double> values);

/// Nanosecond samples as microseconds (the unit reports print).
[[nodiscard]] std::vector<double> to_microseconds(const std::vector<std::uint64_t>& samples_ns);

/// The campaign's headline: the median (type 7) of each repetition's median. Repetitions
/// without samples are left out; 0 when none has any.
[[nodiscard]] double median_of_medians(const std::vector<std::vector<double>>& repetitions);

/// Percentile `p` of all repetitions' samples taken together (the campaign's p99).
[[nodiscard]] double pooled_percentile(const std::vector<std::vector<double>>& repetitions, double p);

/// The summary of all repetitions' samples taken together.
[[nodiscard]] Summary pooled_summary(const std::vector<std::vector<double>>& repetitions);

}  // namespace cerulion::measurement
