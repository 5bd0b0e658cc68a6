// SPDX-License-Identifier: Apache-2.0
// `cerulion verify RECORDING --input T --output T -- COMMAND`: the command run in a private domain
// over the recording's inputs in lockstep, its outputs compared with the recorded ones
// (verify/verification.hpp runs it; verify/report.hpp says what it found).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/core.h>

#include "cerulion/verify/report.hpp"
#include "cerulion/verify/verification.hpp"
#include "command.hpp"
#include "numbers.hpp"
#include "supervise.hpp"

namespace cerulion::cli {
namespace {

// The exit codes a CI system reads; documented in --help and cerulion-verify(1).
constexpr int kExitVerifyCommandFailed = 3;
constexpr int kExitVerifyRecordingUnusable = 4;

struct VerifySettings {
  std::string recording;
  std::vector<std::string> inputs, outputs;
  unsigned repeat = 1;
  std::string json_file, junit_file, keep, clock;
  std::vector<std::string> tolerances;
  double settle_s = 0.1;
  double startup_timeout_s = 10;
  double output_timeout_s = 10;
  std::size_t shown = 10;
  bool allow_damaged = false;
  std::vector<std::string> command;
};

// Opens a report file before the run, so that a path that cannot be written is said at once.
std::unique_ptr<std::ofstream> report_file(const std::string& path, const char* option) {
  if (path.empty()) return nullptr;
  auto out = std::make_unique<std::ofstream>(path, std::ios::trunc);
  if (!*out) throw Exit{kExitUsage, fmt::format("{} {}: cannot be written", option, printable(path))};
  return out;
}

void write_report(std::ofstream* out, const std::string& text, const std::string& path) {
  if (out == nullptr) return;
  *out << text;
  out->flush();
  if (!*out) say(fmt::format("cerulion: warning: {}: the report could not be written whole", path));
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0));
}

void run_verify(const VerifySettings& s) {
  if (s.command.empty()) throw Exit{kExitUsage, "no command to run: give it after --"};
  verify::VerifyOptions options;
  options.recording = s.recording;
  options.repeat = s.repeat;
  options.keep = s.keep;
  options.allow_damaged = s.allow_damaged;
  for (const auto& t : s.tolerances) {
    auto tolerance = verify::parse_tolerance(t);
    if (!tolerance) throw Exit{kExitUsage, "--tolerance: " + tolerance.message()};
    options.compare.tolerances.push_back(std::move(*tolerance));
  }
  for (const auto* list : {&s.inputs, &s.outputs}) {
    if (auto matcher = recording::TopicMatcher::compile({.topics = *list}); !matcher) {
      throw Exit{kExitUsage, fmt::format("{}: {}", list == &s.inputs ? "--input" : "--output", matcher.message())};
    }
  }
  for (const auto& input : s.inputs) {
    for (const auto& output : s.outputs) {
      if (recording::TopicMatcher::compile({.topics = {input}})->matches(output)) {
        throw Exit{kExitUsage, fmt::format("'{}' is both an --input and an --output", printable(output))};
      }
    }
  }
  if (!s.keep.empty() && std::filesystem::exists(std::filesystem::symlink_status(s.keep))) {
    throw Exit{kExitUsage, fmt::format("--keep {}: already exists (a golden file is never replaced)", printable(s.keep))};
  }
  options.run.command = s.command;
  options.run.inputs = s.inputs;
  options.run.outputs = s.outputs;
  options.run.clock_topic = s.clock;
  options.run.settle = milliseconds_of(s.settle_s);
  options.run.startup_timeout = milliseconds_of(s.startup_timeout_s);
  options.run.output_timeout = milliseconds_of(s.output_timeout_s);
  auto json = report_file(s.json_file, "--json");
  auto junit = report_file(s.junit_file, "--junit");
  install_stop_handlers();
  options.run.cancel = stop_flag();
  recording::EventQueue events;
  options.run.events = &events;

  const auto v = verify::verify(options);
  // What the runs read is theirs to know; what they could not do as asked is the user's.
  for (const auto& event : events.drain()) {
    if (event.kind != recording::EventKind::Info) say(event_line(event));
  }
  for (const auto& glob : v.unmatched_tolerances) {
    say(fmt::format("cerulion: warning: --tolerance '{}' matches no number field of the json outputs compared", glob));
  }
  write_report(json.get(), verify::json_report(v) + "\n", s.json_file);
  write_report(junit.get(), verify::junit_report(v, s.recording), s.junit_file);
  // A verdict on the outputs is the report on stdout; a run that could not judge them is one
  // line on stderr, as every command says what stopped it.
  switch (v.verdict) {
    case verify::Verdict::Same:
    case verify::Verdict::Differ: break;
    case verify::Verdict::CommandFailed: throw Exit{kExitVerifyCommandFailed, printable(v.problem)};
    case verify::Verdict::RecordingUnusable: throw Exit{kExitVerifyRecordingUnusable, printable(v.problem)};
    case verify::Verdict::Interrupted: throw Exit{stop_exit_code(), {}};
  }
  fmt::print("{}", verify::text_report(v, s.shown));
  std::fflush(stdout);
  if (!s.keep.empty() && !v.runs.empty()) {
    say(fmt::format("cerulion: wrote {}: run 1's {} inputs and {} outputs (a golden file for later runs)", printable(s.keep),
                    v.runs[0].inputs, v.runs[0].outputs));
  }
  if (v.verdict == verify::Verdict::Differ) throw Exit{kExitFailure, {}};
}

}  // namespace

