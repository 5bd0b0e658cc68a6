// SPDX-License-Identifier: Apache-2.0
// `cerulion record [TOPIC...] -o FILE.mcap`: taps topics (never holding a publisher back) and writes
// what they carry into MCAP files, with progress on stderr and a per-topic summary at the end.

#include <string>

#include <fmt/core.h>

#include "cerulion/recording/recording.hpp"
#include "command.hpp"
#include "message_format.hpp"
#include "record_util.hpp"
#include "supervise.hpp"
#include "topic_options.hpp"

namespace cerulion::cli {
namespace {

/// What `record` was asked to do.
struct RecordSettings {
  recording::TopicSelection selection;
  std::string output;
  std::string compression = "zstd";
  int level = 1;
  std::uint64_t chunk_size = 1u << 20;
  std::uint64_t split_size = 0;
  double split_duration_s = 0;
  double duration_s = 0;
  bool force = false;
  std::uint64_t queue_bytes = 256u << 20;
  /// Join as a lockstep subscriber rather than a tap: publishers wait for the recorder (and a
  /// full queue waits for the disk) instead of anything being lost.
  bool lockstep = false;
};

std::uint64_t payload_bytes(const std::vector<recording::RecordingTopicCounts>& counts) {
  std::uint64_t bytes = 0;
  for (const auto& t : counts) bytes += t.bytes;
  return bytes;
}

std::string progress_line(const std::vector<recording::RecordingTopicCounts>& counts, double elapsed_s,
                          double rate_mb) {
  std::uint64_t messages = 0, drops = 0;
  std::string per_topic;
  for (const auto& t : counts) {
    messages += t.written;
    drops += t.lost();
    if (t.lost()) per_topic += fmt::format(" {}:{}", t.topic, t.lost());
  }
  return fmt::format("recording {:.1f} s: {}, {}, {}/s, dropped {}{}", elapsed_s, counted(messages, "msg"),
                     format_bytes(static_cast<double>(payload_bytes(counts))), format_bytes(rate_mb * 1e6), drops, per_topic);
}

recording::RecordingOptions recording_options(const RecordSettings& settings) {
  recording::RecordingOptions o;
  o.taps.selection = settings.selection;
  o.taps.domain = globals().domain;
  o.taps.lockstep = settings.lockstep;
  o.writer.compression = settings.compression == "none" ? recorder::Compression::None : recorder::Compression::Zstd;
  o.writer.compression_level = settings.level;
  o.writer.chunk_size = settings.chunk_size;
  o.writer.library = std::string("cerulion ") + CERULION_VERSION;
  o.split_size = settings.split_size;
  o.split_duration_ns = static_cast<std::uint64_t>(settings.split_duration_s * 1e9);
  o.queue_bytes = settings.queue_bytes;
  return o;
}

void run_record(const RecordSettings& settings) {
  require_topic_selection(settings.selection, "record");
  if (settings.output.empty()) throw Exit{kExitUsage, "record: -o FILE.mcap is required"};
  // Bad names are usage errors, found before any file is created.
  for (const auto& t : settings.selection.topics) checked_topic_name(t, globals().domain);
  check_topic_patterns(settings.selection);
  install_stop_handlers();
  recording::EventQueue events;
  auto options = recording_options(settings);
  options.events = &events;
  // An existing file is refused before any topic is opened.
  auto created = recording::Recording::create(
      options, recording::file_sinks(settings.output, options.splitting(), {.overwrite = settings.force}));
  check(created.status());
  recording::Recording& rec = *created;
  if (Status st = rec.start(); !st.ok()) {
    (void)rec.finish();
    check(st, "cannot record");
  }

  Supervision supervision;
  supervision.events = &events;
  supervision.duration_s = settings.duration_s;
  supervision.failed = [&] { return rec.error(); };
  std::uint64_t last_bytes = 0;
  double last_elapsed = 0;
  supervision.progress = [&](double elapsed) {
    const auto counts = rec.counts();
    const std::uint64_t bytes = payload_bytes(counts);
    const double rate_mb = elapsed > last_elapsed ? static_cast<double>(bytes - last_bytes) / (elapsed - last_elapsed) / 1e6 : 0;
    last_bytes = bytes;
    last_elapsed = elapsed;
    return progress_line(counts, elapsed, rate_mb);
  };
  const Supervised run = supervise(supervision);
  // The recording is finished whatever ended the loop: the file is complete and readable.
  Status finished = rec.finish();
  const std::size_t problems = run.problems + say_events(events);
  const auto counts = rec.counts();
  std::uint64_t messages = 0;
  for (const auto& t : counts) messages += t.written;
  auto files = rec.files();
  say(fmt::format("recorded {} on {}, {} in {:.1f} s into {}", counted(messages, "message"),
                  counted(counts.size(), "topic"), format_bytes(static_cast<double>(rec.bytes_written())), run.elapsed_s,
                  files.size() == 1 ? files[0] : fmt::format("{} files ({} ... {})", files.size(), files.front(), files.back())));
  for (const auto& t : counts) {
    say(fmt::format("  {}: {} written, {} received, {} lost ({} missed by the tap, {} dropped: disk behind)", t.topic,
                    t.written, t.received, t.lost(), t.missed, t.dropped));
  }
  if (problems > 0) say(fmt::format("  could not record {}: see above", counted(problems, "topic")));
  check(finished);
  if (counts.empty() && problems > 0) throw Exit{kExitFailure, "nothing was recorded"};
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}

}  // namespace

void add_record_command(CLI::App& app) {
  auto s = std::make_shared<RecordSettings>();
  auto* cmd = app.add_subcommand("record", "Record topics into an MCAP file (a tap: never holds a publisher back)");
  cmd->footer(
      "By default the recorder is a tap: publishers never wait for it, and what it misses (a burst faster than\n"
      "it can copy, a disk that falls behind) is counted in the summary and the file's metadata. --lockstep\n"
      "records every message instead, by holding publishers back (and so everyone else on the topic) while\n"
      "the recorder or its disk catches up.\n"
      "Examples:\n"
      "  cerulion record /imu /camera -o run.mcap\n"
      "  cerulion record -a -x '^/debug' -o run.mcap --split-duration 60   # run_0.mcap, run_1.mcap, ...\n"
      "  cerulion record -e '^/robot/' -o run.mcap --duration 30 --lockstep");
  cmd->add_option("topics", s->selection.topics, "Topics to record");
  cmd->add_option("-o,--output", s->output, "Output file, e.g. run.mcap (numbered run_0.mcap... when splitting)")
      ->required();
  cmd->add_flag("-a,--all", s->selection.all, "Record every topic of the domain, including topics that appear later");
  add_topic_pattern_options(*cmd, s->selection, "Record");
  cmd->add_option("--compression", s->compression, "Chunk compression: zstd (default) or none")
      ->check(CLI::IsMember({"zstd", "none"}));
  cmd->add_option("--level", s->level, "zstd level (default 1: fast; up to 19)")->check(integer_in(-7, 19));
  cmd->add_option("--chunk-size", s->chunk_size, "Uncompressed bytes per chunk (default 1MiB)")
      ->transform(size_validator());
  cmd->add_option("--split-size", s->split_size, "Start a new numbered file after this many bytes")
      ->transform(size_validator());
  cmd->add_option("--split-duration", s->split_duration_s, "Start a new numbered file every SEC seconds")
      ->transform(positive_duration());
  cmd->add_option("--duration", s->duration_s, "Stop after SEC seconds")->transform(positive_duration());
  cmd->add_flag("-f,--force", s->force, "Overwrite existing output files");
  cmd->add_flag("--lockstep", s->lockstep,
                "Join as a lockstep subscriber: publishers wait for the recorder instead of it losing messages");
  cmd->callback([s] {
    if (s->chunk_size == 0) throw Exit{kExitUsage, "--chunk-size must be positive"};
    run_record(*s);
  });
}

}  // namespace cerulion::cli
