// SPDX-License-Identifier: Apache-2.0
// `cerulion pub TOPIC [MESSAGE...]`: publishes arguments, a file, synthetic payloads or stdin.
// Quiet by default so it sits in pipelines; every message goes out whole or not at all.

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/publisher.hpp"
#include "command.hpp"
#include "message_format.hpp"

namespace cerulion::cli {
namespace {

struct PubSettings {
  std::string topic;
  std::vector<std::string> messages;
  std::string stdin_framing = "lines";
  std::string file;
  std::uint64_t size = 0;
  std::string fill = "zero";
  double rate_hz = 0;
  std::uint64_t times = 0;
  bool once = false;
  std::uint32_t wait_subscribers = 0;
  double timeout_s = 0;
  std::string mode;
  std::uint32_t depth = 0;
  std::uint64_t max_payload = kDefaultMaxPayload;
  std::string group;
  bool verbose = false;

  CLI::Option* rate_option = nullptr;
  CLI::Option* times_option = nullptr;
  CLI::Option* size_option = nullptr;
  CLI::Option* stdin_option = nullptr;
  CLI::Option* depth_option = nullptr;
  CLI::Option* timeout_option = nullptr;
};

/// Publishes one message at a time at a steady rate, with the waits and errors of the topic.
class PacedPublisher {
 public:
  PacedPublisher(Publisher publisher, const PubSettings& settings, double rate_hz)
      : publisher_(std::move(publisher)), settings_(settings) {
    if (settings.timeout_option->count() > 0) room_timeout_ = seconds_to_timeout(settings.timeout_s);
    if (rate_hz > 0) period_ = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / rate_hz));
  }

  Publisher& publisher() { return publisher_; }

  /// Publishes a copy of `bytes`.
  void publish(std::span<const std::byte> bytes) {
    check_fits(bytes.size());
    pace();
    report(publisher_.publish_copy(bytes, room_timeout_), bytes.size());
  }

  /// Publishes `size` bytes written in place by `fill` (zero copy).
  template <typename Fill>
  void publish_in_place(std::size_t size, Fill&& fill) {
    check_fits(size);
    pace();
    auto loan = publisher_.loan(size, room_timeout_);
    if (!loan) fail(loan.status());
    fill(loan->data());
    report(publisher_.publish(std::move(*loan), room_timeout_), size);
  }

  std::uint64_t published() const { return published_; }

 private:
  void check_fits(std::size_t size) const {
    if (size > publisher_.max_payload()) {
      throw Exit{kExitFailure, fmt::format("message #{} is {}, over the payload ceiling of topic '{}' "
                                           "({}); nothing of it was published",
                                           published_ + 1, counted(size, "byte"), publisher_.topic(),
                                           counted(publisher_.max_payload(), "byte"))};
    }
  }

  void pace() {
    if (period_.count() == 0) return;
    auto now = std::chrono::steady_clock::now();
    if (!next_.has_value()) next_ = now;
    if (*next_ > now && !sleep_unless_stopped(*next_ - now)) throw Exit{stop_exit_code(), {}};
    // A late message does not make the next ones burst: the schedule restarts from now.
    next_ = std::max(*next_ + period_, now);
  }

  void report(Result<std::uint64_t>&& sequence, std::size_t size) {
    if (!sequence) fail(sequence.status());
    ++published_;
    if (settings_.verbose) {
      verbose_out_.append(fmt::format("published #{} ({})\n", *sequence, counted(size, "byte")));
      verbose_out_.flush();
    }
  }

  [[noreturn]] void fail(const Status& status) const {
    if (status.code() == ErrorCode::Timeout) {
      throw Exit{kExitFailure, fmt::format("no room on '{}' within {} s: a lockstep subscriber is not keeping up",
                                           publisher_.topic(), settings_.timeout_s)};
    }
    check(status, publisher_.topic());
    throw Exit{kExitFailure, status.message()};
  }

  Publisher publisher_;
  const PubSettings& settings_;
  Timeout room_timeout_;
  std::chrono::nanoseconds period_{0};
  std::optional<std::chrono::steady_clock::time_point> next_;
  std::uint64_t published_ = 0;
  StdoutWriter verbose_out_{0};
};

