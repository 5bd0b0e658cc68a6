// SPDX-License-Identifier: Apache-2.0
// What discovery finds, as JSON (docs/json.md): `cerulion topic list --json` and `topic info --json`
// print it; a program of one's own gets the same keys.

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cerulion/core/discovery.hpp"

namespace cerulion {
namespace {

using json = nlohmann::ordered_json;

json participants_summary(const TopicInfo& info, Role role) {
  json pids = json::array();
  for (const auto& p : info.participants) {
    if (p.role == role) pids.push_back({{"pid", p.pid}, {"alive", p.alive}});
  }
  return {{"count", info.count(role)}, {"pids", pids}};
}

/// The schema's name, encoding and size, or null when the topic has none.
json schema_json(const Schema& schema) {
  if (schema.empty()) return nullptr;
  return {{"name", schema.name}, {"encoding", schema.encoding}, {"bytes", schema.data.size()}};
}

json or_null(bool present, json value) { return present ? std::move(value) : json(nullptr); }

json topic_json(const TopicInfo& info, TopicDetail detail) {
  json out = {
      {"name", info.name},
      {"domain", info.domain},
      {"segment", info.segment},
      {"mode", to_string(info.mode)},
      {"mode_fixed", info.mode_fixed},
      {"message_encoding", or_null(!info.type.message_encoding.empty(), info.type.message_encoding)},
      {"schema", schema_json(info.type.schema)},
      {"type_declared", info.type_declared},
      {"depth", info.depth},
      {"slot_count", info.slot_count},
      {"max_payload", info.max_payload},
      {"largest_payload", info.largest_payload},
      {"published", info.published},
      {"rate_hz", info.rate_hz},
      {"last_publish_realtime_ns", or_null(info.published != 0, info.last_publish_realtime_ns)},
      {"publishers", participants_summary(info, Role::Publisher)},
      {"subscribers", participants_summary(info, Role::Subscriber)},
      {"taps", participants_summary(info, Role::Tap)},
      {"owner", info.owner},
      {"group", or_null(!info.group.empty(), info.group)},
      {"foreign", info.foreign},
      {"damage", or_null(!info.damage.empty(), info.damage)},
  };
  if (detail == TopicDetail::Summary) return out;
  out["creator_pid"] = info.creator_pid;
  out["created_realtime_ns"] = info.created_realtime_ns;
  out["segment_bytes"] = info.segment_bytes;
  out["resident_bytes"] = info.resident_bytes;
  out["owner_uid"] = info.owner_uid;
  char permissions[16];
  std::snprintf(permissions, sizeof permissions, "%04o", static_cast<unsigned>(info.permissions));
  out["permissions"] = permissions;
  json participants = json::array();
  for (const auto& p : info.participants) {
    json entry = {{"role", to_string(p.role)}, {"pid", p.pid}, {"alive", p.alive}, {"messages", p.messages}};
    if (p.role != Role::Publisher) {
      entry["position"] = p.position;
      entry["lost"] = p.lost;
    }
    participants.push_back(entry);
  }
  out["participants"] = participants;
  json deaths = json::array();
  for (const auto& d : info.deaths) {
    deaths.push_back({{"number", d.number}, {"role", to_string(d.role)}, {"pid", d.pid},
                      {"noticed_realtime_ns", d.noticed_realtime_ns}, {"noticed_by", d.noticed_by}});
  }
  out["deaths"] = deaths;
  out["deaths_total"] = info.deaths_total;
  return out;
}

// Names and damage lines are the segments' bytes: one that is not UTF-8 is written with U+FFFD.
std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string to_json(const TopicInfo& info, TopicDetail detail) { return dumped(topic_json(info, detail)); }

std::string to_json(const TopicListing& listing, std::string_view domain) {
  json topics = json::array();
  for (const auto& info : listing.topics) topics.push_back(topic_json(info, TopicDetail::Summary));
  return dumped(json{{"domain", domain}, {"topics", topics}, {"problems", listing.problems}});
}

}  // namespace cerulion
