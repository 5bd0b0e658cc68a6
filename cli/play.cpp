// SPDX-License-Identifier: Apache-2.0
// `cerulion play FILE`: republishes a recording on its topics in log-time order (chunks that overlap
// in time are merged, as the mcap CLI and Foxglove play them), paced by the recorded log times.
// --lockstep makes each message wait until every subscriber has released the previous one.

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/publisher.hpp"
#include "cerulion/recorder/profile.hpp"
#include "cerulion/recorder/reader.hpp"
#include "command.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

struct PlaySettings {
  std::string file;
  double rate = 1.0;
  bool loop = false;
  std::vector<std::string> topics;
  std::vector<std::string> regex;
  double start_offset_s = 0;
  bool lockstep = false;
  bool json = false;
};

struct Playing {
  Publisher publisher;
  std::uint64_t published = 0;
};

// Sleeps until `deadline`, waking early on Ctrl-C; false when stopped.
bool sleep_until(std::chrono::steady_clock::time_point deadline) {
  while (!stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(50)));
  }
  return false;
}

// The topic settings a channel recorded. One that does not read back is said once, and ignored.
recorder::profile::TopicSettings recorded_settings(const recorder::Channel& ch) {
  auto settings = recorder::profile::parse_channel_metadata(ch.metadata);
  if (settings.ok()) return *settings;
  fmt::print(stderr, "warning: '{}': {}: its recorded topic settings are ignored\n", ch.topic, settings.message());
  return {};
}

// The type a channel recorded, for its publisher to declare; nullopt for raw bytes. One that a topic
// cannot declare (a foreign file's encoding cerulion does not know) is said once, and played raw.
std::optional<TopicType> recorded_type(const recorder::Channel& ch, const recorder::FileSummary& summary) {
  auto schema = summary.schemas.find(ch.schema_id);
  const bool has_schema = ch.schema_id != 0 && schema != summary.schemas.end();
  TopicType type = recorder::profile::topic_type(ch, has_schema ? &schema->second : nullptr);
  if (type.raw()) return std::nullopt;
  if (Status st = check_topic_type(type); !st) {
    fmt::print(stderr, "warning: '{}': {}: its messages are played as raw bytes\n", ch.topic, st.message());
    return std::nullopt;
  }
  return type;
}

Publisher open_publisher(const recorder::Channel& ch, const recorder::FileSummary& summary, const PlaySettings& s,
                         const std::string& domain) {
  PublisherOptions options;
  options.topic.domain = domain;
  // A topic that exists with another type refuses the publisher: Incompatible, said in one line.
  options.topic.type = recorded_type(ch, summary);
  options.wait.cancel = stop_flag();
  const auto recorded = recorded_settings(ch);
  if (s.lockstep) {
    options.topic.mode = Mode::Lockstep;
  } else if (!recorded.mode.empty()) {
    options.topic.mode = parse_mode(recorded.mode);
    if (!options.topic.mode) {
      fmt::print(stderr, "warning: '{}': recorded mode '{}' is unknown: the topic's own mode is used\n", ch.topic,
                 recorded.mode);
    }
  }
  // Topic settings from the recording apply only to a topic play creates.
  bool exists = inspect_topic(ch.topic, domain).ok();
  if (!exists) {
    if (s.lockstep) {
      options.topic.depth = 1;  // room for one more = every subscriber released the previous message
    } else if (recorded.depth) {
      options.topic.depth = recorded.depth;
    }
    if (recorded.max_payload) options.topic.max_payload = recorded.max_payload;
  }
  auto pub = Publisher::create(ch.topic, options);
  if (!pub && pub.code() == ErrorCode::Incompatible) {
    // The topic exists with other settings: join it as it is.
    options.topic.mode.reset();
    options.topic.depth.reset();
    pub = Publisher::create(ch.topic, options);
  }
  auto publisher = take(std::move(pub), fmt::format("cannot publish on '{}'", ch.topic));
  if (s.lockstep && publisher.mode() != Mode::Lockstep) {
    // A topic's mode is fixed by whoever created it; silence would promise a replay it is not.
    fmt::print(stderr, "warning: '{}' already runs in {} mode, which wins over --lockstep: a slow subscriber may lose messages\n",
               ch.topic, to_string(publisher.mode()));
  }
  return publisher;
}

// The recording's topics in one line, or their count when they would not fit one.
std::string topics_hint(const recorder::Reader& reader, const std::string& file) {
  std::vector<std::string> topics;
  for (const auto& [id, ch] : reader.summary().channels) topics.push_back(ch.topic);
  std::sort(topics.begin(), topics.end());
  topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
  if (topics.empty()) return "it has no topics";
  constexpr std::size_t kListed = 6;
  if (topics.size() > kListed) return fmt::format("it has {}: `cerulion info {}` lists them", counted(topics.size(), "topic"), file);
  std::string list;
  for (const auto& t : topics) list += (list.empty() ? "" : ", ") + t;
  return "its topics: " + list;
}