std::vector<std::byte> read_whole_file(const std::string& path, std::uint64_t ceiling) {
  std::ifstream in(path, std::ios::binary);
  struct stat st {};
  if (!in || ::stat(path.c_str(), &st) != 0) {
    throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  }
  if (S_ISDIR(st.st_mode)) throw Exit{kExitFailure, fmt::format("cannot read '{}': is a directory", path)};
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > ceiling) {
    throw Exit{kExitFailure, fmt::format("'{}' is {}, over the payload ceiling ({}); nothing published", path,
                                         counted(static_cast<std::uint64_t>(st.st_size), "byte"),
                                         counted(ceiling, "byte"))};
  }
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Exit{kExitFailure, fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

/// Splits stdin into messages without holding more than one message (plus a read) in memory.
class StdinMessages {
 public:
  StdinMessages(char delimiter, bool whole, std::uint64_t ceiling)
      : delimiter_(delimiter), whole_(whole), ceiling_(ceiling) {}

  /// The next message, or nullopt at the end of stdin. The view lives until the next call.
  std::optional<std::span<const std::byte>> next() {
    begin_ = consumed_;
    for (;;) {
      if (!whole_) {
        auto* found = static_cast<const char*>(
            std::memchr(buffer_.data() + scanned_, delimiter_, filled_ - scanned_));
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

 private:
  std::span<const std::byte> bytes(std::size_t begin, std::size_t end) {
    ++messages_;
    return {reinterpret_cast<const std::byte*>(buffer_.data()) + begin, end - begin};
  }

  void fill() {
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

  static constexpr std::size_t kReadSize = 256 * 1024;
  char delimiter_;
  bool whole_;
  std::uint64_t ceiling_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, scanned_ = 0, consumed_ = 0, filled_ = 0;
  std::uint64_t messages_ = 0;
  bool eof_ = false;
};

void fill_payload(std::span<std::byte> out, const std::string& fill, std::uint64_t message_number,
                  std::mt19937_64& random) {
  if (fill == "zero") {
    std::memset(out.data(), 0, out.size());
  } else if (fill == "random") {
    for (std::size_t i = 0; i < out.size(); i += 8) {
      std::uint64_t word = random();
      std::memcpy(out.data() + i, &word, std::min<std::size_t>(8, out.size() - i));
    }
  } else {  // counter: the message number, little-endian, repeated over the payload
    std::byte word[8];
    for (int k = 0; k < 8; ++k) word[k] = static_cast<std::byte>((message_number >> (8 * k)) & 0xFF);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = word[i % 8];
  }
}

void wait_for_subscribers(Publisher& publisher, const PubSettings& settings) {
  if (settings.wait_subscribers == 0) return;
  Timeout timeout;
  if (settings.timeout_option->count() > 0) timeout = seconds_to_timeout(settings.timeout_s);
  Status status = publisher.wait_for_subscribers(settings.wait_subscribers, timeout);
  if (status.code() == ErrorCode::Timeout) {
    throw Exit{kExitFailure, fmt::format("timed out after {} s waiting for {} on '{}' ({} attached)",
                                         settings.timeout_s, counted(settings.wait_subscribers, "subscriber"),
                                         publisher.topic(), publisher.subscriber_count())};
  }
  check(status, publisher.topic());
}

void run_pub(const PubSettings& settings) {
  const std::string topic = checked_topic_name(settings.topic, globals().domain);
  bool from_stdin = settings.messages.empty() && settings.file.empty() && settings.size_option->count() == 0;
  if (from_stdin && settings.stdin_option->count() == 0 && ::isatty(STDIN_FILENO)) {
    throw Exit{kExitUsage, "nothing to publish: give MESSAGE arguments, --file, --size, or pipe messages into stdin"};
  }
  std::optional<std::uint64_t> limit;  // messages (stdin) or rounds (fixed payloads); nullopt = no end
  if (settings.once) limit = 1;
  if (settings.times_option->count() > 0) limit = settings.times;
  double rate_hz = settings.rate_option->count() > 0 ? settings.rate_hz : (from_stdin ? 0.0 : 1.0);

  std::vector<std::byte> file_bytes;
  if (!settings.file.empty()) file_bytes = read_whole_file(settings.file, settings.max_payload);

  install_stop_handlers();
  PublisherOptions options;
  options.topic.domain = globals().domain;
  options.topic.mode = mode_from_option(settings.mode);
  if (settings.depth_option->count() > 0) options.topic.depth = settings.depth;
  options.topic.max_payload = settings.max_payload;
  options.topic.group = settings.group;
  options.wait.cancel = stop_flag();
  PacedPublisher out(take(Publisher::create(topic, options), topic), settings, rate_hz);
  wait_for_subscribers(out.publisher(), settings);

  if (from_stdin) {
    bool whole = settings.stdin_framing == "whole";
    StdinMessages input(settings.stdin_framing == "null" ? '\0' : '\n', whole, out.publisher().max_payload());
    while (!limit || out.published() < *limit) {
      auto message = input.next();
      if (!message) break;
      out.publish(*message);
    }
    if (limit && out.published() < *limit) {
      throw Exit{kExitFailure, fmt::format("stdin ended after {} of {}", out.published(), counted(*limit, "message"))};
    }
    return;
  }

  std::mt19937_64 random{std::random_device{}()};
  for (std::uint64_t round = 0; !limit || round < *limit; ++round) {
    if (stop_requested()) throw Exit{stop_exit_code(), {}};
    if (settings.size_option->count() > 0) {
      out.publish_in_place(settings.size, [&](std::span<std::byte> payload) {
        fill_payload(payload, settings.fill, round, random);
      });
    } else if (!settings.file.empty()) {
      out.publish(file_bytes);
    } else {
      for (const auto& message : settings.messages) {
        out.publish(std::as_bytes(std::span(message.data(), message.size())));
      }
    }
  }
}

void add_pub_command(CLI::App& app) {
  auto settings = std::make_shared<PubSettings>();
  auto* cmd = app.add_subcommand("pub", "Publish messages: arguments, a file, synthetic payloads or stdin");
  cmd->footer(
      "Arguments and --file/--size repeat, one message a second (-r), until Ctrl-C unless -n/--once; stdin\n"
      "is published once, as fast as lockstep allows.\n"
      "Examples:\n"
      "  cerulion pub /chatter hello --once\n"
      "  seq 1 1000 | cerulion pub /numbers\n"
      "  cerulion pub /blob --file image.png --once --wait-subscribers 1 --timeout 5");
  cmd->add_option("topic", settings->topic, "Topic name, e.g. /robot/cmd")->required();
  auto* messages = cmd->add_option("message", settings->messages, "Messages, one per argument");
  settings->stdin_option =
      cmd->add_option("--stdin", settings->stdin_framing,
                      "How stdin splits into messages: lines (default, newline stripped), null (NUL separated), "
                      "whole (all of stdin is one message)")
          ->check(CLI::IsMember({"lines", "null", "whole"}));
  auto* file = cmd->add_option("--file", settings->file, "Publish the bytes of a file as one message");
  settings->size_option = cmd->add_option("--size", settings->size, "Publish synthetic payloads of SIZE bytes")
                              ->transform(size_at_most(kLargestPayload));
  auto* fill = cmd->add_option("--fill", settings->fill,
                               "Synthetic payload content: zero (default), random, counter (message number as "
                               "64-bit little-endian, repeated)")
                   ->check(CLI::IsMember({"zero", "random", "counter"}));
  settings->rate_option = cmd->add_option("-r,--rate", settings->rate_hz,
                                          "Messages per second (0 = as fast as possible; default 1 for "
                                          "arguments/--file/--size, 0 for stdin)")
                              ->check(rate_hz(1e9));
  settings->times_option =
      cmd->add_option("-n,--times", settings->times,
                      "Publish N rounds of the arguments (or N payloads); with stdin, stop after N messages")
          ->check(positive_count());
  auto* once = cmd->add_flag("-1,--once", settings->once, "Publish once and exit (same as -n 1)");
  cmd->add_option("--wait-subscribers", settings->wait_subscribers,
                  "Wait for N subscribers before the first message")
      ->check(count_in(0, kMaxParticipants));
  settings->timeout_option =
      cmd->add_option("--timeout", settings->timeout_s,
                      "Give up (exit 1) after SEC waiting for subscribers or for lockstep room")
          ->check(positive_seconds());
  cmd->add_option("--mode", settings->mode, "Topic mode: lockstep (default) or free-run")
      ->check(CLI::IsMember({"lockstep", "free-run"}));
  settings->depth_option = cmd->add_option("--depth", settings->depth, "Ring depth of a new topic (messages, default 16)")
                               ->check(count_in(1, kMaxDepth));
  cmd->add_option("--max-payload", settings->max_payload, "Payload ceiling of a new topic (default 1GiB, at most 1TiB)")
      ->transform(size_at_most(kLargestPayload));
  cmd->add_option("--group", settings->group,
                  "Share a new topic with this group (mode 0660); an existing topic must be shared with it")
      ->check(group_validator());
  cmd->add_flag("-v,--verbose", settings->verbose, "Print 'published #SEQ (N bytes)' for every message");

  once->excludes(settings->times_option);
  messages->excludes(file)->excludes(settings->size_option)->excludes(settings->stdin_option);
  file->excludes(settings->size_option)->excludes(settings->stdin_option);
  settings->size_option->excludes(settings->stdin_option);
  fill->needs(settings->size_option);
  cmd->callback([settings] { run_pub(*settings); });
}

static CommandRegistration registration(10, add_pub_command);

}  // namespace
}  // namespace cerulion::cli
