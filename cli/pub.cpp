// SPDX-License-Identifier: Apache-2.0
// `cerulion pub TOPIC [MESSAGE...]`: publishes arguments, a file, synthetic payloads or stdin.
// Quiet by default so it sits in pipelines; every message goes out whole or not at all.

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "cerulion/core/names.hpp"
#include "cerulion/core/pacing.hpp"
#include "cerulion/core/publisher.hpp"
#include "command.hpp"
#include "encoding.hpp"
#include "message_format.hpp"
#include "pub_input.hpp"
#include "ros2_messages.hpp"

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
  EncodingOptions type;
  std::string ros_type;
  std::vector<std::string> msg_path;
  bool skip_invalid = false;

  CLI::Option* rate_option = nullptr;
  CLI::Option* times_option = nullptr;
  CLI::Option* size_option = nullptr;
  CLI::Option* stdin_option = nullptr;
  CLI::Option* depth_option = nullptr;
  CLI::Option* timeout_option = nullptr;
};

/// Publishes one message at a time at a steady rate (core's Pacer keeps the ticks), with the
/// waits and errors of the topic.
class PacedPublisher {
 public:
  PacedPublisher(Publisher publisher, const PubSettings& settings, double rate_hz)
      : publisher_(std::move(publisher)), settings_(settings) {
    if (settings.timeout_option->count() > 0) room_timeout_ = seconds_to_timeout(settings.timeout_s);
    if (rate_hz > 0) period_ns_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(1e9 / rate_hz));
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
    if (period_ns_ == 0) return;
    const std::uint64_t now = monotonic_ns();
    if (next_ns_ == 0) next_ns_ = now;
    if (!pacer_.sleep_until(next_ns_, stop_flag())) throw Exit{stop_exit_code(), {}};
    // A late message does not make the next ones burst: the schedule restarts from now.
    next_ns_ = std::max(next_ns_ + period_ns_, now);
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
    throw failure(status, publisher_.topic());
  }

  Publisher publisher_;
  const PubSettings& settings_;
  Timeout room_timeout_;
  Pacer pacer_;
  std::uint64_t period_ns_ = 0;  ///< 0: as fast as the topic takes them
  std::uint64_t next_ns_ = 0;    ///< when the next message is due (CLOCK_MONOTONIC), 0 before the first
  std::uint64_t published_ = 0;
  StdoutWriter verbose_out_{0};
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

/// The CDR of a ROS 2 topic's message given as text; nullopt when it is invalid and skipped (said
/// on stderr); an invalid one ends pub (exit 1) unless --skip-invalid.
std::optional<std::vector<std::byte>> encoded(const Ros2Encoder& encoder, std::span<const std::byte> text,
                                              const std::string& where, std::string_view unpublished,
                                              const PubSettings& settings) {
  auto bytes = encoder.encode(text);
  if (bytes) return std::move(*bytes);
  if (!settings.skip_invalid) throw Exit{kExitFailure, fmt::format("{}: {}; {}", where, bytes.message(), unpublished)};
  fmt::print(stderr, "cerulion: warning: {}: {}; skipped\n", where, bytes.message());
  return std::nullopt;
}

