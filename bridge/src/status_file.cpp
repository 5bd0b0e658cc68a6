// SPDX-License-Identifier: Apache-2.0
// The status as JSON, and the files running bridges keep in /dev/shm.

#include "cerulion/bridge/status.hpp"

#include <nlohmann/json.hpp>

#include "cerulion/core/detail/shm_directory.hpp"

namespace cerulion::bridge {

using nlohmann::json;

namespace {

constexpr const cerulion::detail::ShmKind& kStatusFile = cerulion::detail::kBridgeStatusFile;

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
  return cerulion::detail::process_file_path(kStatusFile, directory, domain, pid);
}

Status write_status_file(const std::string& path, const BridgeStatus& status) {
  return cerulion::detail::write_process_file(kStatusFile, path, to_json(status) + "\n");
}

Result<BridgeStatus> read_status_file(const std::string& path) {
  return cerulion::detail::read_process_status<BridgeStatus>(kStatusFile, path, status_from_json);
}

Result<BridgeListing> read_status_files(std::string_view directory, std::string_view domain) {
  auto found = cerulion::detail::read_process_statuses<BridgeStatus>(kStatusFile, domain, directory, status_from_json);
  if (!found) return found.status();
  return BridgeListing{std::move(found->statuses), std::move(found->problems)};
}

}  // namespace cerulion::bridge
