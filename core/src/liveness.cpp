// SPDX-License-Identifier: Apache-2.0
#include "cerulion/core/detail/liveness.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <string>
#include <unistd.h>

namespace cerulion::detail {

std::optional<std::uint64_t> process_start_time(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // The command name (field 2) may hold spaces and parentheses: fields restart after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return std::nullopt;
  ++p;
  // A zombie (exited, not yet reaped by its parent) is as dead as a participant can be.
  if (p[0] == ' ' && (p[1] == 'Z' || p[1] == 'X' || p[1] == 'x')) return std::nullopt;
  // After ')' come fields 3.. ; starttime is field 22, i.e. the 20th token from here.
  int field = 2;
  while (*p && field < 22) {
    while (*p == ' ') ++p;
    ++field;
    if (field == 22) break;
    while (*p && *p != ' ') ++p;
  }
  if (field != 22 || !*p) return std::nullopt;
  return std::strtoull(p, nullptr, 10);
}

std::uint32_t own_pid_namespace() {
  static const std::uint32_t value = [] {
    struct stat st {};
    return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<std::uint32_t>(st.st_ino) : 0u;
  }();
  return value;
}

bool process_alive(pid_t pid, std::uint64_t start_time, std::uint32_t pid_namespace) {
  if (pid_namespace != 0 && own_pid_namespace() != 0 && pid_namespace != own_pid_namespace()) return true;
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d", static_cast<int>(pid));
  const bool in_our_proc = ::access(path, F_OK) == 0;
  // No /proc entry although kill() found it: another pid namespace; trust kill().
  if (!in_our_proc) return true;
  auto now = process_start_time(pid);
  if (!now) return false;  // a zombie
  return start_time == 0 || *now == start_time;
}

std::uint64_t own_start_time() {
  // Cached per pid: a forked child is a new process with a start time of its own.
  static thread_local std::uint32_t cached_pid = 0;
  static thread_local std::uint64_t cached = 0;
  const auto pid = static_cast<std::uint32_t>(::getpid());
  if (pid != cached_pid) {
    cached = process_start_time(static_cast<pid_t>(pid)).value_or(0);
    cached_pid = pid;
  }
  return cached;
}

}  // namespace cerulion::detail
