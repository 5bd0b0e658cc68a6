// SPDX-License-Identifier: Apache-2.0
#include "cerulion/measurement/child_process.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char** environ;

namespace cerulion::measurement {
namespace {

/// A descriptor closed on every way out unless released.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Status system_error(const std::string& what, int err = errno) {
  return {ErrorCode::SystemError, what + ": " + std::strerror(err)};
}

Result<Fd> anonymous_file() {
  auto fd = open_anonymous_file();
  if (!fd) return fd.status();
  return Fd(*fd);
}

Status write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error("cannot write a child's input");
    done += static_cast<std::size_t>(n);
  }
  return {};
}

std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
    at += n;
  }
  return out;
}

/// `name` as execvp would find it, resolved before the fork (no allocation in the child).
Result<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return Status{ErrorCode::NotFound, "cannot run '" + name + "': not found in PATH"};
}

/// The caller's environment with `changes` (NAME=VALUE) applied.
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> env;
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const bool replaced = std::any_of(changes.begin(), changes.end(),
                                      [&](const std::string& c) { return name_of(c) == name_of(entry); });
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), changes.begin(), changes.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// The descriptor a child's stream is taken from (-1: inherit), opened by the caller.
Result<Fd> stream_source(Stream stream, bool input, const std::string& bytes, const std::string& file, Fd& keep) {
  switch (stream) {
    case Stream::Inherit: return Fd();
    case Stream::Null: {
      const int fd = ::open("/dev/null", (input ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      if (fd < 0) return system_error("cannot open /dev/null");
      return Fd(fd);
    }
    case Stream::Capture: {
      auto f = anonymous_file();
      if (!f) return f.status();
      if (input) {
        if (Status s = write_all(f->get(), bytes); !s.ok()) return s;
        ::lseek(f->get(), 0, SEEK_SET);
      }
      if (!input) {  // read back by the caller once the child ended
        const int dup = ::fcntl(f->get(), F_DUPFD_CLOEXEC, 0);
        if (dup < 0) return system_error("cannot duplicate a descriptor");
        keep = Fd(dup);
      }
      return std::move(*f);
    }
    case Stream::File: {
      if (input) return Status{ErrorCode::InvalidArgument, "a child's stdin cannot be a File stream"};
      const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) return system_error("cannot open '" + file + "'");
      return Fd(fd);
    }
  }
  return Fd();
}

/// Moves `fd` to a number at least `floor` (so that the child's dup2 onto 0, 1, 2, 3... never
/// overwrites another source), close-on-exec.
Result<Fd> above(int fd, int floor) {
  if (fd < 0) return Fd();
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0) return system_error("cannot duplicate a descriptor");
  return Fd(moved);
}

/// In the child, between fork and exec: only async-signal-safe calls. Reports errno on `report`.
[[noreturn]] void become_child(const ChildOptions& o, pid_t parent, const int sources[3], const std::vector<Fd>& passed,
                               int report, const char* program, char* const* argv, char* const* envp) {
  auto fail = [report](int err) {
    (void)!::write(report, &err, sizeof err);
    ::_exit(127);
  };
  if (o.parent_death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, o.parent_death_signal) != 0) fail(errno);
    if (::getppid() != parent) ::_exit(127);  // the caller died before the line above
  }
  if (o.own_process_group && ::setpgid(0, 0) != 0) fail(errno);
  // A fresh program starts with default signals: the caller may block or ignore some (a
  // background shell ignores SIGINT; cerulion ignores SIGPIPE), and a child must see SIGTERM.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  for (int i = 0; i < 3; ++i) {
    if (sources[i] >= 0 && ::dup2(sources[i], i) < 0) fail(errno);
  }
  for (std::size_t i = 0; i < passed.size(); ++i) {
    if (::dup2(passed[i].get(), static_cast<int>(3 + i)) < 0) fail(errno);
  }
  // Nothing else of the caller's leaks into the child (`report` is closed by the exec too).
  const unsigned first_closed = static_cast<unsigned>(3 + passed.size());
  if (::syscall(SYS_close_range, first_closed, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = static_cast<int>(first_closed); fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (envp) ::execve(program, argv, envp);
  else ::execv(program, argv);
  fail(errno);
  ::_exit(127);  // not reached
}

}  // namespace

Result<int> open_anonymous_file() {
  const char* env = std::getenv("TMPDIR");
  const std::string dir = env && *env ? env : "/tmp";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
    std::string path = dir + "/cerulion-child-XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return system_error("cannot create a temporary file in " + dir);
    ::unlink(path.c_str());
  }
  return fd;
}

