// SPDX-License-Identifier: Apache-2.0
// Where pub's messages come from (see pub_input.hpp).

#include "pub_input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "command.hpp"

namespace cerulion::cli {

std::vector<std::byte> read_whole_file(const std::string& path, std::uint64_t ceiling,
                                       const std::string& over_ceiling) {
  std::ifstream in(path, std::ios::binary);
  struct stat st {};
  if (!in || ::stat(path.c_str(), &st) != 0) {
    throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  }
  if (S_ISDIR(st.st_mode)) throw Exit{kExitFailure, fmt::format("cannot read '{}': is a directory", path)};
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > ceiling) {
    throw Exit{kExitFailure, fmt::format("'{}' is {}, over {} ({}); nothing published", path,
                                         counted(static_cast<std::uint64_t>(st.st_size), "byte"), over_ceiling,
                                         counted(ceiling, "byte"))};
  }
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
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
  if (buffer_.size() - filled_ < kReadSize) buffer_.resize(filled_ + kReadSize);
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer_.data() + filled_, kReadSize);
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
