#include "latency_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace cerulion::cli {

double percentile_type7(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double h = (static_cast<double>(sorted.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

LatencySummary summarize(std::vector<double> values) {
  LatencySummary s;
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

bool write_samples_le_u64(const std::string& path, const std::vector<std::uint64_t>& samples_ns) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = true;
  for (std::uint64_t v : samples_ns) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    ok &= std::fwrite(b, 1, 8, f) == 8;
  }
  ok &= std::fclose(f) == 0;
  return ok;
}

}  // namespace cerulion::cli
