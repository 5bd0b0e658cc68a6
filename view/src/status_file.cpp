// SPDX-License-Identifier: Apache-2.0
// The status as JSON, and the files running view servers keep in /dev/shm (core's one layer of
// process status files, shm_directory.hpp).

#include "cerulion/view/status.hpp"

#include <cerrno>
#include <csignal>

#include <nlohmann/json.hpp>

#include "cerulion/core/detail/shm_directory.hpp"

namespace cerulion::view {

using nlohmann::json;

namespace {

constexpr const cerulion::detail::ShmKind& kStatusFile = cerulion::detail::kViewStatusFile;

json channels_array(const std::vector<ChannelCounts>& channels) {
  json list = json::array();
  for (const auto& ch : channels) {
    list.push_back({{"id", ch.id},
                    {"topic", ch.topic},
                    {"encoding", ch.encoding},
                    {"messages", ch.messages},
                    {"bytes", ch.bytes},
                    {"last_size_bytes", ch.last_size},
                    {"rate_hz", ch.rate_hz},
                    {"lost", ch.lost}});
  }
  return list;
}

// A topic name is bytes: one that is not UTF-8 is written with U+FFFD, never an exception.
std::string text_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string to_json(const std::vector<ChannelCounts>& channels) { return text_of(channels_array(channels)); }

std::string to_json(const ViewStatus& s) {
  const ViewCounts& c = s.counts;
  const json j = {{"pid", s.pid},
                  {"domain", s.domain},
                  {"url", s.url},
                  {"address", s.address},
                  {"port", s.port},
                  {"started_realtime_ns", s.started_realtime_ns},
                  {"updated_realtime_ns", s.updated_realtime_ns},
                  {"clients", c.clients},
                  {"subscriptions", c.subscriptions},
                  {"connections", c.connections},
                  {"refused", c.refused},
                  {"messages_sent", c.messages_sent},
                  {"sent_bytes", c.bytes_sent},
                  {"dropped", c.dropped},
                  {"lost", c.lost},
                  {"queued_bytes", c.queued_bytes},
                  {"channels", channels_array(c.channels)}};
  return text_of(j);
}

Result<ViewStatus> status_from_json(std::string_view text) {
  try {
    const json j = json::parse(text);
    ViewStatus s;
    s.pid = j.at("pid").get<std::uint32_t>();
    s.domain = j.at("domain").get<std::string>();
    s.url = j.at("url").get<std::string>();
    s.address = j.at("address").get<std::string>();
    s.port = j.at("port").get<std::uint16_t>();
    s.started_realtime_ns = j.at("started_realtime_ns").get<std::uint64_t>();
    s.updated_realtime_ns = j.at("updated_realtime_ns").get<std::uint64_t>();
    ViewCounts& c = s.counts;
    c.clients = j.at("clients").get<std::uint64_t>();
    c.subscriptions = j.at("subscriptions").get<std::uint64_t>();
    c.connections = j.at("connections").get<std::uint64_t>();
    c.refused = j.at("refused").get<std::uint64_t>();
    c.messages_sent = j.at("messages_sent").get<std::uint64_t>();
    c.bytes_sent = j.at("sent_bytes").get<std::uint64_t>();
    c.dropped = j.at("dropped").get<std::uint64_t>();
    c.lost = j.at("lost").get<std::uint64_t>();
    c.queued_bytes = j.at("queued_bytes").get<std::uint64_t>();
    for (const auto& ch : j.at("channels")) {
      c.channels.push_back({ch.at("id").get<std::uint32_t>(), ch.at("topic").get<std::string>(),
                            ch.at("encoding").get<std::string>(), ch.at("messages").get<std::uint64_t>(),
                            ch.at("bytes").get<std::uint64_t>(), ch.at("last_size_bytes").get<std::uint64_t>(),
                            ch.at("rate_hz").get<double>(), ch.at("lost").get<std::uint64_t>()});
    }
    return s;
  } catch (const std::exception& e) {
    return Status(ErrorCode::InvalidArgument, std::string("not a view status: ") + e.what());
  }
}

std::string status_file_path(std::string_view directory, std::string_view domain, std::uint32_t pid) {
  return cerulion::detail::process_file_path(kStatusFile, directory, domain, pid);
}

Status write_status_file(const std::string& path, const ViewStatus& status) {
  return cerulion::detail::write_process_file(kStatusFile, path, to_json(status) + "\n");
}

Result<ViewStatus> read_status_file(const std::string& path) {
  return cerulion::detail::read_process_status<ViewStatus>(kStatusFile, path, status_from_json);
}

Result<ViewListing> read_status_files(std::string_view directory, std::string_view domain) {
  auto found = cerulion::detail::read_process_statuses<ViewStatus>(kStatusFile, domain, directory, status_from_json);
  if (!found) return found.status();
  return ViewListing{std::move(found->statuses), std::move(found->problems)};
}

std::optional<ViewStatus> find_server_on_port(std::string_view directory, std::uint16_t port) {
  for (const auto& entry : cerulion::detail::list_objects(kStatusFile, {}, directory)) {
    if (!entry.problem.empty() || !entry.name.ends_with(".json")) continue;
    auto status = read_status_file(entry.path);
    if (!status || status->port != port) continue;
    if (::kill(static_cast<pid_t>(status->pid), 0) != 0 && errno == ESRCH) continue;  // killed with -9
    return std::move(*status);
  }
  return std::nullopt;
}

}  // namespace cerulion::view
