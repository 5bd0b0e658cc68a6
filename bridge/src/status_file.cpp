// SPDX-License-Identifier: Apache-2.0
// The status as JSON, and the files running bridges keep in /dev/shm.

#include "cerulion/bridge/status.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace cerulion::bridge {

using nlohmann::json;

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
  return std::string(directory) + "/cerulion-bridge." + std::string(domain) + "." + std::to_string(pid) + ".json";
}

Status write_status_file(const std::string& path, const BridgeStatus& status) {
  const std::string aside = path + ".tmp";
  {
    std::ofstream out(aside, std::ios::trunc);
    out << to_json(status) << '\n';
    if (!out.flush()) return Status(ErrorCode::SystemError, "cannot write " + aside + ": " + std::strerror(errno));
  }
  if (std::rename(aside.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(aside.c_str());
    return Status(ErrorCode::SystemError, "cannot replace " + path + ": " + std::strerror(e));
  }
  return {};
}

Result<std::vector<BridgeStatus>> read_status_files(std::string_view directory, std::string_view domain) {
  std::vector<BridgeStatus> out;
  const std::string prefix = "cerulion-bridge." + std::string(domain) + ".";
  std::error_code ec;
  std::filesystem::directory_iterator it(std::string(directory), ec);
  if (ec) return Status(ErrorCode::SystemError, "cannot read " + std::string(directory) + ": " + ec.message());
  for (const auto& entry : it) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with(prefix) || !file.ends_with(".json")) continue;
    const std::string middle = file.substr(prefix.size(), file.size() - prefix.size() - 5);
    if (middle.empty() || middle.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stoul(middle));
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
      std::filesystem::remove(entry.path(), ec);  // a bridge that was killed: its file goes too
      continue;
    }
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto status = status_from_json(text.str());
    if (status && status->domain == domain) out.push_back(std::move(*status));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace cerulion::bridge
