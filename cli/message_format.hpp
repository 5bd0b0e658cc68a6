// SPDX-License-Identifier: Apache-2.0
#pragma once
// How pub/echo/topic turn bytes, durations and participants into text, and how they write to
// stdout without SIGPIPE noise. Shared by the everyday subcommands (pub, echo, topic, clean).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cerulion/core/options.hpp"
#include "cerulion/core/status.hpp"

namespace cerulion::cli {

/// True when `bytes` are valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::span<const std::byte> bytes) noexcept;

/// True when `bytes` are valid UTF-8 without control characters other than tab, LF and CR, so
/// they can go to a terminal (those three escaped).
bool is_printable_text(std::span<const std::byte> bytes) noexcept;

/// "[5 B] 68 65 6c 6c 6f": a hex preview of at most `limit` bytes (0 = all), "..." when cut.
std::string hex_preview(std::span<const std::byte> bytes, std::size_t limit);

/// The human rendering of one message, always one line: printable text with its line breaks,
/// tabs and backslashes escaped, anything else as a hex preview; longer than `limit` bytes (0 =
/// no limit) is cut and says how long it was.
std::string render_message_text(std::span<const std::byte> bytes, std::size_t limit);

/// The human rendering of a JSON message, compact on one line (as nlohmann's dump() writes it;
/// JSON escapes every line break), cut like render_message_text when longer than `limit` bytes.
std::string render_json_text(std::string_view compact, std::size_t limit);

/// Interprets C escapes in a separator given on the command line: \n \t \r \0 \\ \xHH.
/// nullopt when an escape is malformed.
std::optional<std::string> unescape(std::string_view text);

/// The normalized form of a topic named on the command line (also checked against the domain's
/// length), or a usage error that names the topic itself, escaped, so no prefix repeats it.
std::string checked_topic_name(std::string_view name, std::string_view domain);

/// Seconds (as given on the command line) as a core Timeout.
Timeout seconds_to_timeout(double seconds);

/// The mode given as --mode ("lockstep", "free-run"); nullopt when not given.
std::optional<Mode> mode_from_option(const std::string& text);

/// Writes to stdout with a buffer of its own. A closed pipe (EPIPE) ends the program quietly
/// with exit 0 (`echo ... | head -n 3`); any other write error exits 1.
class StdoutWriter {
 public:
  explicit StdoutWriter(std::size_t flush_threshold = 64 * 1024) : threshold_(flush_threshold) {}
  StdoutWriter(const StdoutWriter&) = delete;
  StdoutWriter& operator=(const StdoutWriter&) = delete;
  ~StdoutWriter();

  void append(std::string_view text);
  void append(std::span<const std::byte> bytes);
  /// Writes everything buffered now.
  void flush();

 private:
  void write_all(const char* data, std::size_t size);
  std::string buffer_;
  std::size_t threshold_;
};

/// Sleeps for `duration` in short steps; returns false as soon as a stop was requested.
bool sleep_unless_stopped(std::chrono::nanoseconds duration);

}  // namespace cerulion::cli
