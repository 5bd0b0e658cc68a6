// SPDX-License-Identifier: Apache-2.0
#include "supervise.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <mutex>
#include <thread>

#include "command.hpp"

namespace cerulion::cli {
namespace {

/// A line waits this long for room in stderr; a progress line does not wait.
constexpr int kLineWaitMs = 1000;
/// What one write(2) puts in a pipe whole (PIPE_BUF): a longer line is cut there.
constexpr std::size_t kMaxLine = PIPE_BUF;
constexpr auto kTurn = std::chrono::milliseconds(50);
constexpr auto kProgressPeriod = std::chrono::seconds(1);

/// stderr, as the whole process shares it.
struct Stderr {
  std::mutex mutex;
  bool tty = ::isatty(STDERR_FILENO) == 1;
  bool broken = false;     // a write failed for good: nothing more is written
  bool mid_line = false;   // a progress line is on the terminal, not yet ended
  bool stalled = false;    // the last line found no room: the next ones do not wait for it

  // Writes `text` whole if stderr has room within `wait_ms`; false when it was left out.
  bool write(std::string_view text, int wait_ms) {
    if (broken) return false;
    pollfd fd{STDERR_FILENO, POLLOUT, 0};
    int ready = 0;
    do {
      ready = ::poll(&fd, 1, stalled ? 0 : wait_ms);
    } while (ready < 0 && errno == EINTR && !stop_requested());
    if (ready <= 0) {
      stalled = wait_ms > 0;
      return false;
    }
    if ((fd.revents & (POLLERR | POLLNVAL)) != 0) {
      broken = true;  // a pipe whose reader is gone, or no stderr at all
      return false;
    }
    stalled = false;
    while (!text.empty()) {
      const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) broken = true;  // EPIPE, ENOSPC, EIO...: it will not get better
        return false;
      }
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  void end_progress() {
    if (!mid_line) return;
    mid_line = false;
    (void)write("\n", kLineWaitMs);
  }
};

Stderr& stderr_state() {
  static Stderr state;
  return state;
}

std::string cut(std::string_view text, std::size_t max) {
  if (text.size() < max) return std::string(text);
  return std::string(text.substr(0, max - 4)) + "...";
}

void say_progress(std::string_view line) {
  Stderr& err = stderr_state();
  std::lock_guard lock(err.mutex);
  if (err.tty) {
    // A terminal that has no room now skips this one; the next second brings another.
    if (err.write(cut("\r\033[K" + std::string(line), kMaxLine), 0)) err.mid_line = true;
  } else {
    (void)err.write(cut(line, kMaxLine - 1) + "\n", 0);
  }
}

void end_progress() {
  Stderr& err = stderr_state();
  std::lock_guard lock(err.mutex);
  err.end_progress();
}

}  // namespace

void say(std::string_view line) {
  Stderr& err = stderr_state();
  std::lock_guard lock(err.mutex);
  err.end_progress();
  (void)err.write(cut(printable(line), kMaxLine - 1) + "\n", kLineWaitMs);
}

std::string event_line(const recording::Event& event) {
  switch (event.kind) {
    case recording::EventKind::Warning: return "cerulion: warning: " + event.message;
    case recording::EventKind::Info:
    case recording::EventKind::Problem: break;
  }
  return "cerulion: " + event.message;
}

std::size_t say_events(recording::EventQueue& events) {
  std::size_t problems = 0;
  for (const auto& event : events.drain()) {
    say(event_line(event));
    if (event.kind == recording::EventKind::Problem) ++problems;
  }
  return problems;
}

Supervised supervise(const Supervision& s) {
  using Clock = std::chrono::steady_clock;
  const auto began = Clock::now();
  auto next_progress = began + kProgressPeriod;
  Supervised out;
  for (;;) {
    if (s.each_turn) s.each_turn();
    if (s.events != nullptr) out.problems += say_events(*s.events);
    const auto now = Clock::now();
    out.elapsed_s = std::chrono::duration<double>(now - began).count();
    if (stop_requested()) {
      out.ended = Ended::Stopped;
      break;
    }
    if (s.failed) {
      if (Status st = s.failed(); !st.ok()) {
        out.ended = Ended::Failed;
        out.error = std::move(st);
        break;
      }
    }
    if (s.finished && s.finished()) {
      out.ended = Ended::Finished;
      break;
    }
    if (s.duration_s > 0 && out.elapsed_s >= s.duration_s) {
      out.ended = Ended::Duration;
      break;
    }
    if (s.progress && now >= next_progress) {
      if (std::string line = s.progress(out.elapsed_s); !line.empty()) say_progress(line);
      // A loop held up (a slow stderr) catches up without a burst of lines.
      while (next_progress <= now) next_progress += kProgressPeriod;
    }
    std::this_thread::sleep_for(kTurn);
  }
  end_progress();
  return out;
}

}  // namespace cerulion::cli
