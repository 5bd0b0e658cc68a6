// SPDX-License-Identifier: Apache-2.0
// `cerulion clean`: removes the segments that only dead processes were using, and says so.

#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/flashback/store.hpp"
#include "command.hpp"
#include "message_format.hpp"
#include "ping_flashback.hpp"

namespace cerulion::cli {
namespace {

struct CleanSettings {
  bool dry_run = false;
  std::string force_topic;
  bool json = false;
  bool flashback = false;
  bool all_domains = false;
};

// What clean does with a flashback store: a live keeper's is never touched; a dead keeper's is
// evidence of what happened, kept unless asked for; a gone `ping --flashback`'s is scratch.
struct StoreOutcome {
  flashback::StoreEntry entry;
  std::string reason;
  bool removed = false;
  bool kept = true;
};

std::vector<StoreOutcome> clean_stores(const std::string& domain, const CleanSettings& settings) {
  std::vector<StoreOutcome> out;
  for (auto& entry : flashback::list_stores(domain)) {
    StoreOutcome o;
    o.entry = entry;
    if (entry.alive) continue;
    const bool scratch = is_orphaned_ping_store(entry);
    o.reason = scratch                  ? "the scratch store of a `ping --flashback` that is gone (not evidence)"
               : !entry.problem.empty() ? entry.problem
               : entry.keeper_pid       ? fmt::format("its keeper (pid {}) is gone", entry.keeper_pid)
                                        : "no keeper";
    if (settings.flashback || scratch) {
      o.kept = false;
      if (!settings.dry_run) {
        auto st = flashback::remove_store(entry.domain, entry.name);
        o.removed = st.ok() || st.code() == ErrorCode::NotFound;
        if (!st && st.code() != ErrorCode::NotFound) o.reason = st.message();
      }
    } else {
      o.reason += ": kept as evidence (--flashback removes it)";
    }
    out.push_back(std::move(o));
  }
  return out;
}

// What clean did in one domain.
struct DomainCleaned {
  std::string domain;
  std::vector<CleanedSegment> segments;
  std::vector<StoreOutcome> stores;
};

DomainCleaned clean_one(const std::string& domain, const CleanSettings& settings, const std::string& force_topic) {
  auto result = clean_domain(domain, settings.dry_run, force_topic);
  bool unknown_topic = !force_topic.empty() && (result.code() == ErrorCode::NotFound || (result && result->empty()));
  if (unknown_topic) throw Exit{kExitFailure, fmt::format("no topic '{}' in domain '{}'", force_topic, domain)};
  auto segments = take(std::move(result), "clean");
  return {domain, std::move(segments), clean_stores(domain, settings)};
}

nlohmann::ordered_json cleaned_json(const DomainCleaned& d, bool dry_run) {
  auto entries = nlohmann::ordered_json::array();
  for (const auto& segment : d.segments) {
    // An entry named like a segment that is not one has no topic.
    entries.push_back({{"topic", segment.topic.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(segment.topic)},
                       {"segment", segment.segment},
                       {"reason", segment.reason},
                       {"removed", segment.removed},
                       {"in_use", segment.in_use}});
  }
  auto store_entries = nlohmann::ordered_json::array();
  for (const auto& o : d.stores) {
    store_entries.push_back({{"name", o.entry.name},
                             {"path", o.entry.path},
                             {"keeper_pid", o.entry.keeper_pid},
                             {"reason", o.reason},
                             {"removed", o.removed},
                             {"kept", o.kept}});
  }
  return {{"domain", d.domain}, {"dry_run", dry_run}, {"segments", entries}, {"flashback_stores", store_entries}};
}

void append_cleaned_text(StdoutWriter& out, const DomainCleaned& d, bool dry_run) {
  for (const auto& segment : d.segments) {
    const char* verb = segment.in_use ? "kept" : dry_run ? "would remove" : segment.removed ? "removed" : "could not remove";
    if (segment.topic.empty()) {
      out.append(fmt::format("{} {}: {}\n", verb, segment.segment, segment.reason));
    } else {
      out.append(fmt::format("{} {} ({}): {}\n", verb, segment.topic, segment.segment, segment.reason));
    }
  }
  for (const auto& o : d.stores) {
    const char* verb = o.kept ? "kept" : dry_run ? "would remove" : o.removed ? "removed" : "could not remove";
    out.append(fmt::format("{} flashback store '{}' ({}): {}\n", verb, o.entry.name, o.entry.path, o.reason));
  }
}

void run_clean(const CleanSettings& settings) {
  std::string force_topic;
  if (!settings.force_topic.empty()) force_topic = take(normalize_topic_name(settings.force_topic), "--force");
  if (settings.all_domains && !force_topic.empty()) throw Exit{kExitUsage, "--force names a topic of one domain, not of --all-domains"};
  std::vector<DomainCleaned> cleaned;
  if (settings.all_domains) {
    for (const auto& domain : list_domains()) cleaned.push_back(clean_one(domain, settings, {}));
  } else {
    cleaned.push_back(clean_one(globals().domain, settings, force_topic));
  }

  // What could not be removed fails the command, whatever it prints.
  bool failed = false;
  bool anything = false;
  for (const auto& d : cleaned) {
    for (const auto& segment : d.segments) failed = failed || (!settings.dry_run && !segment.removed && !segment.in_use);
    for (const auto& o : d.stores) failed = failed || (!settings.dry_run && !o.kept && !o.removed);
    anything = anything || !d.segments.empty() || !d.stores.empty();
  }
  constexpr const char* kFailed = "some segments could not be removed";

  StdoutWriter out;
  if (settings.json) {
    if (settings.all_domains) {
      auto domains = nlohmann::ordered_json::array();
      for (const auto& d : cleaned) domains.push_back(cleaned_json(d, settings.dry_run));
      out.append(nlohmann::ordered_json{{"dry_run", settings.dry_run}, {"domains", domains}}.dump() + "\n");
    } else {
      out.append(cleaned_json(cleaned.front(), settings.dry_run).dump() + "\n");
    }
    out.flush();
    if (failed) throw Exit{kExitFailure, kFailed};
    return;
  }
  if (!anything) {
    out.append(settings.all_domains ? std::string("nothing to clean in any domain\n")
                                    : fmt::format("nothing to clean in domain '{}'\n", globals().domain));
  }
  for (const auto& d : cleaned) append_cleaned_text(out, d, settings.dry_run);
  out.flush();
  if (failed) throw Exit{kExitFailure, kFailed};
}

}  // namespace

void add_clean_command(CLI::App& app) {
  auto settings = std::make_shared<CleanSettings>();
  auto* cmd = app.add_subcommand("clean", "Remove shared-memory segments that only dead processes were using");
  cmd->footer(
      "A topic with a live participant is never touched, except by --force, even when its segment is damaged.\n"
      "Participants are checked by pid and process start time, so a reused pid does not keep a dead topic alive.\n"
      "Entries named like a segment that are not one (a FIFO, a directory, a link) are removed.\n"
      "Without --force, the bells of the domain's wait sets whose process died (/dev/shm/cerulion-bell.*) go too.\n"
      "A flashback store whose keeper is gone is listed but kept, since it is the record of what happened;\n"
      "--flashback removes it (after `cerulion flashback dump`, say). A running keeper's store is never touched.\n"
      "The store of a `ping --flashback` that is gone is scratch, not evidence: it is removed.\n"
      "Examples:\n"
      "  cerulion clean --dry-run\n"
      "  cerulion clean --flashback\n"
      "  cerulion clean --all-domains --dry-run\n"
      "  cerulion --domain test clean --force /stuck/topic");
  cmd->add_flag("--dry-run", settings->dry_run, "Say what would be removed, remove nothing");
  cmd->add_option("--force", settings->force_topic, "Remove this topic's segment even with live participants");
  cmd->add_flag("--flashback", settings->flashback, "Also remove flashback stores whose keeper is gone (kept by default: evidence)");
  cmd->add_flag("--all-domains", settings->all_domains,
                "Clean every domain with a segment in /dev/shm (the private ones of a `verify` killed with -9 too)");
  cmd->add_flag("--json", settings->json,
                 "One JSON object (docs/json.md): {domain, dry_run, segments: [...], flashback_stores: [...]}; with "
                 "--all-domains {dry_run, domains: [those objects]}");
  cmd->callback([settings] { run_clean(*settings); });
}

}  // namespace cerulion::cli
