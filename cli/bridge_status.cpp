// SPDX-License-Identifier: Apache-2.0
// `cerulion bridge status [--json]`: what the bridges of the domain are doing, from the status
// files they replace once a second.

#include "bridge_status.hpp"

#include <fmt/core.h>

#include "command.hpp"
#include "status_report.hpp"

namespace cerulion::cli {

#ifdef CERULION_HAVE_BRIDGE
std::string bridged_topic_line(const bridge::BridgedTopic& t) {
  // A topic that came and went before the bridge could open it has no type and carried nothing.
  if (!t.imported && t.dds_type.empty() && t.messages == 0) {
    return fmt::format("export {} -> {}: came and went before it could be read, {} lost", t.topic, t.dds_topic, t.lost);
  }
  return fmt::format("{} {} -> {} ({}): {}, {}, {:.1f} Hz, {}/s, {} lost, {}", t.imported ? "import" : "export",
                     t.imported ? t.dds_topic : t.topic, t.imported ? t.topic : t.dds_topic,
                     t.dds_type, counted(t.messages, "message"), format_bytes(static_cast<double>(t.bytes)),
                     t.rate_hz, format_bytes(t.bytes_per_s), t.lost,
                     counted(t.peers, t.imported ? "writer" : "reader"));
}

std::vector<std::string> bridge_status_lines(const bridge::BridgeStatus& s) {
  std::vector<std::string> lines;
  const double up = static_cast<double>(s.updated_realtime_ns - s.started_realtime_ns) / 1e9;
  lines.push_back(fmt::format("bridge {}: domain '{}' <-> DDS domain {}, {}, {}, keep last {}, up {:.0f} s, {}",
                              s.pid, s.domain, s.dds_domain, s.direction, s.reliable ? "reliable" : "best effort",
                              s.depth, up, counted(s.total_lost(), "message") + " lost"));
  std::string peers;
  for (const auto& p : s.remote_participants) peers += (peers.empty() ? "" : ", ") + p;
  lines.push_back(fmt::format("  {} seen{}{}", counted(s.remote_participants.size(), "remote participant"),
                              peers.empty() ? "" : ": ", peers));
  for (const auto& t : s.topics) lines.push_back("  " + bridged_topic_line(t));
  for (const auto& p : s.problems) lines.push_back("  problem: " + p);
  return lines;
}
#endif

void add_bridge_status_command(CLI::App& parent) {
  add_status_command(parent,
                     {"bridge", "bridges", "What the running bridges of the domain carry, from their status files",
                      "Each running bridge replaces /dev/shm/cerulion-bridge.<domain>.<pid>.json once a second.\n"
                      "With no bridge running in the domain it says so and exits 1 (with --json, after an object whose "
                      "list of\nbridges is empty).\n"
                      "Examples:\n"
                      "  cerulion bridge status\n"
                      "  cerulion --domain lab bridge status --json"},
                     []() -> StatusReport {
#ifdef CERULION_HAVE_BRIDGE
                       auto listing = bridge::read_status_files(bridge::kDefaultStatusDirectory, globals().domain);
                       check(listing.status(), "bridge status");
                       return status_report(listing->bridges, listing->problems, bridge_status_lines);
#else
                       throw Exit{kExitFailure, kBridgeNotBuilt};
#endif
                     });
}

}  // namespace cerulion::cli
