// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the real `cerulion` binary (or any program) from tests: arguments, stdin bytes, captured
// stdout/stderr, exit code, and a hard timeout so a hang fails the test instead of the suite.

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cerulion/measurement/child_process.hpp"

namespace cerulion::test {

struct ProcessResult {
  int exit_code = -1;       ///< exit status, or 128+signal when killed by a signal
  int killed_by = 0;        ///< the signal that killed it; 0 when it exited on its own
  bool timed_out = false;   ///< killed because it outlived the timeout
  std::string out;
  std::string err;
};

/// Path of the cerulion binary under test ($CERULION_BIN, set by CTest).
std::string cerulion_binary();

/// Runs `argv` (argv[0] is the program path) with `input` on stdin (closed afterwards), waits at
/// most `timeout`, and returns what it printed.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// `cerulion <args...>`.
ProcessResult run_cerulion(const std::vector<std::string>& args, const std::string& input = {},
                           std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// `argv` run by bash with its stderr sent where a shell redirection says: "2>/dev/full",
/// "2>&1 | head -1". The exit status is argv's own (the first of a pipeline); a redirection
/// without a pipe execs argv, so that its pid is the one a BackgroundProcess signals.
std::vector<std::string> redirected(const std::vector<std::string>& argv, const std::string& redirection);

/// `argv` started with its standard input, output and error closed (`<&- >&- 2>&-`, as some
/// supervisors start daemons); exec'd, so a BackgroundProcess's pid is its own.
std::vector<std::string> with_stdio_closed(const std::vector<std::string>& argv);

/// What process `pid` has as fds 0, 1 and 2 ("/dev/null", "/tmp/r.mcap", "anon_inode:[eventfd]",
/// "" for one that is closed).
std::vector<std::string> standard_fds(pid_t pid);

/// How a program ran whose memory was watched: its exit code (128+signal when killed) and the
/// most memory it held at once (resident, KiB).
struct PeakMemory {
  int exit_code = -1;
  bool timed_out = false;
  long max_rss_kib = 0;
};
/// Runs `argv` (looked up in PATH) with stdin read from `stdin_path` and stdout and stderr
/// dropped, for at most `timeout` (then SIGKILL).
PeakMemory run_for_peak_memory(const std::vector<std::string>& argv, const std::string& stdin_path,
                               std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// A program running in the background; its stdout/stderr are collected at wait().
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv, const std::string& input = {});
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  ~BackgroundProcess();  ///< if still running: SIGINT, up to 3 s to exit, then SIGKILL; reaps
  pid_t pid() const { return child_.pid(); }
  void signal(int sig);
  /// Waits up to `timeout` for exit; on timeout kills it and sets timed_out.
  ProcessResult wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// True while it has not exited.
  bool running();

 private:
  measurement::ChildProcess child_;
  std::string start_error_;  ///< why it did not start, "" when it did
};

/// A topic name unique to this process and call, so `ctest -j2` runs never collide.
std::string unique_topic(const std::string& stem);

/// A domain name unique to this process and call, for tests that list or clean a whole domain.
std::string unique_domain(const std::string& stem);

/// Whether process `pid` runs no more: gone, or a zombie its parent has not reaped yet.
bool process_gone(pid_t pid);

/// The state letter /proc gives process `pid` ('R', 'S', 'T' when stopped, 'Z'...), '\0' when none.
char process_state(pid_t pid);

/// The processes `pid` started that still run (every thread's children, /proc/PID/task/*/children).
std::vector<pid_t> child_pids(pid_t pid);

/// Number of /dev/shm entries whose name starts with `prefix`.
int count_shm_entries(const std::string& prefix);

/// Polls `condition` every 10 ms for up to `timeout`; true when it became true.
template <typename F>
bool eventually(F condition, std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace cerulion::test

#include <thread>
template <typename F>
bool cerulion::test::eventually(F condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}
