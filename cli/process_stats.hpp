#pragma once
// CPU time and peak memory of another process (ping's pong, a keeper), read from /proc.

#include <cstdint>
#include <sys/types.h>

namespace cerulion::cli {

/// utime + stime of a process in ns (0 when unreadable, e.g. another pid namespace).
std::uint64_t process_cpu_ns(pid_t pid);
/// Peak resident memory of a process in bytes (VmHWM), 0 if unknown.
std::uint64_t process_peak_rss(pid_t pid);

}  // namespace cerulion::cli
