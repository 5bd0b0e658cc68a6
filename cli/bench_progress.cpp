// SPDX-License-Identifier: Apache-2.0
#include "bench_progress.hpp"

#include <cstdio>
#include <unistd.h>

#include <fmt/core.h>

#ifndef CERULION_COMMIT
#define CERULION_COMMIT ""
#endif

namespace cerulion::cli {

std::string build_commit() { return CERULION_COMMIT; }

ProgressDisplay::ProgressDisplay() : tty_(::isatty(STDERR_FILENO)), started_(std::chrono::steady_clock::now()) {}

void ProgressDisplay::show(const bench::Progress& p) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  // The plan's seconds ahead, at the pace this machine has kept against the plan so far.
  const double pace = p.planned_done_s > 0 ? elapsed / p.planned_done_s : 1;
  const std::string eta = "ETA " + bench::duration_text(p.planned_left_s * pace);
  const std::string what =
      fmt::format("cell {}/{} {} {} rep {}/{} at {:g} Hz{}", p.cell, p.cells, p.lane, bench::size_label(p.size),
                  p.repetition, p.repetitions, p.rate_hz, p.fallback ? " (fallback)" : "");
  if (tty_) {
    const int width = 24;
    const double total = p.planned_done_s + p.planned_left_s;
    const int filled = total > 0 ? static_cast<int>(width * p.planned_done_s / total) : 0;
    fmt::print(stderr, "\r\033[K[{}{}] {}  {}", std::string(filled, '#'), std::string(width - filled, '.'), what, eta);
    drew_ = true;
  } else {
    fmt::print(stderr, "bench: {}, {}\n", what, eta);
  }
  std::fflush(stderr);
}

void ProgressDisplay::finish() {
  if (drew_) fmt::print(stderr, "\r\033[K");
}

}  // namespace cerulion::cli
