// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two options every example takes, so a script can run it briefly:
//   --count N    stop after N messages (default: no limit)
//   --seconds S  stop after S seconds (default: until Ctrl-C or SIGTERM)

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cerulion/core/options.hpp>

namespace example {

struct Args {
  std::uint64_t count = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  bool finished(std::uint64_t done) const {
    return (count > 0 && done >= count) || std::chrono::steady_clock::now() >= deadline;
  }
  /// How long a wait may last before the time is up: a receive given it returns Timeout then.
  cerulion::Timeout remaining() const {
    if (deadline == std::chrono::steady_clock::time_point::max()) return std::nullopt;
    return std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration::zero());
  }
};

inline Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (i + 1 < argc && option == "--count") {
      args.count = std::strtoull(argv[++i], nullptr, 10);
    } else if (i + 1 < argc && option == "--seconds") {
      const std::chrono::duration<double> seconds(std::strtod(argv[++i], nullptr));
      args.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(seconds);
    } else {
      std::fprintf(stderr, "usage: %s [--count N] [--seconds S]\n", argv[0]);
      std::exit(2);
    }
  }
  return args;
}

}  // namespace example