/// Publishes stdin's messages, each checked against the topic's type first.
void publish_stdin(PacedPublisher& out, PayloadCheck& payloads, const Ros2Encoder& encoder, const PubSettings& settings,
                   std::optional<std::uint64_t> limit) {
  bool whole = settings.stdin_framing == "whole";
  StdinMessages input(settings.stdin_framing == "null" ? '\0' : '\n', whole, out.publisher().max_payload());
  auto where = [&] {
    if (whole) return std::string("stdin");
    if (settings.stdin_framing == "null") return fmt::format("stdin message #{}", input.messages());
    return fmt::format("stdin line {}", input.messages());
  };
  while (!limit || out.published() < *limit) {
    auto message = input.next();
    if (!message) break;
    if (payloads.inspects() && !payloads.accept(*message, where(), "it and what follows were not published")) continue;
    if (encoder.active()) {
      if (auto bytes = encoded(encoder, *message, where(), "it and what follows were not published", settings)) {
        out.publish(*bytes);
      }
      continue;
    }
    out.publish(*message);
  }
  payloads.report_skipped();
  if (limit && out.published() < *limit) {
    throw Exit{kExitFailure, fmt::format("stdin ended after {} of {}", out.published(), counted(*limit, "message"))};
  }
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

  install_stop_handlers();  // before a FIFO's open (--file, --schema-file), which waits for a writer
  std::optional<TopicType> declared = type_from_options(settings.type, "pub");
  if (!settings.ros_type.empty()) declared = ros2_type_option(settings.ros_type, settings.msg_path);
  // A bad file is refused before the topic is touched; its bytes are read once the topic's own
  // ceiling is known, and no further.
  std::optional<InputFile> file;
  if (!settings.file.empty()) file.emplace(settings.file, settings.max_payload, "the payload ceiling");

  PublisherOptions options;
  options.topic.domain = globals().domain;
  options.topic.mode = mode_from_option(settings.mode);
  if (settings.depth_option->count() > 0) options.topic.depth = settings.depth;
  options.topic.max_payload = settings.max_payload;
  options.topic.group = settings.group;
  options.topic.type = declared;
  options.wait.cancel = stop_flag();
  PacedPublisher out(take(Publisher::create(topic, options), topic), settings, rate_hz);
  // What the topic carries, declared by this pub or by whoever created the topic.
  PayloadCheck payloads(take(out.publisher().type(), topic), settings.skip_invalid);
  const Ros2Encoder encoder(payloads.type(), settings.msg_path);
  if ((payloads.inspects() || encoder.active()) && settings.size_option->count() > 0) {
    throw Exit{kExitFailure, fmt::format("topic '{}' carries {}: --size payloads are not {}; nothing published",
                                         out.publisher().topic(), describe(payloads.type()),
                                         payloads.type().message_encoding)};
  }
  if (from_stdin) {
    wait_for_subscribers(out.publisher(), settings);
    publish_stdin(out, payloads, encoder, settings, limit);
    return;
  }

  // Fixed messages are checked once, before anything goes out.
  std::vector<std::span<const std::byte>> fixed;
  std::vector<std::vector<std::byte>> encoded_messages;  // what `fixed` points at for a ROS 2 topic
  auto take_fixed = [&](std::span<const std::byte> bytes, const std::string& where) {
    if (!payloads.accept(bytes, where, "nothing published")) return;
    if (!encoder.active()) {
      fixed.push_back(bytes);
    } else if (auto cdr = encoded(encoder, bytes, where, "nothing published", settings)) {
      encoded_messages.push_back(std::move(*cdr));
    }
  };
  encoded_messages.reserve(settings.messages.size() + 1);
  if (file) {
    take_fixed(file->read(out.publisher().max_payload(),
                          fmt::format("the payload ceiling of topic '{}'", out.publisher().topic())),
               fmt::format("file '{}'", settings.file));
  } else {
    for (std::size_t i = 0; i < settings.messages.size(); ++i) {
      take_fixed(std::as_bytes(std::span(settings.messages[i].data(), settings.messages[i].size())),
                 fmt::format("argument {}", i + 1));
    }
  }
  for (const auto& m : encoded_messages) fixed.emplace_back(m);
  payloads.report_skipped();
  if (settings.size_option->count() == 0 && fixed.empty()) {
    throw Exit{kExitFailure, "every message was invalid and skipped; nothing published"};
  }
  wait_for_subscribers(out.publisher(), settings);

  std::mt19937_64 random{std::random_device{}()};
  for (std::uint64_t round = 0; !limit || round < *limit; ++round) {
    if (stop_requested()) throw Exit{stop_exit_code(), {}};
    if (settings.size_option->count() > 0) {
      out.publish_in_place(settings.size, [&](std::span<std::byte> payload) {
        fill_payload(payload, settings.fill, round, random);
      });
    } else {
      for (auto message : fixed) out.publish(message);
    }
  }
}

}  // namespace

void add_pub_command(CLI::App& app) {
  auto settings = std::make_shared<PubSettings>();
  auto* cmd = app.add_subcommand("pub", "Publish messages: arguments, a file, synthetic payloads or stdin");
  cmd->footer(
      "Arguments and --file/--size repeat, one message a second (-r), until Ctrl-C unless -n/--once; stdin\n"
      "is published once, as fast as lockstep allows.\n"
      "--encoding declares what the topic carries (MCAP message encoding, with --schema-file its schema);\n"
      "the first declaration wins and another is refused. In a json topic, declared by this pub or by\n"
      "the topic's creator, every message must be one JSON value: pub stops at the first that is not\n"
      "(exit 1, naming it; the messages before it are published) unless --skip-invalid. A JSON Schema\n"
      "is carried for the readers (Foxglove), not checked: a message is checked to be JSON, no more.\n"
      "In a ROS 2 topic (cdr with a ros2msg schema, or --type pkg/msg/T) each message is JSON or YAML\n"
      "flow, encoded as CDR; fields left out take their defaults.\n"
      "Examples:\n"
      "  cerulion pub /chatter hello --once\n"
      "  seq 1 1000 | cerulion pub /numbers\n"
      "  cerulion pub /blob --file image.png --once --wait-subscribers 1 --timeout 5\n"
      "  cerulion pub /imu --encoding json --schema-file Imu.json '{\"ax\": 0.1}' --once\n"
      "  cerulion pub /chatter --type std_msgs/msg/String '{data: hi}' --msg-path ~/msgs --once\n"
      "  jq -c '.[]' readings.json | cerulion pub /imu --skip-invalid");
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
          ->transform(positive_duration());
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
  add_encoding_options(*cmd, settings->type);
  auto* ros_type = cmd->add_option("--type", settings->ros_type,
                                   "A ROS 2 type, pkg/msg/T: the topic is cdr with the type's definition from the msg "
                                   "path, and messages are JSON or YAML flow ('{data: hi}'), as ros2 topic pub takes them");
  add_msg_path_option(*cmd, settings->msg_path);
  ros_type->excludes(settings->type.encoding_option);
  cmd->add_flag("--skip-invalid", settings->skip_invalid,
                "In a json topic, warn about a message that is not JSON and go on without it (default: exit 1 "
                "at the first one; what came before it is published)");

  once->excludes(settings->times_option);
  messages->excludes(file)->excludes(settings->size_option)->excludes(settings->stdin_option);
  file->excludes(settings->size_option)->excludes(settings->stdin_option);
  settings->size_option->excludes(settings->stdin_option);
  fill->needs(settings->size_option);
  cmd->callback([settings] { run_pub(*settings); });
}

}  // namespace cerulion::cli
