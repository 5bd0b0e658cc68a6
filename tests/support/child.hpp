// SPDX-License-Identifier: Apache-2.0
#pragma once
// A forked child process running a lambda, for tests that need several processes of their own (or
// one that dies at a chosen moment, or runs as another user). Catch2 assertions belong to the
// parent; the child's body reports through its exit code.

#include <catch2/catch.hpp>

#include <csignal>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace cerulion::test {

/// A forked child; its body returns an exit code. The parent learns "ready" through a pipe.
class Child {
 public:
  template <typename Body>
  explicit Child(Body body) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(fds[0]);
      ready_fd_ = fds[1];
      int code = 99;
      try {
        code = body(*this);
      } catch (...) {
      }
      _exit(code);
    }
    close(fds[1]);
    ready_fd_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(ready_fd_);
  }
  /// In the child: tell the parent it reached the interesting point.
  void signal_ready() {
    char c = 1;
    (void)!write(ready_fd_, &c, 1);
  }
  /// In the parent: wait for signal_ready().
  bool wait_ready() {
    char c;
    return read(ready_fd_, &c, 1) == 1;
  }
  pid_t pid() const { return pid_; }
  /// Stops it (SIGSTOP, as a process that gets no CPU) and returns once every thread of it has
  /// stopped: kill() returns before that, and a thread still running may take what comes next.
  bool stop() {
    int status = 0;
    return kill(pid_, SIGSTOP) == 0 && waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status);
  }
  /// Lets a stopped child run again.
  void resume() { kill(pid_, SIGCONT); }
  /// Sends SIGTERM (a supervisor's stop); join() then says how the child ended.
  void terminate() { kill(pid_, SIGTERM); }
  void kill9() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }
  int join() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int ready_fd_ = -1;
  bool reaped_ = false;
};

/// The pid of a process that has exited and been reaped (a process killed with -9, for what it
/// left behind).
inline pid_t exited_pid() {
  Child child([](Child&) { return 0; });
  const pid_t pid = child.pid();
  REQUIRE(child.join() == 0);
  return pid;
}

/// Runs `body` in a child process as user `uid` with primary group `gid` and supplementary
/// `groups` (the caller must be root); returns its exit code (10 when the switch itself failed).
template <typename Body>
int run_as_user(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, Body body) {
  Child child([&](Child&) {
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setresgid(gid, gid, gid) != 0 ||
        ::setresuid(uid, uid, uid) != 0) {
      return 10;
    }
    return body();
  });
  return child.join();
}

}  // namespace cerulion::test
