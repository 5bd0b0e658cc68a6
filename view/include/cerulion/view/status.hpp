// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a running view server is doing, and where another process reads it: each server (the
// `cerulion view` command, or a program of one's own that runs a ViewServer) replaces a small JSON
// file in /dev/shm once a second (atomically: written aside, then renamed), named after its
// cerulion domain and process id, and removes it when it stops. Only its user reads it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cerulion/core/status.hpp"
#include "cerulion/view/counts.hpp"

namespace cerulion::view {

/// A snapshot of one view server.
struct ViewStatus {
  std::uint32_t pid = 0;
  std::string domain;   ///< the domain its topics are read from
  std::string url;      ///< "ws://127.0.0.1:8765"
  std::string address;  ///< as it was told to listen on
  std::uint16_t port = 0;
  std::uint64_t started_realtime_ns = 0;
  std::uint64_t updated_realtime_ns = 0;
  ViewCounts counts;
};

/// The status as one JSON object (what the status file holds and `--json` prints).
std::string to_json(const ViewStatus& status);
/// The channels as a JSON array, as the status's "channels" (what a server's page reads from
/// /channels.json): id, topic, encoding, messages, bytes, last_size_bytes, rate_hz.
std::string to_json(const std::vector<ChannelCounts>& channels);
/// Reads to_json's output; InvalidArgument if it is not one.
Result<ViewStatus> status_from_json(std::string_view text);

/// Where status files live by default: /dev/shm, beside the topics.
inline constexpr std::string_view kDefaultStatusDirectory = "/dev/shm";
/// The file of the server of process `pid` in `domain`: "<dir>/cerulion-view.<domain>.<pid>.json".
std::string status_file_path(std::string_view directory, std::string_view domain, std::uint32_t pid);
/// Replaces the file atomically and complete (written aside, then renamed over it), mode 0600.
[[nodiscard]] Status write_status_file(const std::string& path, const ViewStatus& status);
/// One status file: NotFound, PermissionDenied (another user's), Corrupted (not a regular file, or
/// not a view status).
Result<ViewStatus> read_status_file(const std::string& path);

/// The running view servers of a domain, and what was found in place of a status file that is not one.
struct ViewListing {
  std::vector<ViewStatus> views;      ///< by pid
  std::vector<std::string> problems;  ///< one line each ("/dev/shm/... is a FIFO, not a view status file")
};
/// Every view server of `domain` whose process is alive. Files of dead processes (a server killed
/// with -9) are removed on the way. No views when none runs.
Result<ViewListing> read_status_files(std::string_view directory, std::string_view domain);

/// The running view server of any domain whose status file says it serves on `port`, if there is
/// one: a port in use is named by who uses it.
std::optional<ViewStatus> find_server_on_port(std::string_view directory, std::uint16_t port);

}  // namespace cerulion::view
