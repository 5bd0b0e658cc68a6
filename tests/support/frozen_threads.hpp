// SPDX-License-Identifier: Apache-2.0
#pragma once
// Some threads of another process stopped while the others run, as threads that get no CPU (a
// keeper's idle-priority taps under full load) beside one that does (its dump thread). SIGSTOP
// stops a whole process; ptrace stops one thread. Where ptrace is refused (a container, Yama),
// frozen() is false and the test says it skipped.

#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cerulion::test {

/// The threads of `pid` for which `freeze(tid, name)` holds are stopped until this is destroyed.
class FrozenThreads {
 public:
  FrozenThreads(pid_t pid, const std::function<bool(pid_t tid, const std::string& name)>& freeze) {
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) {
      why_ = tasks + ": " + std::strerror(errno);
      return;
    }
    std::vector<pid_t> chosen;
    while (auto* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      const pid_t tid = static_cast<pid_t>(std::stol(entry->d_name));
      std::string name;
      std::getline(std::ifstream(tasks + "/" + entry->d_name + "/comm"), name);
      if (freeze(tid, name)) chosen.push_back(tid);
    }
    ::closedir(dir);
    for (const pid_t tid : chosen) {
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        why_ = std::string("ptrace: ") + std::strerror(errno);
        return;
      }
      seized_.push_back(tid);
      int status = 0;
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0 || ::waitpid(tid, &status, __WALL) != tid ||
          !WIFSTOPPED(status)) {
        why_ = "thread " + std::to_string(tid) + " did not stop";
        return;
      }
    }
    frozen_ = !chosen.empty();
    if (chosen.empty()) why_ = "no thread chosen";
  }
  ~FrozenThreads() {
    for (const pid_t tid : seized_) ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  }
  FrozenThreads(const FrozenThreads&) = delete;
  FrozenThreads& operator=(const FrozenThreads&) = delete;

  bool frozen() const { return frozen_; }
  /// Why not frozen.
  const std::string& why() const { return why_; }
  std::size_t count() const { return seized_.size(); }

 private:
  std::vector<pid_t> seized_;
  bool frozen_ = false;
  std::string why_;
};

}  // namespace cerulion::test