Result<ChildProcess> ChildProcess::start(const ChildOptions& o) {
  if (o.argv.empty()) return Status{ErrorCode::InvalidArgument, "a child needs at least argv[0]"};
  std::string program = o.program;
  if (program.empty()) {
    auto found = find_program(o.argv[0]);
    if (!found) return found.status();
    program = *found;
  }
  if (::access(program.c_str(), X_OK) != 0) return system_error("cannot run '" + program + "'");

  ChildProcess child;
  Fd keep_out, keep_err, unused;
  auto in = stream_source(o.in, true, o.input, {}, unused);
  if (!in) return in.status();
  auto out = stream_source(o.out, false, {}, o.out_file, keep_out);
  if (!out) return out.status();
  auto err = stream_source(o.err, false, {}, o.err_file, keep_err);
  if (!err) return err.status();

  const int floor = static_cast<int>(3 + o.pass_fds.size());
  int sources[3];
  std::vector<Fd> high;
  for (Fd* f : {&*in, &*out, &*err}) {
    auto moved = above(f->get(), floor);
    if (!moved) return moved.status();
    high.push_back(std::move(*moved));
  }
  for (int i = 0; i < 3; ++i) sources[i] = high[static_cast<std::size_t>(i)].get();
  std::vector<Fd> passed;
  for (int fd : o.pass_fds) {
    auto moved = above(fd, floor);
    if (!moved) return moved.status();
    if (moved->get() < 0) return Status{ErrorCode::InvalidArgument, "a descriptor to pass is not open"};
    passed.push_back(std::move(*moved));
  }
  int report_pipe[2];
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) return system_error("cannot create a pipe");
  Fd report_read(report_pipe[0]);
  auto report_write = above(report_pipe[1], floor);
  ::close(report_pipe[1]);
  if (!report_write) return report_write.status();

  std::vector<std::string> argv_strings = o.argv;
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  if (!o.environment.empty()) {
    env_strings = environment_with(o.environment);
    envp = pointers(env_strings);
  }

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return system_error("cannot start '" + o.argv[0] + "'");
  if (pid == 0) {
    become_child(o, parent, sources, passed, report_write->get(), program.c_str(), argv.data(),
                 envp.empty() ? nullptr : envp.data());
  }
  // Both sides set the group, so it exists whichever runs first (the child's call may come
  // after the caller signals the group).
  if (o.own_process_group) (void)::setpgid(pid, pid);
  child.pid_ = pid;
  child.own_group_ = o.own_process_group;
  report_write->reset();
  int child_errno = 0;
  ssize_t n;
  do n = ::read(report_read.get(), &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    ::waitpid(pid, nullptr, 0);
    child.pid_ = -1;
    return Status{child_errno == ENOENT ? ErrorCode::NotFound : ErrorCode::SystemError,
                  "cannot run '" + program + "': " + std::strerror(child_errno)};
  }
  child.out_fd_ = keep_out.release();
  child.err_fd_ = keep_err.release();
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      own_group_(other.own_group_),
      out_fd_(std::exchange(other.out_fd_, -1)),
      err_fd_(std::exchange(other.err_fd_, -1)),
      exit_(std::move(other.exit_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !exit_) (void)stop();
    release();
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = other.own_group_;
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    exit_ = std::move(other.exit_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_) (void)stop();
  release();
}

void ChildProcess::release() noexcept {
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

bool ChildProcess::exited_now() {
  if (exit_ || pid_ <= 0) return true;
  siginfo_t info{};
  // WNOWAIT: seen, not reaped. Until it is reaped its pid, and so its group, cannot be reused.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid_;
}

ChildExit& ChildProcess::collect() {
  if (exit_) return *exit_;
  ChildExit e;
  if (pid_ > 0) {
    // Its end is the end of its group: whatever it left running there goes with it.
    if (own_group_) ::killpg(pid_, SIGKILL);
    int status = 0;
    pid_t r;
    do r = ::waitpid(pid_, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r == pid_) {
      if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) {
        e.signal = WTERMSIG(status);
        e.exit_code = 128 + e.signal;
      }
    }
  }
  if (out_fd_ >= 0) e.out = read_all(out_fd_);
  if (err_fd_ >= 0) e.err = read_all(err_fd_);
  release();
  exit_ = std::move(e);
  return *exit_;
}

bool ChildProcess::running() { return !exited_now(); }

bool ChildProcess::signal(int sig) const {
  if (pid_ <= 0 || exit_) return false;
  return ::kill(pid_, sig) == 0;
}

std::optional<ChildExit> ChildProcess::wait_for(std::chrono::nanoseconds timeout, const std::atomic<bool>* cancel) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Short naps first (most children asked to stop are quick), then a gentler poll.
  auto nap = std::chrono::microseconds(500);
  for (;;) {
    if (exited_now()) return collect();
    if (cancel && cancel->load()) return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(nap, deadline - now));
    nap = std::min(nap * 2, std::chrono::microseconds(20'000));
  }
}

ChildExit ChildProcess::wait() {
  for (;;) {
    if (auto e = wait_for(std::chrono::hours(1))) return *e;
  }
}

ChildExit ChildProcess::stop(std::chrono::nanoseconds grace, int first) {
  if (exited_now()) return collect();
  if (first != 0) ::kill(pid_, first);
  if (auto e = wait_for(grace)) return *e;
  ::kill(pid_, SIGKILL);
  return collect();
}

}  // namespace cerulion::measurement
