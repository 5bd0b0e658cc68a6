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
  const double eta = p.done > 0 ? elapsed / static_cast<double>(p.done) * static_cast<double>(p.total - p.done) : 0;
  const std::string what = fmt::format("{} {} rep {}/{} at {:g} Hz", p.lane, bench::size_label(p.size), p.repetition,
                                       p.repetitions, p.rate_hz);
  if (tty_) {
    const int width = 24;
    const int filled = p.total ? static_cast<int>(width * p.done / p.total) : 0;
    fmt::print(stderr, "\r\033[K[{}{}] {}/{} {}  ETA {:.0f} s", std::string(filled, '#'), std::string(width - filled, '.'),
               p.done, p.total, what, eta);
    drew_ = true;
  } else {
    fmt::print(stderr, "bench: {}/{} {}{}\n", p.done + 1, p.total, what, p.done ? fmt::format(", ETA {:.0f} s", eta) : "");
  }
  std::fflush(stderr);
}

void ProgressDisplay::finish() {
  if (drew_) fmt::print(stderr, "\r\033[K");
}

}  // namespace cerulion::cli
