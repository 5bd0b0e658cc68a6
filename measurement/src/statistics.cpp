// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cerulion::measurement {

double percentile_type7(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::size_t samples_to_quote(double p) {
  if (!(p > 0 && p < 1)) return 0;
  // Rounded to 1e-9 first: 1 - 0.9 is 0.09999999999999998, which would ask for 201.
  const double needed = static_cast<double>(kTailSamples) / (1 - p);
  return static_cast<std::size_t>(std::ceil(std::round(needed * 1e9) / 1e9));
}

bool quotable(std::size_t count, double p) { return count >= samples_to_quote(p); }

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = values.size();
  s.min = values.front();
  s.max = values.back();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.median = percentile_type7(values, 0.5);
  s.p90 = percentile_type7(values, 0.9);
  s.p99 = percentile_type7(values, 0.99);
  return s;
}

std::vector<double> to_microseconds(const std::vector<std::uint64_t>& samples_ns) {
  std::vector<double> us;
  us.reserve(samples_ns.size());
  for (auto ns : samples_ns) us.push_back(static_cast<double>(ns) / 1000.0);
  return us;
}

double median_of_medians(const std::vector<std::vector<double>>& repetitions) {
  std::vector<double> medians;
  for (const auto& r : repetitions) {
    if (!r.empty()) medians.push_back(summarize(r).median);
  }
  std::sort(medians.begin(), medians.end());
  return percentile_type7(medians, 0.5);
}

namespace {
std::vector<double> pooled(const std::vector<std::vector<double>>& repetitions) {
  std::vector<double> all;
  for (const auto& r : repetitions) all.insert(all.end(), r.begin(), r.end());
  return all;
}
}  // namespace

double pooled_percentile(const std::vector<std::vector<double>>& repetitions, double p) {
  std::vector<double> all = pooled(repetitions);
  std::sort(all.begin(), all.end());
  return percentile_type7(all, p);
}

Summary pooled_summary(const std::vector<std::vector<double>>& repetitions) { return summarize(pooled(repetitions)); }

}  // namespace cerulion::measurement
