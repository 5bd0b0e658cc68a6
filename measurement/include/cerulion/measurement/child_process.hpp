// SPDX-License-Identifier: Apache-2.0
#pragma once
// A child process, started and stopped one way everywhere: `cerulion ping` (its pong and its
// flashback keeper), `cerulion bench` (a ping per repetition), iceoryx's RouDi, and the tests.
//
//   ChildOptions o;
//   o.argv = {"cerulion", "pong", "--once"};
//   o.program = kThisProgram;               // this very binary
//   o.out = Stream::Capture;
//   auto child = ChildProcess::start(o);
//   ...
//   ChildExit end = child->stop();          // SIGTERM, a grace period, then SIGKILL
//
// A child dies with the thread that started it (a parent-death signal), and by default leads a
// process group of its own: what it starts in turn stays in that group, and its end is the end of
// the group (whatever it left there is killed before it is reaped), so stopping a child stops its
// whole tree. Its output is collected in unlinked temporary files, never pipes: a child that
// writes a lot, or a grandchild that keeps the stream open, can never block it or the caller.

#include <atomic>
#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::measurement {

/// ChildOptions::program for "run this very program again" (the binary, not its name in PATH).
inline constexpr const char* kThisProgram = "/proc/self/exe";

/// Where one of a child's standard streams goes.
enum class Stream {
  Inherit,  ///< the caller's own
  Null,     ///< /dev/null
  Capture,  ///< stdin: ChildOptions::input; stdout/stderr: collected into ChildExit::out / err
  File,     ///< stdout/stderr: ChildOptions::out_file / err_file (created 0600, truncated)
};

/// How to start a child. Defaults are the recommendation.
struct ChildOptions {
  /// argv[0] is what `ps` shows ("cerulion", not a path).
  std::vector<std::string> argv;
  /// What runs: a path, kThisProgram, or "" for argv[0] looked up in PATH.
  std::string program;
  /// NAME=VALUE entries replacing (or adding to) the caller's environment.
  std::vector<std::string> environment;
  Stream in = Stream::Null;
  std::string input;  ///< stdin's bytes with Stream::Capture (the child reads them, then end of file)
  Stream out = Stream::Inherit;
  Stream err = Stream::Inherit;
  std::string out_file, err_file;  ///< with Stream::File
  /// Descriptors of the caller that become 3, 4, ... in the child (e.g. a file to write results
  /// into, as /dev/fd/3). Every other descriptor of the caller is closed in the child.
  std::vector<int> pass_fds;
  /// Sent to the child when the thread that started it ends (PR_SET_PDEATHSIG); 0 = none.
  int parent_death_signal = SIGTERM;
  /// Lead a process group of its own (see above). False: join the caller's, as a helper of the
  /// caller that a Ctrl-C at the terminal reaches along with it, and that a stop of the caller's
  /// group reaches too.
  bool own_process_group = true;
};

/// An unlinked temporary file open for reading and writing (close-on-exec; the caller closes it):
/// for results a child writes into a descriptor passed to it (ChildOptions::pass_fds). Nothing of
/// it is left behind, whoever is killed. SystemError when the temporary directory refuses it.
[[nodiscard]] Result<int> open_anonymous_file();

/// How a child ended.
struct ChildExit {
  int exit_code = -1;  ///< its exit status, or 128 + the signal that killed it
  int signal = 0;      ///< the signal that killed it; 0 when it exited
  std::string out;     ///< with Stream::Capture
  std::string err;
};

/// A running (or ended, not yet collected) child. Move-only; the destructor stops it.
class ChildProcess {
 public:
  /// Starts it. SystemError or NotFound naming the program when it cannot run (a missing or
  /// non-executable program is reported here, not as a child exiting 127).
  [[nodiscard]] static Result<ChildProcess> start(const ChildOptions& options);

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  ///< stop() if it still runs

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// True until it has exited.
  [[nodiscard]] bool running();
  /// Sends `sig` to the child alone; false once it is collected.
  bool signal(int sig) const;

  /// Waits up to `timeout` for it to exit (returning early, with nullopt, once `cancel` is set):
  /// how it ended, or nullopt while it still runs. An exit is collected once; later calls
  /// return it again.
  [[nodiscard]] std::optional<ChildExit> wait_for(std::chrono::nanoseconds timeout,
                                                  const std::atomic<bool>* cancel = nullptr);
  /// Waits as long as it takes.
  ChildExit wait();
  /// Stops it: `first` (0 = none, only wait) to the child, up to `grace` for it to exit, then
  /// SIGKILL to it and (leading its own group) everything in its group. Returns how it ended;
  /// an exited child is only collected.
  ChildExit stop(std::chrono::nanoseconds grace = std::chrono::seconds(2), int first = SIGTERM);

 private:
  bool exited_now();      // true once it exited (not reaped yet, so its pid and group stay valid)
  ChildExit& collect();   // ends the group, reaps, reads the captured output
  void release() noexcept;

  pid_t pid_ = -1;
  bool own_group_ = false;
  int out_fd_ = -1, err_fd_ = -1;
  std::optional<ChildExit> exit_;
};

}  // namespace cerulion::measurement
