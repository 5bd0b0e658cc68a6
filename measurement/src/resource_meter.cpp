// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/resource_meter.hpp"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace cerulion::measurement {

namespace {

/// utime + stime from /proc/PID/stat: whole clock ticks (10 ms at the usual 100 Hz), so a run of a
/// few milliseconds reads 0 there however hard the process worked.
std::uint64_t process_cpu_ticks_ns(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  if (!p) return 0;
  unsigned long long utime = 0, stime = 0;
  // Fields after ')': state(3) ... utime(14) stime(15).
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
  return (utime + stime) * (1'000'000'000ull / static_cast<std::uint64_t>(sysconf(_SC_CLK_TCK)));
}

}  // namespace

std::uint64_t process_cpu_ns(pid_t pid) {
  // The process's CPU clock counts the scheduler's nanoseconds; /proc is the fallback where the
  // clock cannot be had.
  clockid_t clock{};
  timespec ts{};
  if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &ts) == 0) {
    return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
  }
  return process_cpu_ticks_ns(pid);
}

std::uint64_t process_peak_rss(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char line[256];
  unsigned long kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return std::uint64_t(kib) * 1024;
}

CpuMeter CpuMeter::calling_thread() {
  CpuMeter m;
  m.kind_ = Kind::Clock;
  m.clock_ = CLOCK_THREAD_CPUTIME_ID;
  return m;
}

CpuMeter CpuMeter::thread(pthread_t thread) {
  CpuMeter m;
  if (pthread_getcpuclockid(thread, &m.clock_) == 0) m.kind_ = Kind::Clock;
  return m;
}

CpuMeter CpuMeter::process(pid_t pid) {
  CpuMeter m;
  if (pid > 0) {
    m.kind_ = Kind::Process;
    m.pid_ = pid;
  }
  return m;
}

std::uint64_t CpuMeter::cpu_ns() const {
  switch (kind_) {
    case Kind::Clock: {
      timespec ts{};
      if (clock_gettime(clock_, &ts) != 0) return 0;
      return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
    }
    case Kind::Process: return process_cpu_ns(pid_);
    case Kind::None: break;
  }
  return 0;
}

double CpuMeter::percent(std::uint64_t wall_ns) const {
  if (kind_ == Kind::None || wall_ns == 0) return 0;
  const std::uint64_t now = cpu_ns();
  if (now == 0 || now < start_ns_) return 0;  // unreadable, or the pid was reused
  return 100.0 * static_cast<double>(now - start_ns_) / static_cast<double>(wall_ns);
}

}  // namespace cerulion::measurement
