// SPDX-License-Identifier: Apache-2.0
// `cerulion topic list | info TOPIC | hz TOPIC`: what runs in a domain, without holding anyone back.

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#ifdef CERULION_HAVE_BRIDGE
#include "cerulion/bridge/status.hpp"
#endif

#include "cerulion/core/discovery.hpp"
#include "cerulion/core/names.hpp"
#include "cerulion/core/subscriber.hpp"
#include "cerulion/measurement/rate_window.hpp"
#include "command.hpp"
#include "message_format.hpp"

namespace cerulion::cli {
namespace {

using json = nlohmann::ordered_json;

std::string local_time(std::uint64_t realtime_ns) {
  if (realtime_ns == 0) return "-";
  std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1000000000ull);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

/// The topic's name, and whose it is when it is not ours to join.
std::string topic_label(const TopicInfo& info) {
  std::string label = info.name;
  if (info.foreign) label += fmt::format(" (user {}: not joinable)", info.owner);
  if (!info.damage.empty()) label += " (damaged)";
  return label;
}

std::string format_rate(double hz) { return hz > 0 ? fmt::format("{:.1f} Hz", hz) : "-"; }

std::string mode_text(const TopicInfo& info) {
  return std::string(to_string(info.mode)) + (info.mode_fixed ? "" : "*");
}

/// "2 (4711, 4790 dead)": live participants of a role, then every pid with the dead marked.
std::string participants_text(const TopicInfo& info, Role role) {
  std::vector<std::string> pids;
  for (const auto& p : info.participants) {
    if (p.role == role) pids.push_back(p.alive ? std::to_string(p.pid) : fmt::format("{} dead", p.pid));
  }
  std::string text = std::to_string(info.count(role));
  if (!pids.empty()) text += " (" + fmt::format("{}", fmt::join(pids, ", ")) + ")";
  return text;
}

/// "json", "-" for raw bytes: the ENCODING column of `topic list`.
std::string encoding_text(const TopicInfo& info) {
  return info.type.message_encoding.empty() ? "-" : info.type.message_encoding;
}

/// Prints rows as left-aligned columns separated by two spaces.
void print_table(StdoutWriter& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out.append(line + "\n");
  }
}

void run_list(bool as_json) {
  auto listing = take(list_topics(globals().domain), "listing topics");
  for (const auto& problem : listing.problems) fmt::print(stderr, "cerulion: warning: {}\n", problem);
  for (const auto& info : listing.topics) {
    if (!info.damage.empty()) fmt::print(stderr, "cerulion: warning: {}\n", info.damage);
  }
  StdoutWriter out;
  if (as_json) {
    out.append(to_json(listing, globals().domain) + "\n");
  } else if (listing.topics.empty()) {
    out.append(fmt::format("no topics in domain '{}'\n", globals().domain));
  } else {
    std::vector<std::vector<std::string>> rows{
        {"TOPIC", "ENCODING", "MODE", "SLOTS", "MAX PAYLOAD", "PUBLISHED", "RATE", "PUBLISHERS", "SUBSCRIBERS", "TAPS"}};
    bool provisional = false;
    for (const auto& info : listing.topics) {
      provisional = provisional || !info.mode_fixed;
      rows.push_back({topic_label(info), encoding_text(info), mode_text(info), std::to_string(info.slot_count),
                      format_bytes(static_cast<double>(info.max_payload)), std::to_string(info.published),
                      format_rate(info.rate_hz), participants_text(info, Role::Publisher),
                      participants_text(info, Role::Subscriber), participants_text(info, Role::Tap)});
    }
    print_table(out, rows);
    if (provisional) out.append("* mode and depth provisional: no publisher has fixed them yet\n");
  }
  out.flush();
}

TopicInfo inspect_or_exit(const std::string& name) {
  std::string topic = take(normalize_topic_name(name), name);
  auto info = inspect_topic(topic, globals().domain);
  if (info.code() == ErrorCode::NotFound) {
    throw Exit{kExitFailure, fmt::format("no topic '{}' in domain '{}' (see 'cerulion topic list')", topic,
                                         globals().domain)};
  }
  return take(std::move(info), topic);
}

/// What the running bridges of the domain do with the topic, from their status files: one field
/// per direction ("imported from DDS rt/x (...) by bridge 123: 10 messages, 0 lost").
std::vector<std::vector<std::string>> bridged_fields(const std::string& topic) {
  std::vector<std::vector<std::string>> fields;
#ifdef CERULION_HAVE_BRIDGE
  auto bridges = bridge::read_status_files(bridge::kDefaultStatusDirectory, globals().domain);
  if (!bridges) return fields;
  for (const auto& b : bridges->bridges) {
    for (const auto& t : b.topics) {
      if (t.topic != topic) continue;
      fields.push_back({"bridged:", fmt::format("{} DDS {} ({}) by bridge {}: {}, {} lost",
                                                t.imported ? "imported from" : "exported to", t.dds_topic, t.dds_type,
                                                b.pid, counted(t.messages, "message"), t.lost)});
    }
  }
#else
  (void)topic;
#endif
  return fields;
}

void run_info(const std::string& topic, bool as_json) {
  TopicInfo info = inspect_or_exit(topic);
  StdoutWriter out;
  if (as_json) {
    out.append(to_json(info) + "\n");
    out.flush();
    return;
  }
  std::vector<std::vector<std::string>> fields{
      {"topic:", info.name},
      {"domain:", info.domain},
      {"segment:", info.segment},
      {"mode:", std::string(to_string(info.mode)) + (info.mode_fixed ? "" : " (provisional: no publisher yet)")},
      {"encoding:", info.type.message_encoding.empty()
                        ? std::string(info.type_declared ? "raw bytes" : "raw bytes (no type declared)")
                        : info.type.message_encoding},
      {"schema:", info.type.schema.empty()
                      ? std::string("none")
                      : fmt::format("{} ({}, {})", info.type.schema.name, info.type.schema.encoding,
                                    counted(info.type.schema.data.size(), "byte"))},
      {"depth:", fmt::format("{} ({}){}", counted(info.depth, "message"), counted(info.slot_count, "slot"),
                             info.mode_fixed ? "" : " (provisional: a publisher may ask for up to this)")},
      {"max payload:", fmt::format("{} (largest so far {})", format_bytes(static_cast<double>(info.max_payload)),
                                   format_bytes(static_cast<double>(info.largest_payload)))},
      {"published:", fmt::format("{}, {}, last at {}", counted(info.published, "message"), format_rate(info.rate_hz),
                                 local_time(info.last_publish_realtime_ns))},
      {"publishers:", participants_text(info, Role::Publisher)},
      {"subscribers:", participants_text(info, Role::Subscriber)},
      {"taps:", participants_text(info, Role::Tap)},
      // A segment's file size is the address space of every slot at the ceiling; tmpfs holds only
      // the pages written or reserved, so `ls -l` and `du` disagree by design.
      {"segment size:", fmt::format("{} of address space (sparse: the size `ls -l` shows)",
                                    format_bytes(static_cast<double>(info.segment_bytes)))},
      {"memory:", fmt::format("{} of /dev/shm (what `du` shows)", format_bytes(static_cast<double>(info.resident_bytes)))},
      {"created:", fmt::format("by pid {} at {}", info.creator_pid, local_time(info.created_realtime_ns))},
      {"permissions:", fmt::format("{:04o}, owner {} (uid {}){}{}", info.permissions, info.owner, info.owner_uid,
                                   info.group.empty() ? "" : fmt::format(", shared with group {}", info.group),
                                   info.foreign ? "; another user's topic: joining it is refused" : "")},
  };
  if (!info.damage.empty()) fields.push_back({"damage:", info.damage});
  for (auto& f : bridged_fields(info.name)) fields.push_back(std::move(f));
  print_table(out, fields);
  if (!info.participants.empty()) {
    std::vector<std::vector<std::string>> rows{{"  ROLE", "PID", "ALIVE", "POSITION", "LOST", "MESSAGES"}};
    for (const auto& p : info.participants) {
      bool reader = p.role != Role::Publisher;
      rows.push_back({std::string("  ") + to_string(p.role), std::to_string(p.pid), p.alive ? "yes" : "no (dead)",
                      reader ? std::to_string(p.position) : "-", reader ? std::to_string(p.lost) : "-",
                      std::to_string(p.messages)});
    }
    out.append("participants:\n");
    print_table(out, rows);
  }
  if (!info.deaths.empty()) {
    std::vector<std::vector<std::string>> rows{{"  ROLE", "PID", "EVICTED AT", "BY PID"}};
    for (const auto& d : info.deaths) {
      rows.push_back({std::string("  ") + to_string(d.role), std::to_string(d.pid), local_time(d.noticed_realtime_ns),
                      std::to_string(d.noticed_by)});
    }
    out.append(info.deaths_total > info.deaths.size()
                   ? fmt::format("recent deaths (the last {} of {}):\n", info.deaths.size(), info.deaths_total)
                   : std::string("deaths:\n"));
    print_table(out, rows);
  }
  out.flush();
}

json rate_json(const std::string& topic, const measurement::RateReport& r, std::uint64_t lost) {
  return {{"topic", topic},           {"rate_hz", r.rate_hz},          {"min_period_s", r.min_period_s},
          {"max_period_s", r.max_period_s}, {"std_dev_s", r.std_dev_s}, {"window", r.window},
          {"new_messages", r.new_messages}, {"lost", lost}};
}

void run_hz(const std::string& topic, std::size_t window, std::uint64_t reports_wanted, bool as_json) {
  install_stop_handlers();
  SubscriberOptions options;
  options.role = Role::Tap;  // hz must never hold a lockstep publisher back
  options.topic.domain = globals().domain;
  options.wait.cancel = stop_flag();
  Subscriber tap = take(Subscriber::create(topic, options), topic);
  measurement::RateWindow rates(window);
  StdoutWriter out(0);
  std::uint64_t reports = 0;
  auto next_report = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= next_report) {
      const measurement::RateReport r = rates.report();
      if (as_json) {
        out.append(rate_json(tap.topic(), r, tap.lost()).dump() + "\n");
      } else if (r.new_messages == 0) {
        out.append("no new messages\n");
      } else {
        out.append(fmt::format("average rate: {:.3f}\n\tmin: {:.6f}s max: {:.6f}s std dev: {:.6f}s window: {}\n",
                               r.rate_hz, r.min_period_s, r.max_period_s, r.std_dev_s, r.window));
      }
      out.flush();
      if (reports_wanted > 0 && ++reports >= reports_wanted) return;
      next_report += std::chrono::seconds(1);
      continue;
    }
    auto sample = tap.receive(next_report - now);
    if (sample) {
      rates.add(*sample);
    } else if (sample.code() == ErrorCode::Interrupted) {
      throw Exit{stop_exit_code(), {}};
    } else if (sample.code() != ErrorCode::Timeout) {
      check(sample.status(), tap.topic());
    }
  }
}

}  // namespace

