// `cerulion record [TOPIC...] -o FILE.mcap`: taps topics (never holding a publisher back) and writes
// what they carry into MCAP files, with progress on stderr and a per-topic summary at the end.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>

#include <fmt/core.h>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/names.hpp"
#include "command.hpp"
#include "record_session.hpp"
#include "record_util.hpp"

namespace cerulion::cli {
namespace {

std::vector<std::regex> compile(const std::vector<std::string>& patterns, const char* flag) {
  std::vector<std::regex> out;
  for (const auto& p : patterns) {
    try {
      out.emplace_back(p, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Exit{kExitUsage, fmt::format("{} '{}': not a valid regular expression ({})", flag, p, e.what())};
    }
  }
  return out;
}

bool any_match(const std::vector<std::regex>& res, const std::string& topic) {
  for (const auto& re : res) if (std::regex_search(topic, re)) return true;
  return false;
}

std::uint64_t payload_bytes(RecordSession& session) {
  std::uint64_t bytes = 0;
  for (const auto& t : session.counters()) bytes += t->bytes.load();
  return bytes;
}

std::string progress_line(RecordSession& session, double elapsed_s, double rate_mb) {
  std::uint64_t messages = 0, drops = 0;
  std::string per_topic;
  for (const auto& t : session.counters()) {
    messages += t->written.load();
    std::uint64_t lost = t->missed.load() + t->queue_drops.load();
    drops += lost;
    if (lost) per_topic += fmt::format(" {}:{}", t->topic, lost);
  }
  return fmt::format("recording {:.1f} s: {} msgs, {}, {:.2f} MB/s, dropped {}{}", elapsed_s, messages,
                     format_bytes(static_cast<double>(payload_bytes(session))), rate_mb, drops, per_topic);
}

void run_record(const RecordSettings& settings) {
  if (settings.topics.empty() && !settings.all && settings.regex.empty()) {
    throw Exit{kExitUsage, "record: name topics, or use -a/--all or -e/--regex"};
  }
  if (settings.output.empty()) throw Exit{kExitUsage, "record: -o FILE.mcap is required"};
  // Bad names are usage errors, found before any file is created.
  for (const auto& t : settings.topics) check(normalize_topic_name(t).status(), fmt::format("record '{}'", t));
  auto includes = compile(settings.regex, "--regex");
  auto excludes = compile(settings.exclude, "--exclude");
  install_stop_handlers();
  const std::string domain = globals().domain;
  RecordSession session(settings, domain);
  session.start();

  std::set<std::string> refused;  // topics (or listing problems) we could not record: said once
  auto refuse = [&](const std::string& key, const std::string& line) {
    if (refused.insert(key).second) fmt::print(stderr, "cerulion: cannot record {}\n", line);
  };
  // A topic that appears after the recording started is recorded from its first message.
  const std::uint64_t started_realtime = realtime_ns();
  auto try_tap = [&](const TopicInfo& info) {
    std::string error;
    const StartAt start = info.created_realtime_ns >= started_realtime ? StartAt::First : StartAt::Next;
    if (!session.tap(info.name, error, start)) refuse(info.name, fmt::format("'{}': {}", info.name, error));
  };
  for (const auto& t : settings.topics) {
    std::string error;
    if (!session.tap(t, error)) {
      session.finish();
      throw Exit{kExitFailure, fmt::format("cannot record '{}': {}", t, error)};
    }
  }
  const bool discover = settings.all || !includes.empty();
  const bool tty = ::isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  auto last_progress = started;
  std::uint64_t last_bytes = 0;
  auto next_discovery = started;
  bool printed_tty = false;
  // New topics are noticed as they appear; the periodic listing is there for what a watch misses.
  std::optional<TopicWatch> watch;
  if (discover) {
    if (auto w = TopicWatch::create(domain); w.ok()) watch.emplace(std::move(*w));
  }
  bool appeared = false;
  while (!stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - started).count();
    if (settings.duration_s > 0 && elapsed >= settings.duration_s) break;
    if (!session.error().empty()) break;
    if (discover && (appeared || now >= next_discovery)) {
      if (auto listing = list_topics(domain); listing.ok()) {
        for (const auto& info : listing->topics) {
          if (!settings.all && !any_match(includes, info.name)) continue;
          if (any_match(excludes, info.name)) continue;
          try_tap(info);
        }
        for (const auto& problem : listing->problems) refuse(problem, problem);
      }
      next_discovery = now + std::chrono::milliseconds(watch ? 1000 : 200);
    }
    if (now - last_progress >= std::chrono::seconds(1)) {
      double dt = std::chrono::duration<double>(now - last_progress).count();
      std::uint64_t bytes = payload_bytes(session);
      std::string line = progress_line(session, elapsed, static_cast<double>(bytes - last_bytes) / dt / 1e6);
      if (tty) {
        fmt::print(stderr, "\r\033[K{}", line);
        printed_tty = true;
      } else {
        fmt::print(stderr, "{}\n", line);
      }
      std::fflush(stderr);
      last_progress = now;
      last_bytes = bytes;
    }
    if (watch) {
      appeared = watch->wait(std::chrono::milliseconds(50));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (printed_tty) fmt::print(stderr, "\n");
  session.finish();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto counters = session.counters();
  std::uint64_t messages = 0;
  for (const auto& t : counters) messages += t->written.load();
  auto files = session.files();
  fmt::print(stderr, "recorded {} messages on {} topics, {} in {:.1f} s into {}\n", messages, counters.size(),
             format_bytes(static_cast<double>(session.bytes_written())), elapsed,
             files.size() == 1 ? files[0] : fmt::format("{} files ({} ... {})", files.size(), files.front(), files.back()));
  for (const auto& t : counters) {
    fmt::print(stderr, "  {}: {} written, {} received, {} lost ({} missed by the tap, {} dropped: disk behind)\n",
               t->topic, t->written.load(), t->received.load(), t->missed.load() + t->queue_drops.load(),
               t->missed.load(), t->queue_drops.load());
  }
  if (!refused.empty()) fmt::print(stderr, "  could not record {} topic(s): see above\n", refused.size());
  if (auto error = session.error(); !error.empty()) throw Exit{kExitFailure, error};
  if (counters.empty() && !refused.empty()) throw Exit{kExitFailure, "nothing was recorded"};
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}

void add_record_command(CLI::App& app) {
  auto s = std::make_shared<RecordSettings>();
  auto* cmd = app.add_subcommand("record", "Record topics into an MCAP file (a tap: never holds a publisher back)");
  cmd->footer(
      "By default the recorder is a tap: publishers never wait for it, and what it misses (a burst faster than\n"
      "it can copy, a disk that falls behind) is counted in the summary and the file's metadata. --lockstep\n"
      "records every message instead, by holding publishers back (and so everyone else on the topic) while\n"
      "the recorder or its disk catches up.");
  cmd->add_option("topics", s->topics, "Topics to record");
  cmd->add_option("-o,--output", s->output, "Output file, e.g. run.mcap (numbered run_0.mcap... when splitting)")
      ->required();
  cmd->add_flag("-a,--all", s->all, "Record every topic of the domain, including topics that appear later");
  cmd->add_option("-e,--regex", s->regex, "Record topics matching this regular expression (repeatable; new ones too)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-x,--exclude", s->exclude, "Do not record topics matching this regular expression (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--compression", s->compression, "Chunk compression: zstd (default) or none")
      ->check(CLI::IsMember({"zstd", "none"}));
  cmd->add_option("--level", s->level, "zstd level (default 1: fast; up to 19)")->check(CLI::Range(-7, 19));
  cmd->add_option("--chunk-size", s->chunk_size, "Uncompressed bytes per chunk (default 1MiB)")
      ->transform(size_validator());
  cmd->add_option("--split-size", s->split_size, "Start a new numbered file after this many bytes")
      ->transform(size_validator());
  cmd->add_option("--split-duration", s->split_duration_s, "Start a new numbered file every SEC seconds")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--duration", s->duration_s, "Stop after SEC seconds")->check(CLI::PositiveNumber);
  cmd->add_flag("-f,--force", s->force, "Overwrite existing output files");
  cmd->add_flag("--lockstep", s->lockstep,
                "Join as a lockstep subscriber: publishers wait for the recorder instead of it losing messages");
  cmd->callback([s] {
    if (s->chunk_size == 0) throw Exit{kExitUsage, "--chunk-size must be positive"};
    run_record(*s);
  });
}

}  // namespace

static CommandRegistration registration(50, add_record_command);

}  // namespace cerulion::cli
