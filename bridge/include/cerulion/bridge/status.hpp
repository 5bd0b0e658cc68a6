// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a running bridge is doing, and where another process reads it: each bridge replaces a small
// JSON file in /dev/shm once a second (atomically: written aside, then renamed), named after its
// cerulion domain and process id, and removes it when it stops. Only its user reads it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"

namespace cerulion::bridge {

/// One direction of one topic.
struct BridgedTopic {
  std::string topic;       ///< local name, "/robot/camera"
  std::string dds_topic;   ///< "rt/robot/camera"
  std::string dds_type;    ///< "std_msgs::msg::dds_::String_"...
  bool imported = false;   ///< false: exported (local -> DDS); true: imported (DDS -> local)
  std::uint64_t messages = 0;  ///< carried across
  std::uint64_t bytes = 0;     ///< payload bytes carried across
  /// What could not be delivered. Export: messages the tap missed, writes DDS refused, and what
  /// a new writer still held for a remote reader when the bridge stopped before one matched.
  /// Import: samples missing from the writers' sequences (or DDS's count of lost and rejected
  /// samples, if larger) plus local publishes that failed; a writer whose bridge started after
  /// this one was importing the topic owes its messages from its first.
  std::uint64_t lost = 0;
  double rate_hz = 0;          ///< messages per second over the last status period
  double bytes_per_s = 0;
  std::uint32_t peers = 0;     ///< matched DDS readers (export) or writers (import)
};

/// A snapshot of one bridge.
struct BridgeStatus {
  std::uint32_t pid = 0;
  std::string domain;          ///< cerulion domain
  std::uint32_t dds_domain = 0;
  std::string direction;       ///< "export", "import", "both"
  bool reliable = true;
  std::uint32_t depth = 0;
  std::uint64_t started_realtime_ns = 0;
  std::uint64_t updated_realtime_ns = 0;
  /// DDS participants of other processes or machines seen in the DDS domain, by name (or GUID).
  std::vector<std::string> remote_participants;
  std::vector<BridgedTopic> topics;
  /// Topics that could not be bridged, one line each ("/x: cannot publish locally: ...").
  std::vector<std::string> problems;

  std::uint64_t total_lost() const noexcept;
};

/// The status as one JSON object (what the status file holds and `--json` prints).
std::string to_json(const BridgeStatus& status);
/// Reads to_json's output; InvalidArgument if it is not one.
Result<BridgeStatus> status_from_json(std::string_view text);

/// Where status files live by default: /dev/shm, beside the topics.
inline constexpr std::string_view kDefaultStatusDirectory = "/dev/shm";
/// The file of the bridge of process `pid` in `domain`: "<dir>/cerulion-bridge.<domain>.<pid>.json".
std::string status_file_path(std::string_view directory, std::string_view domain, std::uint32_t pid);
/// Replaces the file atomically and complete (written aside, then renamed over it), mode 0600.
[[nodiscard]] Status write_status_file(const std::string& path, const BridgeStatus& status);
/// One status file: NotFound, PermissionDenied (another user's), Corrupted (not a regular file, or
/// not a bridge status).
Result<BridgeStatus> read_status_file(const std::string& path);

/// The running bridges of a domain, and what was found in place of a status file that is not one.
struct BridgeListing {
  std::vector<BridgeStatus> bridges;  ///< by pid
  std::vector<std::string> problems;  ///< one line each ("/dev/shm/... is a FIFO, not a bridge status file")
};
/// Every bridge of `domain` whose process is alive. Files of dead processes (a bridge killed with
/// -9) are removed on the way. No bridges when none runs.
Result<BridgeListing> read_status_files(std::string_view directory, std::string_view domain);

}  // namespace cerulion::bridge
