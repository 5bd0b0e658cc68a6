// SPDX-License-Identifier: Apache-2.0
#include "process.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cerulion::test {
namespace {

std::vector<char*> to_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int killing_signal(int status) { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string cerulion_binary() {
  const char* bin = std::getenv("CERULION_BIN");
  return bin ? bin : "cerulion";
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  ProcessResult result;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
    result.err = "pipe failed";
    return result;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    auto args = to_argv(argv);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  if (input.empty()) {
    close(in_pipe[1]);
    in_pipe[1] = -1;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    int out_idx = -1, err_idx = -1, in_idx = -1;
    if (out_open) { fds[n] = {out_pipe[0], POLLIN, 0}; out_idx = n++; }
    if (err_open) { fds[n] = {err_pipe[0], POLLIN, 0}; err_idx = n++; }
    if (in_pipe[1] >= 0) { fds[n] = {in_pipe[1], POLLOUT, 0}; in_idx = n++; }
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    if (poll(fds, n, std::min(ms, 100)) < 0 && errno != EINTR) break;
    if (out_idx >= 0 && fds[out_idx].revents) {
      ssize_t r = read(out_pipe[0], buf, sizeof buf);
      if (r > 0) result.out.append(buf, r); else out_open = false;
    }
    if (err_idx >= 0 && fds[err_idx].revents) {
      ssize_t r = read(err_pipe[0], buf, sizeof buf);
      if (r > 0) result.err.append(buf, r); else err_open = false;
    }
    if (in_idx >= 0 && fds[in_idx].revents) {
      if (fds[in_idx].revents & (POLLERR | POLLHUP)) {
        close(in_pipe[1]);
        in_pipe[1] = -1;
      } else {
        ssize_t w = write(in_pipe[1], input.data() + written, input.size() - written);
        if (w > 0) written += w;
        if (written >= input.size() || (w < 0 && errno != EAGAIN)) {
          close(in_pipe[1]);
          in_pipe[1] = -1;
        }
      }
    }
  }
  if (in_pipe[1] >= 0) close(in_pipe[1]);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = decode_status(status);
  result.killed_by = killing_signal(status);
  return result;
}

std::vector<std::string> redirected(const std::vector<std::string>& argv, const std::string& redirection) {
  const bool pipeline = redirection.find('|') != std::string::npos;
  std::string script = pipeline ? "\"$0\" \"$@\" " + redirection + "; exit ${PIPESTATUS[0]}"
                                : "exec \"$0\" \"$@\" " + redirection;
  std::vector<std::string> out{"/bin/bash", "-c", script};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

ProcessResult run_cerulion(const std::vector<std::string>& args, const std::string& input,
                           std::chrono::milliseconds timeout) {
  std::vector<std::string> argv{cerulion_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, input, timeout);
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& input) {
  static std::atomic<int> counter{0};
  std::string stem = "/tmp/cerulion-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  out_path_ = stem + ".out";
  err_path_ = stem + ".err";
  std::string in_path = stem + ".in";
  {
    std::ofstream in(in_path, std::ios::binary);
    in << input;
  }
  // Opened before the fork: the name is gone as soon as the parent unlinks it below.
  const int in = open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  pid_ = fork();
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    ::signal(SIGPIPE, SIG_DFL);
    auto args = to_argv(argv);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (in >= 0) close(in);
  unlink(in_path.c_str());
}

BackgroundProcess::~BackgroundProcess() {
  if (!reaped_ && pid_ > 0) {
    // Ask first, so the program leaves its topics (and their segments) as a user's Ctrl-C would;
    // only a program that ignores SIGINT for 3 s is killed.
    kill(pid_, SIGINT);
    for (int i = 0; i < 300 && waitpid(pid_, nullptr, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (kill(pid_, 0) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  unlink(out_path_.c_str());
  unlink(err_path_.c_str());
}

void BackgroundProcess::signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

bool BackgroundProcess::running() {
  if (reaped_) return false;
  pid_t r = waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

ProcessResult BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.exit_code = decode_status(status_);
  result.killed_by = killing_signal(status_);
  result.out = read_file(out_path_);
  result.err = read_file(err_path_);
  return result;
}

std::string unique_topic(const std::string& stem) {
  static std::atomic<int> counter{0};
  return "/test/" + stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

std::string unique_domain(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

int count_shm_entries(const std::string& prefix) {
  int count = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      if (std::string(e->d_name).rfind(prefix, 0) == 0) ++count;
    }
    closedir(dir);
  }
  return count;
}

}  // namespace cerulion::test
