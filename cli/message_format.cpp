// SPDX-License-Identifier: Apache-2.0
// Text renderings and stdout plumbing shared by pub, echo, topic and clean.

#include "message_format.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/core/names.hpp"
#include "command.hpp"

namespace cerulion::cli {
namespace {

/// Length of the UTF-8 sequence starting at `i`, or 0 when it is not valid there.
std::size_t utf8_sequence_length(std::span<const std::byte> bytes, std::size_t i) noexcept {
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  unsigned char lead = at(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlongs
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  if (at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return length;
}

bool is_allowed_control(unsigned char c) noexcept { return c == '\t' || c == '\n' || c == '\r'; }

/// `text` with LF, CR, tab and backslash as the C escapes \n \r \t \\, so it is one line.
std::string escape_line_breaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;  // a backslash the message holds is never read as an escape
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace

bool is_valid_utf8(std::span<const std::byte> bytes) noexcept {
  for (std::size_t i = 0; i < bytes.size();) {
    std::size_t length = utf8_sequence_length(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

bool is_printable_text(std::span<const std::byte> bytes) noexcept {
  for (std::size_t i = 0; i < bytes.size();) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if ((c < 0x20 && !is_allowed_control(c)) || c == 0x7F) return false;
    std::size_t length = utf8_sequence_length(bytes, i);
    if (length == 0) return false;
    // C1 controls (U+0080..U+009F) are encoded as C2 80..C2 9F.
    if (length == 2 && c == 0xC2 && static_cast<unsigned char>(bytes[i + 1]) < 0xA0) return false;
    i += length;
  }
  return true;
}

std::string hex_preview(std::span<const std::byte> bytes, std::size_t limit) {
  std::size_t shown = (limit == 0 || bytes.size() <= limit) ? bytes.size() : limit;
  std::string out = fmt::format("[{} B]", bytes.size());
  out.reserve(out.size() + shown * 3 + 4);
  static const char* digits = "0123456789abcdef";
  for (std::size_t i = 0; i < shown; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    out.push_back(' ');
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xF]);
  }
  if (shown < bytes.size()) out += " ...";
  return out;
}

std::string render_message_text(std::span<const std::byte> bytes, std::size_t limit) {
  if (!is_printable_text(bytes)) return hex_preview(bytes, limit);
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (limit == 0 || bytes.size() <= limit) return escape_line_breaks(text);
  // Cut at a character boundary so the preview stays valid UTF-8.
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... [{} B]", escape_line_breaks(text.substr(0, cut)), bytes.size());
}

std::string render_json_text(std::string_view compact, std::size_t limit) {
  if (limit == 0 || compact.size() <= limit) return std::string(compact);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(compact[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}... [{} B]", compact.substr(0, cut), compact.size());
}

std::optional<std::string> unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out.push_back(text[i]);
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    switch (text[i]) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case '0': out.push_back('\0'); break;
      case '\\': out.push_back('\\'); break;
      case 'x': {
        if (i + 2 >= text.size()) return std::nullopt;
        std::string hex(text.substr(i + 1, 2));
        if (!std::isxdigit(static_cast<unsigned char>(hex[0])) ||
            !std::isxdigit(static_cast<unsigned char>(hex[1]))) {
          return std::nullopt;
        }
        out.push_back(static_cast<char>(std::stoi(hex, nullptr, 16)));
        i += 2;
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

std::string checked_topic_name(std::string_view name, std::string_view domain) {
  std::string topic = take(normalize_topic_name(name));
  check(validate_segment_name(domain, topic));
  return topic;
}

Timeout seconds_to_timeout(double seconds) {
  return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
}

std::optional<Mode> mode_from_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return parse_mode(text);
}

StdoutWriter::~StdoutWriter() {
  // Best effort only: the owner flushes explicitly where an error can still be reported.
  if (!buffer_.empty()) {
    const char* data = buffer_.data();
    std::size_t left = buffer_.size();
    while (left > 0) {
      ssize_t n = ::write(STDOUT_FILENO, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      data += n;
      left -= static_cast<std::size_t>(n);
    }
  }
}

void StdoutWriter::append(std::string_view text) {
  if (buffer_.empty() && text.size() >= threshold_) {
    write_all(text.data(), text.size());  // large payloads go out without a copy
    return;
  }
  buffer_.append(text);
  if (buffer_.size() >= threshold_) flush();
}

void StdoutWriter::append(std::span<const std::byte> bytes) {
  append(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void StdoutWriter::flush() {
  if (buffer_.empty()) return;
  try {
    write_all(buffer_.data(), buffer_.size());
  } catch (...) {
    buffer_.clear();  // the destructor must not try it again
    throw;
  }
  buffer_.clear();
}

void StdoutWriter::write_all(const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(STDOUT_FILENO, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw Exit{kExitOk, {}};  // the reader went away: not an error
      throw Exit{kExitFailure, fmt::format("writing to stdout: {}", std::strerror(errno))};
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool sleep_unless_stopped(std::chrono::nanoseconds duration) {
  auto deadline = std::chrono::steady_clock::now() + duration;
  while (!stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    // Short steps, so Ctrl-C is noticed quickly even though sleep_for resumes after EINTR.
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(deadline - now, std::chrono::milliseconds(50)));
  }
  return false;
}

}  // namespace cerulion::cli
