// SPDX-License-Identifier: Apache-2.0
// The status as JSON, and the files running bridges keep in /dev/shm.

#include "cerulion/bridge/status.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cerulion/core/detail/shm_directory.hpp"
#include "cerulion/core/detail/shm_owner.hpp"

namespace cerulion::bridge {

using nlohmann::json;

namespace {

constexpr const cerulion::detail::ShmKind& kStatusFile = cerulion::detail::kBridgeStatusFile;
/// Far more than a bridge of thousands of topics writes: a file larger than this is not one.
constexpr std::size_t kLargestStatusFile = 16u << 20;

}  // namespace

std::uint64_t BridgeStatus::total_lost() const noexcept {
  std::uint64_t n = 0;
  for (const auto& t : topics) n += t.lost;
  return n;
}

std::string to_json(const BridgeStatus& s) {
  json topics = json::array();
  for (const auto& t : s.topics) {
    topics.push_back({{"topic", t.topic},
                      {"dds_topic", t.dds_topic},
                      {"dds_type", t.dds_type},
                      {"direction", t.imported ? "import" : "export"},
                      {"messages", t.messages},
                      {"bytes", t.bytes},
                      {"lost", t.lost},
                      {"rate_hz", t.rate_hz},
                      {"bytes_per_s", t.bytes_per_s},
                      {"peers", t.peers}});
  }
  json j = {{"pid", s.pid},
            {"domain", s.domain},
            {"dds_domain", s.dds_domain},
            {"direction", s.direction},
            {"reliable", s.reliable},
            {"depth", s.depth},
            {"started_realtime_ns", s.started_realtime_ns},
            {"updated_realtime_ns", s.updated_realtime_ns},
            {"remote_participants", s.remote_participants},
            {"topics", topics},
            {"problems", s.problems}};
  return j.dump();
}

Result<BridgeStatus> status_from_json(std::string_view text) {
  try {
    const json j = json::parse(text);
    BridgeStatus s;
    s.pid = j.at("pid").get<std::uint32_t>();
    s.domain = j.at("domain").get<std::string>();
    s.dds_domain = j.at("dds_domain").get<std::uint32_t>();
    s.direction = j.at("direction").get<std::string>();
    s.reliable = j.at("reliable").get<bool>();
    s.depth = j.at("depth").get<std::uint32_t>();
    s.started_realtime_ns = j.at("started_realtime_ns").get<std::uint64_t>();
    s.updated_realtime_ns = j.at("updated_realtime_ns").get<std::uint64_t>();
    s.remote_participants = j.at("remote_participants").get<std::vector<std::string>>();
    s.problems = j.at("problems").get<std::vector<std::string>>();
    for (const auto& t : j.at("topics")) {
      BridgedTopic b;
      b.topic = t.at("topic").get<std::string>();
      b.dds_topic = t.at("dds_topic").get<std::string>();
      b.dds_type = t.at("dds_type").get<std::string>();
      b.imported = t.at("direction").get<std::string>() == "import";
      b.messages = t.at("messages").get<std::uint64_t>();
      b.bytes = t.at("bytes").get<std::uint64_t>();
      b.lost = t.at("lost").get<std::uint64_t>();
      b.rate_hz = t.at("rate_hz").get<double>();
      b.bytes_per_s = t.at("bytes_per_s").get<double>();
      b.peers = t.at("peers").get<std::uint32_t>();
      s.topics.push_back(std::move(b));
    }
    return s;
  } catch (const std::exception& e) {
    return Status(ErrorCode::InvalidArgument, std::string("not a bridge status: ") + e.what());
  }
}

std::string status_file_path(std::string_view directory, std::string_view domain, std::uint32_t pid) {
  return std::string(directory) + "/" + std::string(kStatusFile.prefix) + std::string(domain) + "." +
         std::to_string(pid) + ".json";
}

Status write_status_file(const std::string& path, const BridgeStatus& status) {
  const std::filesystem::path where(path);
  // Read by the same user only (core's owner rule), like every other object in /dev/shm.
  return cerulion::detail::replace_small_object(kStatusFile, where.filename().string(), to_json(status) + "\n", 0600,
                                                "bridge status " + path, where.parent_path().string());
}

Result<BridgeStatus> read_status_file(const std::string& path) {
  const std::filesystem::path where(path);
  const std::string what = "bridge status " + path;
  auto text = cerulion::detail::read_small_object(kStatusFile, where.filename().string(), kLargestStatusFile, what,
                                                  where.parent_path().string());
  if (!text) return text.status();
  auto status = status_from_json(*text);
  if (!status) return Status(ErrorCode::Corrupted, what + ": " + status.message());
  return status;
}

Result<BridgeListing> read_status_files(std::string_view directory, std::string_view domain) {
  if (::access(std::string(directory).c_str(), R_OK | X_OK) != 0) {
    return Status(ErrorCode::SystemError, "cannot read " + std::string(directory) + ": " + std::strerror(errno));
  }
  BridgeListing listing;
  const std::string prefix = std::string(kStatusFile.prefix) + std::string(domain) + ".";
  for (const auto& entry : cerulion::detail::list_objects(kStatusFile, prefix, directory)) {
    if (!entry.name.ends_with(".json")) continue;  // a copy being written (write_status_file)
    const std::string middle = entry.name.substr(prefix.size(), entry.name.size() - prefix.size() - 5);
    if (middle.empty() || middle.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stoul(middle));
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      // A bridge that was killed: its file goes too, if it is ours to remove.
      if (!cerulion::detail::is_foreign(entry.st)) ::unlink(entry.path.c_str());
      continue;
    }
    if (!entry.problem.empty()) {
      listing.problems.push_back(entry.problem);
      continue;
    }
    auto status = read_status_file(entry.path);
    if (!status) {
      if (status.code() != ErrorCode::NotFound) listing.problems.push_back(status.message());  // else gone meanwhile
    } else if (status->domain == domain) {
      listing.bridges.push_back(std::move(*status));
    }
  }
  std::sort(listing.bridges.begin(), listing.bridges.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return listing;
}

}  // namespace cerulion::bridge
