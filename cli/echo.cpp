// SPDX-License-Identifier: Apache-2.0
// `cerulion echo TOPIC`: prints what a topic carries, as text for people, JSON lines for tools, or
// the exact bytes for files and pipes.

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/base64.hpp"
#include "cerulion/core/discovery.hpp"
#include "cerulion/core/subscriber.hpp"
#include "command.hpp"
#include "message_format.hpp"
#include "ros2_messages.hpp"
#include "cerulion/ros2/decoded.hpp"

namespace cerulion::cli {
namespace {

struct EchoSettings {
  std::string topic;
  std::uint64_t count = 0;
  double timeout_s = 0;
  std::size_t truncate_length = 128;
  bool json = false;
  bool raw = false;
  std::string separator;
  bool report_lost = false;
  bool tap = false;
  double delay_s = 0;
  std::string mode;
  std::uint32_t depth = 0;
  std::string group;
  bool full = false;
  std::vector<std::string> msg_path;

  CLI::Option* count_option = nullptr;
  CLI::Option* timeout_option = nullptr;
  CLI::Option* depth_option = nullptr;
};

class MessagePrinter {
 public:
  MessagePrinter(const EchoSettings& settings, std::string separator)
      : settings_(settings), separator_(std::move(separator)), ros2_(settings.msg_path) {}

  /// Learns what the topic carries. A type, once declared, never changes; until then it is read
  /// again for every message (after receiving it, so a publisher's declaration is seen).
  void learn_type(const Subscriber& subscriber) {
    if (!type_.raw()) return;
    auto type = subscriber.type();
    if (type) {
      type_ = std::move(*type);
    } else if (!type_warned_) {
      type_warned_ = true;  // printed as raw bytes, never dropped
      fmt::print(stderr, "cerulion: warning: {}; messages are printed as raw bytes\n", type.status().message());
    }
  }

