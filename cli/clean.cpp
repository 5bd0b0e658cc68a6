// `cerulion clean`: removes the segments that only dead processes were using, and says so.

#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/names.hpp"
#include "command.hpp"
#include "message_format.hpp"

namespace cerulion::cli {
namespace {

struct CleanSettings {
  bool dry_run = false;
  std::string force_topic;
  bool json = false;
};

void run_clean(const CleanSettings& settings) {
  std::string force_topic;
  if (!settings.force_topic.empty()) force_topic = take(normalize_topic_name(settings.force_topic), "--force");
  auto result = clean_domain(globals().domain, settings.dry_run, force_topic);
  bool unknown_topic = !force_topic.empty() && (result.code() == ErrorCode::NotFound || (result && result->empty()));
  if (unknown_topic) {
    throw Exit{kExitFailure, fmt::format("no topic '{}' in domain '{}'", force_topic, globals().domain)};
  }
  auto cleaned = take(std::move(result), "clean");

  StdoutWriter out;
  if (settings.json) {
    auto entries = nlohmann::ordered_json::array();
    for (const auto& segment : cleaned) {
      entries.push_back({{"topic", segment.topic},
                         {"segment", segment.segment},
                         {"reason", segment.reason},
                         {"removed", segment.removed},
                         {"in_use", segment.in_use}});
    }
    out.append(nlohmann::ordered_json{{"domain", globals().domain}, {"dry_run", settings.dry_run}, {"segments", entries}}
                   .dump() +
               "\n");
    out.flush();
    return;
  }
  if (cleaned.empty()) out.append(fmt::format("nothing to clean in domain '{}'\n", globals().domain));
  bool failed = false;
  for (const auto& segment : cleaned) {
    const char* verb = segment.in_use       ? "kept"
                       : settings.dry_run   ? "would remove"
                       : segment.removed    ? "removed"
                                            : "could not remove";
    failed = failed || (!settings.dry_run && !segment.removed && !segment.in_use);
    std::string name = segment.topic.empty() ? segment.segment : segment.topic;
    out.append(fmt::format("{} {} ({}): {}\n", verb, name, segment.segment, segment.reason));
  }
  out.flush();
  if (failed) throw Exit{kExitFailure, "some segments could not be removed"};
}

void add_clean_command(CLI::App& app) {
  auto settings = std::make_shared<CleanSettings>();
  auto* cmd = app.add_subcommand("clean", "Remove shared-memory segments that only dead processes were using");
  cmd->footer(
      "A topic with a live participant is never touched, except by --force, even when its segment is damaged.\n"
      "Participants are checked by pid and process start time, so a reused pid does not keep a dead topic alive.\n"
      "Entries named like a segment that are not one (a FIFO, a directory, a link) are removed.");
  cmd->add_flag("--dry-run", settings->dry_run, "Say what would be removed, remove nothing");
  cmd->add_option("--force", settings->force_topic, "Remove this topic's segment even with live participants");
  cmd->add_flag("--json", settings->json, "One JSON object: {domain, dry_run, segments: [...]}");
  cmd->callback([settings] { run_clean(*settings); });
}

static CommandRegistration registration(21, add_clean_command);

}  // namespace
}  // namespace cerulion::cli