void add_verify_command(CLI::App& app) {
  auto s = std::make_shared<VerifySettings>();
  auto* cmd = app.add_subcommand("verify", "Run a node over a recording's inputs and compare its outputs with the recorded ones");
  cmd->footer(
      "The command runs in a private domain (CERULION_DOMAIN is set for it). Once it has subscribed\n"
      "to every input, the inputs are published in log-time order in lockstep, and after each one\n"
      "the outputs the recording shows before the next are awaited (or --settle of quiet when it\n"
      "has none): no wall-clock pacing. Times are seconds, or with a unit: 500ms, 2s, 1m. Outputs\n"
      "are compared byte by byte, json topics field by field, and each output's type (encoding and\n"
      "schema) with the recorded one; an extra or missing output is counted after its input.\n"
      "Exit status: 0 same outputs; 1 outputs differ (or between --repeat runs); 2 usage; 3 the\n"
      "command could not start, crashed, exited early, never subscribed, stopped taking inputs or\n"
      "stopped answering (an output the recording shows did not come within --output-timeout);\n"
      "4 the recording cannot serve (an input or output topic missing, a message that does not\n"
      "decode, or damaged: not finalized, a chunk that fails its CRC, messages its own statistics\n"
      "count missing; --allow-damaged verifies the part before the damage instead, and the report\n"
      "says so); 130 interrupted (the command is stopped).\n"
      "Examples:\n"
      "  cerulion verify golden.mcap --input /imu --output /imu/filtered -- ./imu_filter\n"
      "  cerulion verify run.mcap --input /imu /gps --output /pose /twist -- ./fuse --rate 100\n"
      "  cerulion verify inputs.mcap --input /imu --output /imu/filtered --keep golden.mcap -- ./imu_filter\n"
      "  cerulion verify golden.mcap --input /imu --output /imu/filtered --repeat 5 --junit report.xml -- ./imu_filter");
  // Named "file" with "MCAP" in its help: completions offer *.mcap files, and its topics to --input.
  cmd->add_option("file", s->recording, "MCAP file with the inputs (and the expected outputs)")->required();
  // Topics after one flag (`--input /a /b`), the flag repeated, or a comma list; the list ends at
  // the next option or at `--` (main() takes the command after it off the line first).
  for (auto [name, list, help] : {std::tuple{"--input", &s->inputs, "Topic published from the recording (T1 T2..., T1,T2 or repeated)"},
                                  std::tuple{"--output", &s->outputs, "Topic collected from the command and compared (T1 T2..., T1,T2 or repeated)"}}) {
    cmd->add_option(name, *list, help)
        ->required()
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
  cmd->add_option("--repeat", s->repeat, "Runs of the same inputs; later runs are compared with the first (default 1)")
      ->check(count_in(1, 1000));
  cmd->add_option("--tolerance", s->tolerances, "FIELD=EPS: a json number may differ by EPS (repeatable; FIELD a glob)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--settle", s->settle_s,
                  "Quiet time that ends the wait after an input when the recording shows no outputs (default 100ms)")
      ->transform(non_negative_duration());
  cmd->add_option("--startup-timeout", s->startup_timeout_s, "Time the command may take to subscribe to every input (default 10s)")
      ->transform(positive_duration());
  cmd->add_option("--output-timeout", s->output_timeout_s,
                  "Time an input may wait for its recorded outputs, or for room (default 10s)")
      ->transform(positive_duration());
  cmd->add_option("--clock", s->clock, "Publish each input's log time on this topic before it, as json {\"ns\": ...}");
  cmd->add_option("--keep", s->keep, "Write the first run's inputs and outputs to this MCAP file (a golden file)");
  cmd->add_option("--json", s->json_file, "Write every difference as one JSON object to FILE (docs/json.md)");
  cmd->add_option("--junit", s->junit_file, "Write a JUnit XML report to FILE");
  cmd->add_option("--shown", s->shown, "Differences listed before the summary (default 10)");
  cmd->add_flag("--allow-damaged", s->allow_damaged,
                "Verify a damaged recording on its intact part (before the damage) instead of exiting 4");
  add_command_after_dashes(*cmd, s->command, "The command and its arguments, after --");
  cmd->callback([s] { run_verify(*s); });
}

}  // namespace cerulion::cli