  void print(const Sample& sample, const std::string& topic) {
    auto bytes = sample.data();
    std::optional<nlohmann::ordered_json> value;
    if (!settings_.raw && type_.message_encoding == "json") {
      const auto* text = reinterpret_cast<const char*>(bytes.data());
      value = nlohmann::ordered_json::parse(text, text + bytes.size(), nullptr, false);
      if (value->is_discarded()) value.reset();
    }
    // A ROS 2 message decoded with its schema: fields in text mode, a JSON object with --json.
    std::string decode_error;
    std::optional<nlohmann::ordered_json> fields;
    if (!settings_.raw) fields = ros2_.decode(type_, bytes, decode_error);
    if (settings_.raw) {
      out_.append(bytes);
      out_.append(separator_);
    } else if (settings_.json) {
      nlohmann::ordered_json line = {
          {"topic", topic},
          {"seq", sample.sequence()},
          {"publish_monotonic_ns", sample.publish_time_ns()},
          {"publish_realtime_ns", sample.publish_realtime_ns()},
          {"receive_monotonic_ns", monotonic_ns()},
          {"size", sample.size()},
          {"lost_before", sample.lost_before()},
      };
      if (fields) {
        line["data"] = ros2::plain_json(*fields);  // a ROS 2 message's fields, bytes as base64
      } else if (value) {
        line["data"] = std::move(*value);  // a json topic's message, as the JSON value it is
      } else if (is_valid_utf8(bytes)) {
        line["data"] = std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      } else {
        line["data_base64"] = base64_encode(bytes);
      }
      if (type_.message_encoding == "json" && !value) line["json_error"] = check_payload(type_, bytes).message();
      if (!decode_error.empty()) line["decode_error"] = decode_error;
      out_.append(line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      out_.append("\n");
    } else if (fields) {
      ros2::TextOptions text;
      if (settings_.full) text = {0, 0};
      out_.append(ros2::message_text(*fields, text));
      out_.append("---\n");
    } else if (value) {
      out_.append(render_json_text(value->dump(), settings_.truncate_length));
      out_.append("\n");
    } else {
      if (!decode_error.empty()) fmt::print(stderr, "cerulion: warning: #{}: {}\n", sample.sequence(), decode_error);
      out_.append(render_message_text(bytes, settings_.truncate_length));
      out_.append("\n");
    }
  }

  void flush() { out_.flush(); }

 private:
  const EchoSettings& settings_;
  std::string separator_;
  StdoutWriter out_;
  TopicType type_;
  bool type_warned_ = false;
  Ros2Decoder ros2_;
};

/// Reports free-run losses on stderr, one line per gap and a total at the end.
void report_lost(const EchoSettings& settings, const Sample& sample, std::uint64_t& total) {
  if (sample.lost_before() == 0) return;
  total += sample.lost_before();
  if (settings.report_lost) {
    fmt::print(stderr, "lost {} before #{}\n", counted(sample.lost_before(), "message"), sample.sequence());
  }
}

void run_echo(const EchoSettings& settings) {
  auto separator = unescape(settings.separator);
  if (!separator) throw Exit{kExitUsage, fmt::format("--separator '{}': malformed escape", settings.separator)};
  const std::string topic = checked_topic_name(settings.topic, globals().domain);
  install_stop_handlers();

  SubscriberOptions options;
  options.role = settings.tap ? Role::Tap : Role::Subscriber;
  options.topic.domain = globals().domain;
  options.topic.mode = mode_from_option(settings.mode);
  if (settings.depth_option->count() > 0) options.topic.depth = settings.depth;
  options.topic.group = settings.group;
  options.wait.cancel = stop_flag();
  const std::string warning = unpublished_warning(topic, globals().domain, "echo");
  Subscriber subscriber = take(Subscriber::create(topic, options), topic);
  if (!warning.empty()) fmt::print(stderr, "cerulion: warning: {}\n", warning);

  Timeout timeout;
  if (settings.timeout_option->count() > 0) timeout = seconds_to_timeout(settings.timeout_s);
  std::optional<std::uint64_t> limit;
  if (settings.count_option->count() > 0) limit = settings.count;

  MessagePrinter printer(settings, *separator);
  std::uint64_t received = 0, lost = 0;
  auto finish_lost_report = [&] {
    if (settings.report_lost) fmt::print(stderr, "lost {} in total, received {}\n", counted(lost, "message"), received);
  };
  while (!limit || received < *limit) {
    if (stop_requested()) {  // a busy stream never blocks, so the flag is looked at here too
      printer.flush();
      finish_lost_report();
      throw Exit{stop_exit_code(), {}};
    }
    // Flush only when nothing is waiting: full buffers at high rates, prompt lines at low ones.
    auto ready = subscriber.try_receive();
    std::optional<Sample> sample;
    if (ready && ready->has_value()) {
      sample = std::move(**ready);
    } else {
      printer.flush();
      auto next = subscriber.receive(timeout);
      if (!next) {
        if (next.code() == ErrorCode::Interrupted) {
          finish_lost_report();
          throw Exit{stop_exit_code(), {}};
        }
        if (next.code() != ErrorCode::Timeout) check(next.status(), subscriber.topic());
        finish_lost_report();
        if (received == 0) {
          throw Exit{kExitFailure, fmt::format("no message on '{}' within {} s", subscriber.topic(), settings.timeout_s)};
        }
        if (limit) {
          throw Exit{kExitFailure, fmt::format("received {} of {} on '{}' before the {} s timeout", received,
                                               counted(*limit, "message"), subscriber.topic(), settings.timeout_s)};
        }
        return;  // the stream went quiet after delivering something: a normal end
      }
      sample = std::move(*next);
    }
    ++received;
    report_lost(settings, *sample, lost);
    printer.learn_type(subscriber);
    printer.print(*sample, subscriber.topic());
    sample->release();
    if (settings.delay_s > 0) {
      printer.flush();
      if (!sleep_unless_stopped(seconds_to_timeout(settings.delay_s).value())) {
        finish_lost_report();
        throw Exit{stop_exit_code(), {}};
      }
    }
  }
  printer.flush();
  finish_lost_report();
}

}  // namespace

void add_echo_command(CLI::App& app) {
  auto settings = std::make_shared<EchoSettings>();
  auto* cmd = app.add_subcommand("echo", "Print the messages of a topic (text, JSON lines or raw bytes)");
  cmd->footer(
      "Started before the first publisher, echo says so on stderr and waits for it; started later, it prints\n"
      "messages from then on.\n"
      "Text mode prints one line per message (newlines, tabs and backslashes as \\n \\t \\\\); --raw adds\n"
      "nothing to the bytes, not even a newline: give --separator '\\n' for lines, as `pub` reads them.\n"
      "A json topic's messages print as compact JSON; with --json each is a JSON value, not a string.\n"
      "A ROS 2 topic's (cdr with a ros2msg schema) print as fields, like `ros2 topic echo` (arrays past 16\n"
      "elements and byte arrays shortened unless --full), each followed by ---; with --json, data is an\n"
      "object of its fields, byte arrays as base64. A message that does not decode prints as bytes.\n"
      "Examples:\n"
      "  cerulion echo /chatter\n"
      "  cerulion echo /numbers --json -n 10\n"
      "  cerulion echo /imu --json | jq .data.ax\n"
      "  cerulion echo /numbers --raw --separator '\\n' > numbers.txt\n"
      "  cerulion echo /blob --raw -n 1 > blob.bin");
  cmd->add_option("topic", settings->topic, "Topic name, e.g. /robot/cmd")->required();
  settings->count_option = cmd->add_option("-n,--count", settings->count, "Exit after N messages")
                               ->check(positive_count());
  settings->timeout_option =
      cmd->add_option("--timeout", settings->timeout_s,
                      "Stop after SEC without a message; exit 1 if nothing (or fewer than -n) arrived")
          ->transform(positive_duration());
  cmd->add_option("-l,--truncate-length", settings->truncate_length,
                  "Text mode: show at most N bytes of a message (default 128, 0 = all)")
      ->check(non_negative_count());
  auto* json = cmd->add_flag("--json", settings->json,
                             "One JSON object per line and message (docs/json.md): topic, seq, publish_monotonic_ns, "
                             "publish_realtime_ns, receive_monotonic_ns, size, "
                             "lost_before, and data (UTF-8) or data_base64; in a json topic data is the message's "
                             "JSON value (a message that does not parse: its text, and json_error says why); in a "
                             "ROS 2 topic an object of its fields (one that does not decode: decode_error says why)");
  auto* raw = cmd->add_flag("--raw", settings->raw, "Write the exact message bytes and nothing else (no newline: see --separator)");
  auto* separator = cmd->add_option("--separator", settings->separator,
                                    "With --raw: written after every message, e.g. '\\n' for one message per line or '\\0'; C escapes allowed");
  cmd->add_flag("--lost", settings->report_lost, "Report messages lost in free run (and a total) on stderr");
  cmd->add_flag("--tap", settings->tap, "Attach as a tap: never hold a lockstep publisher back (may lose messages)");
  cmd->add_option("--delay", settings->delay_s, "Sleep SEC after each message (simulates a slow consumer)")
      ->transform(positive_duration());
  cmd->add_option("--mode", settings->mode, "Mode if echo creates the topic: lockstep or free-run")
      ->check(CLI::IsMember({"lockstep", "free-run"}));
  settings->depth_option = cmd->add_option("--depth", settings->depth, "Ring depth if echo creates the topic (messages, default 16)")
                               ->check(count_in(1, kMaxDepth));
  cmd->add_option("--group", settings->group,
                  "Share the topic with this group if echo creates it (mode 0660); an existing topic must be shared with it")
      ->check(group_validator());
  auto* full = cmd->add_flag("--full", settings->full, "ROS 2 messages: show every element of arrays and byte arrays");
  add_msg_path_option(*cmd, settings->msg_path);
  full->excludes(raw);
  json->excludes(raw);
  separator->needs(raw);
  cmd->callback([settings] { run_echo(*settings); });
}

}  // namespace cerulion::cli
