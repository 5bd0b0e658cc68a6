// SPDX-License-Identifier: Apache-2.0
// Where pub's messages come from (see pub_input.hpp).

#include "pub_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "command.hpp"

namespace cerulion::cli {

namespace {

[[noreturn]] void refuse_longer(const std::string& path, std::uint64_t size, bool exact, std::uint64_t ceiling,
                                const std::string& over_ceiling) {
  const std::string how_long = exact ? fmt::format("is {}, over", counted(size, "byte")) : std::string("goes on past");
  throw Exit{kExitFailure, fmt::format("'{}' {} {} ({}); nothing published", path, how_long, over_ceiling,
                                       counted(ceiling, "byte"))};
}

}  // namespace

InputFile::InputFile(std::string path, std::uint64_t ceiling, std::string over_ceiling) : path_(std::move(path)) {
  // Opening a FIFO waits for its writer, as reading `--file <(command)` must; Ctrl-C ends the wait
  // (the stop handlers are installed before, without SA_RESTART).
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0 && errno == EINTR && stop_requested()) throw Exit{stop_exit_code(), {}};
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path_, std::strerror(errno))};
  }
  if (S_ISDIR(st.st_mode)) throw Exit{kExitFailure, fmt::format("cannot read '{}': is a directory", path_)};
  if (S_ISREG(st.st_mode)) {
    known_size_ = static_cast<std::uint64_t>(st.st_size);
    if (known_size_ > ceiling) refuse_longer(path_, known_size_, true, ceiling, over_ceiling);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::Free::operator()(std::byte* bytes) const noexcept { std::free(bytes); }

std::span<const std::byte> InputFile::read(std::uint64_t ceiling, const std::string& over_ceiling) {
  constexpr std::uint64_t kFirstRead = 64 * 1024;
  constexpr std::uint64_t kLargestRead = 1024 * 1024;
  // One byte past the ceiling tells a file that ends there from one that goes on.
  const std::uint64_t limit = ceiling + (ceiling < UINT64_MAX ? 1 : 0);
  if (known_size_ > ceiling) refuse_longer(path_, known_size_, true, ceiling, over_ceiling);
  std::uint64_t capacity = 0;
  for (;;) {
    if (size_ == capacity) {
      if (capacity == limit) refuse_longer(path_, size_, false, ceiling, over_ceiling);
      const std::uint64_t want = std::min(std::max({known_size_ + 1, 2 * capacity, kFirstRead}), limit);
      auto* grown = static_cast<std::byte*>(std::realloc(data_.get(), want));
      if (grown == nullptr) {
        throw Exit{kExitFailure, fmt::format("cannot read '{}': no memory for more than {}", path_,
                                             counted(size_, "byte"))};
      }
      (void)data_.release();
      data_.reset(grown);
      capacity = want;
    }
    const ssize_t n = ::read(fd_, data_.get() + size_, std::min(capacity - size_, kLargestRead));
    if (n > 0) {
      size_ += static_cast<std::size_t>(n);
    } else if (n == 0) {
      return {data_.get(), size_};
    } else if (errno == EINTR) {
      if (stop_requested()) throw Exit{stop_exit_code(), {}};
    } else {
      throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path_, std::strerror(errno))};
    }
  }
}

std::vector<std::byte> read_whole_file(const std::string& path, std::uint64_t ceiling,
                                       const std::string& over_ceiling) {
  InputFile file(path, ceiling, over_ceiling);
  const auto bytes = file.read(ceiling, over_ceiling);
  return {bytes.begin(), bytes.end()};
}

std::optional<std::span<const std::byte>> StdinMessages::next() {
  begin_ = consumed_;
  for (;;) {
    if (!whole_) {
      auto* found = static_cast<const char*>(std::memchr(buffer_.data() + scanned_, delimiter_, filled_ - scanned_));
      if (found != nullptr) {
        std::size_t end = static_cast<std::size_t>(found - buffer_.data());
        consumed_ = scanned_ = end + 1;
        return bytes(begin_, end);
      }
    }
    scanned_ = filled_;
    if (filled_ - begin_ > ceiling_) {
      throw Exit{kExitFailure, fmt::format("stdin message #{} is longer than the payload ceiling ({}); "
                                           "nothing of it was published", messages_ + 1, counted(ceiling_, "byte"))};
    }
    if (eof_) {
      if (filled_ == begin_ && !(whole_ && messages_ == 0)) return std::nullopt;
      consumed_ = scanned_ = filled_;
      return bytes(begin_, filled_);  // the last message needs no delimiter
    }
    fill();
  }
}

std::span<const std::byte> StdinMessages::bytes(std::size_t begin, std::size_t end) {
  ++messages_;
  return {reinterpret_cast<const std::byte*>(buffer_.data()) + begin, end - begin};
}

void StdinMessages::fill() {
  // Move the unfinished message to the front, then read behind it.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, filled_ - begin_);
    filled_ -= begin_;
    scanned_ -= begin_;
    consumed_ -= begin_;
    begin_ = 0;
  }
  // The unfinished message is at most the ceiling long (next() refused it otherwise): reading up to
  // one byte past the ceiling tells one that ends there from one that goes on, and no more is held.
  const std::uint64_t most = std::max<std::uint64_t>(ceiling_ + (ceiling_ < UINT64_MAX ? 1 : 0), kReadSize);
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadSize, most - filled_));
  if (buffer_.size() - filled_ < want) {
    // Grown by doubling as a vector would, but never past `most`, and straight to it where the next
    // doubling would pass it: one copy at most of what is held, never the whole ceiling twice.
    auto grown = std::min<std::uint64_t>(std::max<std::uint64_t>(2 * buffer_.size(), filled_ + want), most);
    if (most - grown < grown) grown = most;
    buffer_.reserve(static_cast<std::size_t>(grown));
    buffer_.resize(static_cast<std::size_t>(grown));
  }
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer_.data() + filled_, want);
    if (n > 0) {
      filled_ += static_cast<std::size_t>(n);
      return;
    }
    if (n == 0) {
      eof_ = true;
      return;
    }
    if (errno == EINTR) {
      if (stop_requested()) throw Exit{stop_exit_code(), {}};
      continue;
    }
    throw Exit{kExitFailure, fmt::format("reading stdin: {}", std::strerror(errno))};
  }
}

bool PayloadCheck::accept(std::span<const std::byte> message, const std::string& where,
                          std::string_view unpublished) {
  ++checked_;
  Status status = check_payload(type_, message);
  if (status.ok()) return true;
  if (!skip_invalid_) {
    throw Exit{kExitFailure, fmt::format("{}: {} (the topic carries {}); {}", where, status.message(),
                                         describe(type_), unpublished)};
  }
  ++skipped_;
  fmt::print(stderr, "cerulion: warning: {}: {}; skipped\n", where, status.message());
  return false;
}

void PayloadCheck::report_skipped() const {
  if (skipped_ == 0) return;
  fmt::print(stderr, "cerulion: skipped {} of {} (not valid {})\n", skipped_, counted(checked_, "message"),
             type_.message_encoding);
}

}  // namespace cerulion::cli
