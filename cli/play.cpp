// SPDX-License-Identifier: Apache-2.0
// `cerulion play FILE`: a recording republished on its topics (recording/playback.hpp plays it):
// topic selection, progress on stderr, a summary.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/recording/playback.hpp"
#include "command.hpp"
#include "record_util.hpp"
#include "topic_options.hpp"
#include "supervise.hpp"

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
  check_patterns(s.regex, "--regex");
  auto reader = recorder::Reader::open(s.file);
  check(reader.status());
  // What the reader found opening the file is said as the playback says what it finds later.
  recording::EventQueue events;
  for (const auto& problem : reader->problems()) recording::report(&events, recording::EventKind::Warning, s.file, problem);
  say_events(events);
  const std::string hint = topics_hint(*reader, s.file);
  install_stop_handlers();

  recording::PlaybackOptions options;
  options.domain = globals().domain;
  options.rate = s.rate;
  options.loop = s.loop;
  options.start_offset_ns = static_cast<std::uint64_t>(s.start_offset_s * 1e9);
  options.lockstep = s.lockstep;
  options.cancel = stop_flag();
  options.events = &events;
  options.selection = {.topics = s.topics, .all = s.topics.empty() && s.regex.empty(), .include = s.regex};
  auto playback = recording::Playback::create(std::move(*reader), options);
  if (playback.code() == ErrorCode::NotFound) {
    std::string asked;
    if (!s.topics.empty()) asked = fmt::format("--topics {}", fmt::join(s.topics, " "));
    for (const auto& p : s.regex) asked += fmt::format("{}-e '{}'", asked.empty() ? "" : " ", p);
    throw Exit{kExitFailure, fmt::format("nothing in {} matches {} ({})", s.file, asked, hint)};
  }
  check(playback.status());

  // The playback plays on a thread of its own; this one supervises it. A stop signal reaches it
  // through options.cancel.
  Status played;
  std::atomic<bool> done{false};
  const auto began = std::chrono::steady_clock::now();
  std::jthread player([&] {
    played = playback->run();
    done = true;
  });
  Supervision supervision;
  supervision.events = &events;
  supervision.finished = [&] { return done.load(); };
  supervision.progress = [&](double) {
    const recording::PlaybackProgress p = playback->progress();
    return fmt::format("playing: {} msgs published, at {:.1f} s of {:.1f} s{}", p.published,
                       static_cast<double>(p.position_ns) / 1e9, static_cast<double>(p.duration_ns) / 1e9,
                       s.loop ? fmt::format(" (loop {})", p.pass + 1) : "");
  };
  (void)supervise(supervision);
  player.join();
  say_events(events);
  check(played);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (s.json) {
    nlohmann::ordered_json j;
    j["file"] = s.file;
    j["messages_published"] = playback->published();
    j["loops"] = playback->passes();
    j["duration_s"] = elapsed;
    j["interrupted"] = stop_requested();
    auto topics = nlohmann::ordered_json::array();
    for (const auto& t : playback->counts()) topics.push_back({{"topic", t.topic}, {"messages", t.published}});
    j["topics"] = topics;
    fmt::print("{}\n", j.dump());
  } else {
    say(fmt::format("played {} on {} in {:.1f} s", counted(playback->published(), "message"),
                    counted(playback->counts().size(), "topic"), elapsed));
  }
  // Ctrl-C is how a --loop ends; a SIGTERM or SIGHUP still shows in the exit code.
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}

}  // namespace

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
      ->transform(non_negative_duration());
  cmd->add_flag("--lockstep", s->lockstep,
                "Each message waits until every subscriber has released the previous one (deterministic replay)");
  cmd->add_flag("--json", s->json, "Print one JSON object on stdout at the end: the summary (docs/json.md)");
  cmd->callback([s] { run_play(*s); });
}

}  // namespace cerulion::cli