void run_play(const PlaySettings& s) {
  if (!(s.rate > 0)) throw Exit{kExitUsage, "--rate must be positive"};
  std::vector<std::regex> res;
  for (const auto& p : s.regex) {
    try {
      res.emplace_back(p);
    } catch (const std::regex_error& e) {
      throw Exit{kExitUsage, fmt::format("--regex '{}': not a valid regular expression ({})", p, e.what())};
    }
  }
  auto reader = recorder::Reader::open(s.file);
  if (!reader) throw Exit{kExitFailure, reader.message()};
  // The reader lists each problem once: print those of opening now, those reading finds after each pass.
  std::size_t warned = 0;
  auto warn_new_problems = [&] {
    for (const auto& problems = reader->problems(); warned < problems.size(); ++warned) {
      fmt::print(stderr, "warning: {}\n", problems[warned]);
    }
  };
  warn_new_problems();
  install_stop_handlers();
  const std::string domain = globals().domain;
  std::set<std::string> wanted(s.topics.begin(), s.topics.end());
  auto selected = [&](const recorder::Channel& ch) {
    if (wanted.empty() && res.empty()) return true;
    if (wanted.count(ch.topic)) return true;
    for (const auto& re : res) if (std::regex_search(ch.topic, re)) return true;
    return false;
  };
  if (!wanted.empty() || !res.empty()) {
    bool any = false;
    for (const auto& [id, ch] : reader->summary().channels) any = any || selected(ch);
    if (!any) {
      std::string asked;
      if (!s.topics.empty()) asked = fmt::format("--topics {}", fmt::join(s.topics, " "));
      for (const auto& p : s.regex) asked += fmt::format("{}-e '{}'", asked.empty() ? "" : " ", p);
      throw Exit{kExitFailure, fmt::format("nothing in {} matches {} ({})", s.file, asked, topics_hint(*reader, s.file))};
    }
  }
  const auto& stats = reader->summary().statistics;
  recorder::ReadMessagesOptions ro;
  ro.channel_filter = selected;
  ro.order = recorder::ReadOrder::LogTime;
  ro.start_time = stats.message_start_time + static_cast<std::uint64_t>(s.start_offset_s * 1e9);
  const std::uint64_t total_ns = stats.message_end_time > ro.start_time ? stats.message_end_time - ro.start_time : 0;

  std::map<std::uint16_t, std::unique_ptr<Playing>> publishers;
  std::uint64_t published = 0;
  std::uint64_t loops = 0;
  const bool tty = ::isatty(STDERR_FILENO);
  const auto began = std::chrono::steady_clock::now();
  auto last_progress = began;
  bool printed = false;
  do {
    std::optional<std::uint64_t> first_log;
    auto wall0 = std::chrono::steady_clock::now();
    Status st = reader->read_messages(ro, [&](const recorder::MessageView& m) {
      if (stop_requested()) return false;
      auto& slot = publishers[m.channel.id];
      if (!slot) slot = std::make_unique<Playing>(Playing{open_publisher(m.channel, reader->summary(), s, domain)});
      if (!first_log) first_log = m.message.log_time;
      auto offset_ns = m.message.log_time >= *first_log ? m.message.log_time - *first_log : 0;
      auto due = wall0 + std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(offset_ns) / s.rate));
      if (!sleep_until(due)) return false;
      auto seq = slot->publisher.publish_copy(m.message.data);
      if (!seq && seq.code() == ErrorCode::Interrupted) return false;
      check(seq.status(), fmt::format("publishing on '{}'", m.channel.topic));
      ++slot->published;
      ++published;
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress >= std::chrono::seconds(1)) {
        std::string line = fmt::format("playing: {} msgs published, at {:.1f} s of {:.1f} s{}", published,
                                       static_cast<double>(offset_ns) / 1e9, static_cast<double>(total_ns) / 1e9,
                                       s.loop ? fmt::format(" (loop {})", loops + 1) : "");
        if (tty) fmt::print(stderr, "\r\033[K{}", line);
        else fmt::print(stderr, "{}\n", line);
        printed = printed || tty;
        last_progress = now;
      }
      return true;
    });
    if (printed && warned < reader->problems().size()) {
      fmt::print(stderr, "\n");
      printed = false;
    }
    warn_new_problems();
    check_recorder(st);
    ++loops;
    if (published == 0) break;  // nothing selected: looping would spin
  } while (s.loop && !stop_requested());
  if (printed) fmt::print(stderr, "\n");
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (s.json) {
    nlohmann::ordered_json j;
    j["file"] = s.file;
    j["messages_published"] = published;
    j["loops"] = loops;
    j["duration_s"] = elapsed;
    j["interrupted"] = stop_requested();
    auto topics = nlohmann::ordered_json::array();
    for (const auto& [id, p] : publishers) topics.push_back({{"topic", p->publisher.topic()}, {"messages", p->published}});
    j["topics"] = topics;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(stderr, "played {} on {} in {:.1f} s\n", counted(published, "message"),
               counted(publishers.size(), "topic"), elapsed);
  }
  // Ctrl-C is how a --loop ends; a SIGTERM or SIGHUP still shows in the exit code.
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}

void add_play_command(CLI::App& app) {
  auto s = std::make_shared<PlaySettings>();
  auto* cmd = app.add_subcommand("play", "Republish a recording on its topics, paced by its timestamps");
  cmd->footer(
      "Examples:\n"
      "  cerulion play run.mcap\n"
      "  cerulion play run.mcap -r 2 --loop\n"
      "  cerulion play run.mcap --lockstep --topics /imu");
  cmd->add_option("file", s->file, "MCAP file")->required();
  cmd->add_option("-r,--rate", s->rate, "Speed factor (default 1.0; 2 = twice as fast)")->check(positive_number(1e6, "a speed factor"));
  cmd->add_flag("-l,--loop", s->loop, "Start over at the end until Ctrl-C");
  cmd->add_option("--topics", s->topics, "Only these topics");
  cmd->add_option("-e,--regex", s->regex, "Only topics matching this regular expression (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--start-offset", s->start_offset_s, "Skip the first SEC seconds of the recording")
      ->check(non_negative_seconds());
  cmd->add_flag("--lockstep", s->lockstep,
                "Each message waits until every subscriber has released the previous one (deterministic replay)");
  cmd->add_flag("--json", s->json, "Print a JSON summary on stdout at the end");
  cmd->callback([s] { run_play(*s); });
}

}  // namespace

static CommandRegistration registration(51, add_play_command);

}  // namespace cerulion::cli
