// SPDX-License-Identifier: Apache-2.0
// The machine's floor for a round trip between two processes (bench::measure_floor,
// bench/floor.hpp: one shared page, nothing else on the path). cerulion's figures are read against
// it (docs/benchmark-method.md, docs/performance.md). A developer's tool; not installed.
//   floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]
// Prints one line: the wait, the rate, the round trips and their min/median/p99 in µs. One round
// trip before them is not measured; scripts/footprint.sh counts on there being samples + 1.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cerulion/bench/floor.hpp"

namespace {

int usage(const std::string& why) {
  std::fprintf(stderr, "floor-pingpong: %s\nusage: floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  cerulion::bench::FloorOptions options;
  std::string cpus = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--help" || option == "-h") {
      std::printf("usage: floor-pingpong [--wait futex|spin] [--rate HZ] [--samples N] [--cpus auto|none|A,B]\n");
      return 0;
    }
    if (i + 1 >= argc) return usage("'" + option + "' needs a value");
    const std::string value = argv[++i];
    char* end = nullptr;
    if (option == "--wait" && (value == "futex" || value == "spin")) {
      options.spin = value == "spin";
    } else if (option == "--rate") {
      options.rate_hz = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || options.rate_hz < 0) return usage("--rate is a number of Hz (0: back to back)");
    } else if (option == "--samples") {
      const long samples = std::strtol(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || samples < 1 || samples > 100'000'000) {
        return usage("--samples is a positive count");
      }
      options.samples = static_cast<std::uint32_t>(samples);
    } else if (option == "--cpus") {
      cpus = value;
    } else {
      return usage("bad option or value: " + option + " " + value);
    }
  }
  auto plan = cerulion::measurement::parse_cpu_plan(cpus);
  if (!plan) return usage(plan.message());
  options.cpus = *plan;
  auto s = cerulion::bench::measure_floor(options);
  if (!s) {
    std::fprintf(stderr, "floor-pingpong: %s\n", s.message().c_str());
    return 1;
  }
  std::printf("floor wait=%s rate=%g cpus=%s samples=%zu min_us=%.3f median_us=%.3f p99_us=%.3f\n",
              options.spin ? "spin" : "futex", options.rate_hz, cerulion::measurement::describe(*plan).c_str(), s->count,
              s->min, s->median, s->p99);
  return 0;
}
