#pragma once
// Summary statistics of round-trip samples, as benchmark-method.md defines them.

#include <cstdint>
#include <string>
#include <vector>

namespace cerulion::cli {

/// Percentile of sorted values with the Hyndman-Fan type 7 definition (linear interpolation
/// between closest ranks; numpy's default). `p` in [0, 1].
double percentile_type7(const std::vector<double>& sorted, double p);

/// min/median/mean/p90/p99/max of a sample set, in the samples' unit.
struct LatencySummary {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, p99 = 0, max = 0;
};
LatencySummary summarize(std::vector<double> values);

/// Writes samples as little-endian u64 nanoseconds; false (and errno set) on failure.
bool write_samples_le_u64(const std::string& path, const std::vector<std::uint64_t>& samples_ns);

}  // namespace cerulion::cli
