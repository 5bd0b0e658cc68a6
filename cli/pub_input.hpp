// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where pub's messages come from: a whole file, or stdin split into messages (lines, NUL-separated
// or whole) without holding more than one message in memory.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/topic_type.hpp"

namespace cerulion::cli {

/// A file to send whole, opened and checked when made (Exit 1 with one line when it cannot be
/// read, is a directory, or is a file larger than `ceiling`: "'a.bin' is N bytes, over
/// `over_ceiling`"), so that a bad file is refused before a topic is touched.
class InputFile {
 public:
  InputFile(std::string path, std::uint64_t ceiling, std::string over_ceiling);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  /// Its bytes, read once, up to one byte past `ceiling`: endless input (/dev/zero, a pipe that
  /// does not end) is refused (Exit 1, one line) without being read through, having held at most
  /// about `ceiling` bytes. They live as long as this object.
  std::span<const std::byte> read(std::uint64_t ceiling, const std::string& over_ceiling);

 private:
  struct Free {
    void operator()(std::byte* bytes) const noexcept;
  };
  std::string path_;
  int fd_ = -1;
  std::uint64_t known_size_ = 0;  ///< a regular file's size, else 0
  /// Grown with realloc, which moves pages rather than copying them: never two copies at once.
  std::unique_ptr<std::byte[], Free> data_;
  std::size_t size_ = 0;
};

/// InputFile(path, ceiling, over_ceiling).read(ceiling, over_ceiling).
std::vector<std::byte> read_whole_file(const std::string& path, std::uint64_t ceiling,
                                       const std::string& over_ceiling = "the payload ceiling");

/// Splits stdin into messages without holding more than one message (plus a read) in memory.
class StdinMessages {
 public:
  StdinMessages(char delimiter, bool whole, std::uint64_t ceiling)
      : delimiter_(delimiter), whole_(whole), ceiling_(ceiling) {}

  /// The next message, or nullopt at the end of stdin. The view lives until the next call.
  std::optional<std::span<const std::byte>> next();

  /// How many messages next() has returned (the number of the last one, from 1).
  std::uint64_t messages() const { return messages_; }

 private:
  std::span<const std::byte> bytes(std::size_t begin, std::size_t end);
  void fill();

  static constexpr std::size_t kReadSize = 256 * 1024;
  char delimiter_;
  bool whole_;
  std::uint64_t ceiling_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, scanned_ = 0, consumed_ = 0, filled_ = 0;
  std::uint64_t messages_ = 0;
  bool eof_ = false;
};

/// Checks every message against the topic's type before it goes out (a json topic's messages must
/// parse; others are not looked into). An invalid message ends pub (exit 1, one line naming it and
/// the error) or, when skipping, is reported on stderr and left out.
class PayloadCheck {
 public:
  PayloadCheck(TopicType type, bool skip_invalid) : type_(std::move(type)), skip_invalid_(skip_invalid) {}

  /// True when the message named `where` ("stdin line 3") may be published; false when it is
  /// invalid and skipped. `unpublished` ends the error line: what was left out.
  bool accept(std::span<const std::byte> message, const std::string& where, std::string_view unpublished);

  /// True when messages of the topic's type are looked into at all.
  bool inspects() const { return type_.message_encoding == "json"; }
  const TopicType& type() const { return type_; }
  std::uint64_t checked() const { return checked_; }
  std::uint64_t skipped() const { return skipped_; }
  /// "skipped 2 invalid messages of 10" on stderr, when something was skipped.
  void report_skipped() const;

 private:
  TopicType type_;
  bool skip_invalid_;
  std::uint64_t checked_ = 0;
  std::uint64_t skipped_ = 0;
};

}  // namespace cerulion::cli
