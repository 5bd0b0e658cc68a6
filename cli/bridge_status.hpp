// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `cerulion bridge` and `cerulion bridge status` print about a bridge.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#ifdef CERULION_HAVE_BRIDGE
#include "cerulion/bridge/status.hpp"

namespace cerulion::cli {
/// "export /x -> rt/x (std_msgs::msg::dds_::String_): 10 messages, 640 B, 10.0 Hz, 0 lost, 1 peer"
std::string bridged_topic_line(const bridge::BridgedTopic& topic);
/// One line for the bridge, then one per remote participant list, topic and problem.
std::vector<std::string> bridge_status_lines(const bridge::BridgeStatus& status);
}  // namespace cerulion::cli
#endif

namespace cerulion::cli {
/// What `bridge` and `bridge status` fail with in a cerulion built without the bridge.
inline constexpr const char* kBridgeNotBuilt = "bridge: this cerulion was built without Fast DDS (libfastrtps-dev)";
/// Adds `status [--json]` under `bridge`.
void add_bridge_status_command(CLI::App& bridge);
}  // namespace cerulion::cli
