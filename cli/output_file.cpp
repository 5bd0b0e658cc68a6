// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/core.h>

#include "command.hpp"
#include "supervise.hpp"

namespace cerulion::cli {
namespace {

/// How often a FIFO without a reader is tried again.
constexpr auto kReaderPoll = std::chrono::milliseconds(20);

}  // namespace

void write_output_file(const std::string& path, std::string_view text, std::string_view what) {
  const auto failed = [&](const char* why) {
    return Exit{kExitFailure, fmt::format("cannot write {} to '{}': {}", what, path, why)};
  };
  // Opened without waiting: on a FIFO nobody reads yet that fails (ENXIO) at once, and is tried
  // again while nothing stops the command.
  const bool stopped_before = stop_requested();
  int fd = -1;
  for (;;) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != ENXIO) break;
    if (stopped_before) {
      say(fmt::format("cerulion: warning: {} was not written to '{}': nobody reads that FIFO", what, path));
      return;
    }
    if (stop_requested()) {
      throw Exit{stop_exit_code(), fmt::format("{} was not written to '{}': nobody read that FIFO", what, path)};
    }
    std::this_thread::sleep_for(kReaderPoll);
  }
  if (fd < 0) throw failed(std::strerror(errno));
  // Written as a file is: a FIFO's reader that reads slowly is waited for.
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR && stop_requested()) {
      // A stop while a reader holds the write back (a further one, after an interrupted run).
      ::close(fd);
      throw Exit{stop_exit_code(), fmt::format("{} was not written whole to '{}'", what, path)};
    } else if (n < 0 && errno != EINTR) {
      const int error = errno;
      ::close(fd);
      throw failed(std::strerror(error));
    }
  }
  if (::close(fd) != 0 && errno != EINTR) throw failed(std::strerror(errno));
}

}  // namespace cerulion::cli
