// SPDX-License-Identifier: Apache-2.0
#include "process.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace cerulion::test {
namespace {

using measurement::ChildExit;
using measurement::ChildOptions;
using measurement::ChildProcess;
using measurement::Stream;

// The tests' children start as a user's would, each leading its own process group, so stopping
// one stops whatever it started; they die with the test if it crashes.
ChildOptions options_for(const std::vector<std::string>& argv, const std::string& input) {
  ChildOptions o;
  o.argv = argv;
  o.in = input.empty() ? Stream::Null : Stream::Capture;
  o.input = input;
  o.out = Stream::Capture;
  o.err = Stream::Capture;
  return o;
}

ProcessResult result_of(const ChildExit& e) {
  ProcessResult r;
  r.exit_code = e.exit_code;
  r.killed_by = e.signal;
  r.out = e.out;
  r.err = e.err;
  return r;
}

ProcessResult not_started(const std::string& why) {
  ProcessResult r;
  r.exit_code = 127;  // what a shell says of a program it cannot run
  r.err = why + "\n";
  return r;
}

}  // namespace

std::string cerulion_binary() {
  const char* bin = std::getenv("CERULION_BIN");
  return bin ? bin : "cerulion";
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout) {
  auto child = ChildProcess::start(options_for(argv, input));
  if (!child) return not_started(child.message());
  if (auto e = child->wait_for(timeout)) return result_of(*e);
  ProcessResult r = result_of(child->stop(std::chrono::seconds(0), SIGKILL));
  r.timed_out = true;
  return r;
}

std::vector<std::string> redirected(const std::vector<std::string>& argv, const std::string& redirection) {
  const bool pipeline = redirection.find('|') != std::string::npos;
  std::string script = pipeline ? "\"$0\" \"$@\" " + redirection + "; exit ${PIPESTATUS[0]}"
                                : "exec \"$0\" \"$@\" " + redirection;
  std::vector<std::string> out{"/bin/bash", "-c", script};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> with_stdio_closed(const std::vector<std::string>& argv) {
  return redirected(argv, "<&- >&- 2>&-");
}

std::vector<std::string> standard_fds(pid_t pid) {
  std::vector<std::string> out;
  for (int fd = 0; fd <= 2; ++fd) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec);
    out.push_back(ec ? std::string() : target.string());
  }
  return out;
}

PeakMemory run_for_peak_memory(const std::vector<std::string>& argv, const std::string& stdin_path,
                               std::chrono::milliseconds timeout) {
  PeakMemory peak;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return peak;
  if (pid == 0) {
    const int in = ::open(stdin_path.c_str(), O_RDONLY);
    const int null = ::open("/dev/null", O_WRONLY);
    if (in < 0 || null < 0 || ::dup2(in, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0) ::_exit(127);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      peak.timed_out = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  peak.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  peak.max_rss_kib = usage.ru_maxrss;
  return peak;
}

ProcessResult run_cerulion(const std::vector<std::string>& args, const std::string& input,
                           std::chrono::milliseconds timeout) {
  std::vector<std::string> argv{cerulion_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, input, timeout);
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& input) {
  auto child = ChildProcess::start(options_for(argv, input));
  if (child) child_ = std::move(*child);
  else start_error_ = child.message();
}

BackgroundProcess::~BackgroundProcess() {
  // Ask first, so the program leaves its topics (and their segments) as a user's Ctrl-C would;
  // only a program that ignores SIGINT for 3 s is killed.
  if (child_.running()) (void)child_.stop(std::chrono::seconds(3), SIGINT);
}

void BackgroundProcess::signal(int sig) { (void)child_.signal(sig); }

bool BackgroundProcess::running() { return child_.pid() > 0 && child_.running(); }

ProcessResult BackgroundProcess::wait(std::chrono::milliseconds timeout) {
  if (!start_error_.empty()) return not_started(start_error_);
  if (auto e = child_.wait_for(timeout)) return result_of(*e);
  ProcessResult r = result_of(child_.stop(std::chrono::seconds(0), SIGKILL));
  r.timed_out = true;
  return r;
}

std::string unique_topic(const std::string& stem) {
  static std::atomic<int> counter{0};
  return "/test/" + stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

std::string unique_domain(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
}

char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  // The state follows the parenthesised command name.
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '\0';
}

bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  const char state = process_state(pid);
  return state == '\0' || state == 'Z';
}

std::vector<pid_t> child_pids(pid_t pid) {
  std::vector<pid_t> out;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child = 0; children >> child;) out.push_back(child);
  }
  return out;
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
