// SPDX-License-Identifier: Apache-2.0
// How late a timed wake-up comes, by how it is asked for: the adaptive wait's timed sleep (a
// futex wait with a relative timeout) against the same with an absolute one (FUTEX_WAIT_BITSET on
// CLOCK_MONOTONIC) and against clock_nanosleep(TIMER_ABSTIME), each with the thread's default
// timer slack and with PR_SET_TIMERSLACK at 1 ns. The levers issue 43 names for the adaptive
// wait's tail, measured on their own (docs/performance.md). A developer's tool; not installed.
//   timer-lateness [--samples N] [--period-us P]
// Sleeps to the next point of a P µs grid N times in each way, the ways taking turns, and prints
// per way the lateness of the wake-ups (how long after the asked time the thread ran again)
// min/median/p99/max in µs.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <linux/futex.h>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "cerulion/measurement/statistics.hpp"

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

timespec to_timespec(std::uint64_t ns) {
  return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

std::atomic<std::uint32_t> word{0};  // nobody wakes it: every wait ends on its timeout

enum class Way { FutexRelative, FutexAbsolute, NanosleepAbsolute };

void sleep_until(Way way, std::uint64_t until) {
  switch (way) {
    case Way::FutexRelative: {
      // As the waiter does: the time left is read, then asked for.
      const std::uint64_t now = now_ns();
      if (until <= now) return;
      const timespec ts = to_timespec(until - now);
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, 0, &ts, nullptr, 0);
      return;
    }
    case Way::FutexAbsolute: {
      const timespec ts = to_timespec(until);
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_BITSET, 0, &ts, nullptr,
              FUTEX_BITSET_MATCH_ANY);
      return;
    }
    case Way::NanosleepAbsolute: {
      const timespec ts = to_timespec(until);
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
      return;
    }
  }
}

struct Config {
  const char* name;
  Way way;
  unsigned long slack_ns;  // 0: the thread's default
  std::vector<double> late_us;
};

/// Takes the configurations in turn, one sleep each, so that whatever else the machine does
/// falls on all of them alike.
void measure(std::vector<Config>& configs, int samples, std::uint64_t period_ns) {
  std::uint64_t next = now_ns() + period_ns;
  for (int i = 0; i < samples; ++i) {
    for (Config& c : configs) {
      prctl(PR_SET_TIMERSLACK, c.slack_ns, 0, 0, 0);
      sleep_until(c.way, next);
      const std::uint64_t woke = now_ns();
      c.late_us.push_back(woke > next ? static_cast<double>(woke - next) / 1e3 : 0.0);
      next += period_ns;
      while (next <= now_ns()) next += period_ns;  // a wake-up later than a period skips a point
    }
  }
  for (const Config& c : configs) {
    const cerulion::measurement::Summary s = cerulion::measurement::summarize(c.late_us);
    std::printf("timer way=%s slack=%s samples=%zu min_us=%.3f median_us=%.3f p99_us=%.3f max_us=%.3f\n", c.name,
                c.slack_ns == 0 ? "default" : "1ns", s.count, s.min, s.median, s.p99, s.max);
  }
}

int usage(const char* why) {
  std::fprintf(stderr, "timer-lateness: %s\nusage: timer-lateness [--samples N] [--period-us P]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 1000;
  long period_us = 10'000;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--help" || option == "-h") {
      std::printf("usage: timer-lateness [--samples N] [--period-us P]\n");
      return 0;
    }
    if (i + 1 >= argc) return usage("an option needs a value");
    char* end = nullptr;
    const long value = std::strtol(argv[++i], &end, 10);
    if (end == argv[i] || *end != '\0' || value < 1 || value > 100'000'000) return usage("values are positive counts");
    if (option == "--samples") {
      samples = static_cast<int>(value);
    } else if (option == "--period-us") {
      period_us = value;
    } else {
      return usage("unknown option");
    }
  }
  // Slack 0 asks PR_SET_TIMERSLACK for the thread's default (50 µs unless its parent changed it).
  std::vector<Config> configs;
  for (unsigned long slack : {0ul, 1ul}) {
    configs.push_back({"futex-relative", Way::FutexRelative, slack, {}});
    configs.push_back({"futex-absolute", Way::FutexAbsolute, slack, {}});
    configs.push_back({"nanosleep-absolute", Way::NanosleepAbsolute, slack, {}});
  }
  measure(configs, samples, static_cast<std::uint64_t>(period_us) * 1000);
  return 0;
}