void add_topic_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("topic", "List topics, inspect one, measure its rate");
  cmd->footer(
      "Examples:\n"
      "  cerulion topic list\n"
      "  cerulion topic info /chatter\n"
      "  cerulion topic hz /chatter -n 5");
  cmd->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  auto* list = cmd->add_subcommand("list", "Every topic of the domain: encoding, mode, participants, messages, rate");
  list->footer(
      "Examples:\n"
      "  cerulion topic list\n"
      "  cerulion --domain lab topic list --json");
  list->add_flag("--json", *list_json,
                 "One JSON object (docs/json.md): {domain, topics: [...], problems: [...]}; a topic's message_encoding "
                 "and schema ({name, encoding, bytes}) are null for raw bytes");
  list->callback([list_json] { run_list(*list_json); });

  auto info_topic = std::make_shared<std::string>();
  auto info_json = std::make_shared<bool>(false);
  auto* info = cmd->add_subcommand("info", "Everything about one topic, participant by participant");
  info->footer(
      "Examples:\n"
      "  cerulion topic info /chatter\n"
      "  cerulion topic info /chatter --json");
  info->add_option("topic", *info_topic, "Topic name")->required();
  info->add_flag("--json", *info_json,
                 "One JSON object (docs/json.md); message_encoding and schema ({name, encoding, bytes}) are null for "
                 "raw bytes");
  info->callback([info_topic, info_json] { run_info(*info_topic, *info_json); });

  struct HzSettings {
    std::string topic;
    std::size_t window = 10000;
    std::uint64_t reports = 0;
    bool json = false;
  };
  auto hz_settings = std::make_shared<HzSettings>();
  auto* hz = cmd->add_subcommand("hz", "Rolling publish rate of a topic, once a second (as a tap)");
  hz->footer(
      "Examples:\n"
      "  cerulion topic hz /chatter\n"
      "  cerulion topic hz /chatter -n 5 --json");
  hz->add_option("topic", hz_settings->topic, "Topic name")->required();
  hz->add_option("-w,--window", hz_settings->window, "Periods the statistics cover (default 10000)")
      ->check(count_in(2, 10000000));
  hz->add_option("-n,--count", hz_settings->reports, "Exit after N reports")
      ->check(positive_count());
  hz->add_flag("--json", hz_settings->json,
               "One JSON object per line and report (docs/json.md): topic, rate_hz, min_period_s, max_period_s, "
               "std_dev_s, window, new_messages, lost");
  hz->callback([hz_settings] {
    run_hz(hz_settings->topic, hz_settings->window, hz_settings->reports, hz_settings->json);
  });
}

}  // namespace cerulion::cli
