// SPDX-License-Identifier: Apache-2.0
// `cerulion diff A.mcap B.mcap`: two recordings compared topic by topic, message by message, the
// way `verify` compares a run with its recording (verify/compare.hpp is the one comparison).

#include <string>
#include <vector>

#include <fmt/core.h>

#include "cerulion/recorder/reader.hpp"
#include "cerulion/verify/compare.hpp"
#include "cerulion/verify/report.hpp"
#include "command.hpp"
#include "supervise.hpp"

namespace cerulion::cli {
namespace {

/// A recording that cannot be read or compared (as `verify` says it).
constexpr int kExitDiffUnusable = 4;

struct DiffSettings {
  std::string expected, got;
  std::vector<std::string> topics;
  std::vector<std::string> tolerances;
  std::size_t shown = 10;
  bool json = false;
};

// An error about `file`, naming it once: a reader's errors name their file already.
std::string about_file(const std::string& file, const Status& st) {
  if (st.subject().kind == SubjectKind::Path || st.message().find(file) != std::string::npos) return printable(st.message());
  return fmt::format("{}: {}", printable(file), printable(st.message()));
}

verify::MessageSet read_side(const std::string& file, const recording::TopicSelection& selection) {
  auto reader = recorder::Reader::open(file);
  if (!reader) throw Exit{kExitDiffUnusable, about_file(file, reader.status())};
  auto set = verify::read_topics(*reader, selection);
  if (!set) throw Exit{kExitDiffUnusable, about_file(file, set.status())};
  for (const auto& problem : reader->problems()) say(fmt::format("cerulion: warning: {}: {}", file, problem));
  return std::move(*set);
}

void run_diff(const DiffSettings& s) {
  verify::CompareOptions options;
  for (const auto& t : s.tolerances) {
    auto tolerance = verify::parse_tolerance(t);
    if (!tolerance) throw Exit{kExitUsage, "--tolerance: " + tolerance.message()};
    options.tolerances.push_back(std::move(*tolerance));
  }
  recording::TopicSelection selection{.topics = s.topics, .all = s.topics.empty()};
  if (auto matcher = recording::TopicMatcher::compile(selection); !matcher) {
    throw Exit{kExitUsage, "--topics: " + matcher.message()};
  }
  const auto expected = read_side(s.expected, selection);
  const auto got = read_side(s.got, selection);
  // A named topic neither file has is a typing error more often than a difference.
  for (const auto& topic : s.topics) {
    if (verify::find_topic(expected, topic) == nullptr && verify::find_topic(got, topic) == nullptr) {
      throw Exit{kExitDiffUnusable, fmt::format("neither {} nor {} has messages on '{}'", s.expected, s.got, topic)};
    }
  }
  const auto comparison = verify::compare(expected, got, options);
  for (const auto& glob : verify::unmatched_tolerances(options, {&comparison})) {
    say(fmt::format("cerulion: warning: --tolerance '{}' matches no number field of the json topics compared", glob));
  }
  if (s.json) {
    fmt::print("{}\n", verify::json_report(comparison));
  } else {
    fmt::print("{}", verify::text_report(comparison, s.shown));
  }
  if (comparison.expected_undecodable()) throw Exit{kExitDiffUnusable, {}};
  if (!comparison.same()) throw Exit{kExitFailure, {}};
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto s = std::make_shared<DiffSettings>();
  auto* cmd = app.add_subcommand("diff", "Compare two recordings topic by topic, message by message");
  cmd->footer(
      "Byte-exact by default; json and ROS 2 (cdr, ros2msg schema) topics field by field, a number within\n"
      "--tolerance FIELD=EPS of its expected value passing (FIELD is a glob over paths such as\n"
      "pose.position.x).\n"
      "Exit status: 0 the same, 1 they differ, 2 usage, 4 a recording cannot be read.\n"
      "Examples:\n"
      "  cerulion diff golden.mcap run.mcap\n"
      "  cerulion diff golden.mcap run.mcap --topics /imu/filtered --tolerance 'accel.*=1e-9'");
  cmd->add_option("expected-file", s->expected, "The recording taken as right (MCAP file)")->required();
  cmd->add_option("got-file", s->got, "The recording compared with it (MCAP file)")->required();
  cmd->add_option("--topics", s->topics, "Only these topics (default: every topic of either file)");
  cmd->add_option("--tolerance", s->tolerances, "FIELD=EPS: a json or ROS 2 number may differ by EPS (repeatable; FIELD a glob)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--shown", s->shown, "Differences listed before the summary (default 10)");
  cmd->add_flag("--json", s->json, "Print one JSON object on stdout instead: every difference (docs/json.md)");
  cmd->callback([s] { run_diff(*s); });
}

}  // namespace cerulion::cli
