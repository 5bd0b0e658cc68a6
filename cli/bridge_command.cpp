// SPDX-License-Identifier: Apache-2.0
// `cerulion bridge [TOPIC...]`: local topics out to DDS and DDS topics in (bridge/ does the work),
// with a line per topic as it starts being carried, a progress line once a second and a summary at
// the end.

#include <fmt/core.h>

#include "bridge_status.hpp"
#include "cerulion/core/names.hpp"
#include "command.hpp"
#include "supervise.hpp"
#include "topic_options.hpp"
#ifdef CERULION_HAVE_BRIDGE
#include "cerulion/bridge/bridge.hpp"
#endif

namespace cerulion::cli {
namespace {

struct BridgeSettings {
  recording::TopicSelection selection;
  bool export_only = false, import_only = false, both = false, best_effort = false, lockstep = false,
       no_shared_memory = false;
  std::uint32_t dds_domain = 0, depth = 10;
  double duration_s = 0;
  std::string qos;
  std::vector<std::string> msg_path;
  CLI::Option* depth_option = nullptr;
};

#ifdef CERULION_HAVE_BRIDGE
// What the bridge carried so far, in one line.
std::string progress_line(const bridge::BridgeStatus& st) {
  std::uint64_t out = 0, in = 0, out_topics = 0, in_topics = 0;
  for (const auto& t : st.topics) {
    (t.imported ? in : out) += t.messages;
    ++(t.imported ? in_topics : out_topics);
  }
  return fmt::format("bridging: out {} on {}, in {} on {}, {} lost, {}", counted(out, "message"),
                     counted(out_topics, "topic"), counted(in, "message"), counted(in_topics, "topic"),
                     st.total_lost(), counted(st.remote_participants.size(), "remote participant"));
}

// What the bridge carries, which way, between which domains: "/a, topics matching '^/b/' of
// domain 'default' both ways with DDS domain 0", so a mistyped topic shows at once.
std::string bridged_text(const bridge::BridgeOptions& o) {
  std::string what;
  auto add = [&what](const std::string& part) { what += (what.empty() ? "" : ", ") + part; };
  if (o.selection.all) add("every topic (new ones too)");
  for (const auto& t : o.selection.all ? std::vector<std::string>{} : o.selection.topics) {
    auto name = normalize_topic_name(t);
    add(name ? *name : t);
  }
  for (const auto& e : o.selection.include) add(fmt::format("topics matching '{}'", e));
  for (std::size_t i = 0; i < o.selection.exclude.size(); ++i) {
    what += fmt::format("{} '{}'", i == 0 ? " except those matching" : " or", o.selection.exclude[i]);
  }
  const char* way = o.direction == bridge::Direction::Export   ? "out to"
                    : o.direction == bridge::Direction::Import ? "in from"
                                                                : "both ways with";
  return fmt::format("{} of domain '{}' {} DDS domain {}", what, o.domain, way, o.dds_domain);
}

void run_bridge(const BridgeSettings& s) {
  require_topic_selection(s.selection, "bridge");
  bridge::BridgeOptions o;
  o.domain = globals().domain;
  o.dds_domain = s.dds_domain;
  o.selection = s.selection;
  o.direction = s.export_only   ? bridge::Direction::Export
                : s.import_only ? bridge::Direction::Import
                                : bridge::Direction::Both;
  o.depth = s.depth;
  o.reliable = !s.best_effort;
  if (s.qos == "sensor-data") {
    // ROS 2's rmw_qos_profile_sensor_data: best effort, keep last 5 (a depth given still counts).
    o.reliable = false;
    if (s.depth_option->count() == 0) o.depth = 5;
  }
  o.msg_path = s.msg_path;
  o.lockstep = s.lockstep;
  o.shared_memory = !s.no_shared_memory;
  install_stop_handlers();
  recording::EventQueue events;
  o.events = &events;
  auto b = take(bridge::Bridge::create(o), "bridge");
  check(b.start(), "bridge");
  say(fmt::format("bridging {} ({}, keep last {}); Ctrl-C stops", bridged_text(o), o.reliable ? "reliable" : "best effort",
                  o.depth));
  Supervision supervision;
  supervision.events = &events;
  supervision.duration_s = s.duration_s;
  supervision.progress = [&](double) { return progress_line(b.status()); };
  (void)supervise(supervision);
  const auto final_status = b.status();
  b.stop();
  say_events(events);
  for (const auto& line : bridge_status_lines(final_status)) say(line);
  if (int code = finished_exit_code(); code != kExitOk) throw Exit{code, {}};
}
#endif

}  // namespace

void add_bridge_command(CLI::App& app) {
  auto s = std::make_shared<BridgeSettings>();
  auto* cmd =
      app.add_subcommand("bridge", "Carry topics to and from other machines over DDS (Fast DDS; ROS 2 sees them)");
  cmd->footer(
      "Local /robot/camera is DDS topic rt/robot/camera, as ROS 2 names it. A ROS 2 message (encoding cdr,\n"
      "a ros2msg schema named pkg/msg/T) goes out as its own type pkg::msg::dds_::T_, its CDR as it is, with\n"
      "its type hash; JSON topics travel as std_msgs/msg/String, everything else as UInt8MultiArray.\n"
      "Every rt/ topic of a ROS 2 node comes in as cdr, with the definition found on --msg-path,\n"
      "$CERULION_MSG_PATH or $AMENT_PREFIX_PATH (share/<pkg>/msg/<T>.msg). A bridge never sends back\n"
      "what it imported. QoS: reliable, keep last 10, and transient local, so a reader that matches\n"
      "late still gets a new topic's first messages (a volatile ROS 2 reader gets only new ones).\n"
      "Examples:\n"
      "  cerulion bridge -a                      # everything, both ways, DDS domain 0\n"
      "  cerulion bridge /robot/camera --export --dds-domain 7\n"
      "  cerulion bridge -e '^/robot/' -x '/debug$' --best-effort\n"
      "  cerulion bridge status");
  cmd->add_option("topics", s->selection.topics, "Topics to bridge (local names; rt/ is added on the DDS side)");
  cmd->add_flag("-a,--all", s->selection.all, "Bridge every topic of either side, including topics that appear later");
  add_topic_pattern_options(*cmd, s->selection, "Bridge");
  auto* ex = cmd->add_flag("--export", s->export_only, "Only local topics out to DDS");
  auto* im = cmd->add_flag("--import", s->import_only, "Only DDS topics in as local topics");
  auto* both = cmd->add_flag("--both", s->both, "Both ways (the default)");
  ex->excludes(im)->excludes(both);
  im->excludes(both);
  cmd->add_option("--dds-domain", s->dds_domain, "DDS domain id, ROS_DOMAIN_ID in ROS 2 (default 0)")
      ->check(integer_in(0, 232));
  s->depth_option = cmd->add_option("--depth", s->depth, "DDS history: keep the last N samples (default 10)")
                        ->check(integer_in(1, 10000));
  cmd->add_option("--qos", s->qos, "A ROS 2 QoS profile: sensor-data (best effort, keep last 5)")
      ->check(CLI::IsMember({"sensor-data"}));
  cmd->add_option("--msg-path", s->msg_path,
                  "Folder of .msg files (DIR/<pkg>/msg/<T>.msg or DIR/share/<pkg>/msg/<T>.msg) for the types of "
                  "ROS 2 nodes' topics; repeatable, searched before $CERULION_MSG_PATH and $AMENT_PREFIX_PATH");
  cmd->add_flag("--best-effort", s->best_effort, "Best-effort DDS reliability instead of reliable");
  cmd->add_flag("--lockstep", s->lockstep,
                "Read local topics as a lockstep subscriber: publishers wait for the bridge instead of it missing "
                "messages");
  cmd->add_flag("--no-shared-memory", s->no_shared_memory,
                "DDS over UDP only, even to peers on this machine (the path between two machines)");
  cmd->add_option("--duration", s->duration_s, "Stop after SEC seconds")->transform(positive_duration());
  add_bridge_status_command(*cmd);
  cmd->callback([s, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // `bridge status` ran
    check_topic_patterns(s->selection);
#ifdef CERULION_HAVE_BRIDGE
    run_bridge(*s);
#else
    throw Exit{kExitFailure, kBridgeNotBuilt};
#endif
  });
}

}  // namespace cerulion::cli
