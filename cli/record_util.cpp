// SPDX-License-Identifier: Apache-2.0
#include "record_util.hpp"

#include <ctime>

#include <fmt/core.h>

namespace cerulion::cli {

std::string format_time_ns(std::uint64_t ns) {
  std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000ull);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:09d}Z", buf, ns % 1'000'000'000ull);
}

std::string format_duration_ns(std::uint64_t ns) { return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9); }

}  // namespace cerulion::cli
