// CPU time and peak memory of another process, read from /proc.

#include "process_stats.hpp"

#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace cerulion::cli {

/// utime + stime of a process in ns (from /proc; 0 when unreadable, e.g. another pid namespace).
std::uint64_t process_cpu_ns(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (!p) return 0;
  unsigned long long utime = 0, stime = 0;
  // Fields after ')': state(3) ... utime(14) stime(15).
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
  return (utime + stime) * (1'000'000'000ull / static_cast<std::uint64_t>(sysconf(_SC_CLK_TCK)));
}

/// Peak resident memory of a process in bytes (VmHWM), 0 if unknown.
std::uint64_t process_peak_rss(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  char line[256];
  std::uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

}  // namespace cerulion::cli
