// SPDX-License-Identifier: Apache-2.0
// The protocol's messages as JSON (nlohmann), and client requests parsed defensively: a request
// is a JSON object with a string "op", and every id a non-negative integer that fits 32 bits.

#include "cerulion/view/protocol.hpp"

#include <nlohmann/json.hpp>

#include "cerulion/core/base64.hpp"
#include "cerulion/recorder/profile.hpp"

namespace cerulion::view {
namespace {

using nlohmann::json;

// Dumps with invalid UTF-8 replaced rather than thrown: topic names and schemas are the
// publishers' text, and one bad byte must not take the server down.
std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool as_u32(const json& value, std::uint32_t& out) {
  if (!value.is_number_integer()) return false;
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > 0xffffffffu) return false;
    out = static_cast<std::uint32_t>(v);
    return true;
  }
  const auto v = value.get<std::int64_t>();
  if (v < 0 || v > 0xffffffffll) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

ClientRequest parse_subscribe(const json& j) {
  const auto it = j.find("subscriptions");
  if (it == j.end() || !it->is_array()) return BadRequest{"subscribe: 'subscriptions' must be an array"};
  SubscribeRequest request;
  for (const auto& entry : *it) {
    Subscription s;
    if (!entry.is_object() || !entry.contains("id") || !entry.contains("channelId") || !as_u32(entry["id"], s.id) ||
        !as_u32(entry["channelId"], s.channel_id)) {
      return BadRequest{"subscribe: each subscription needs integer 'id' and 'channelId' (0 to 2^32-1)"};
    }
    request.subscriptions.push_back(s);
  }
  return request;
}

ClientRequest parse_unsubscribe(const json& j) {
  const auto it = j.find("subscriptionIds");
  if (it == j.end() || !it->is_array()) return BadRequest{"unsubscribe: 'subscriptionIds' must be an array"};
  UnsubscribeRequest request;
  for (const auto& entry : *it) {
    std::uint32_t id = 0;
    if (!as_u32(entry, id)) return BadRequest{"unsubscribe: subscription ids are integers (0 to 2^32-1)"};
    request.subscription_ids.push_back(id);
  }
  return request;
}

}  // namespace

bool binary_schema_encoding(std::string_view schema_encoding) {
  return schema_encoding == "protobuf" || schema_encoding == "flatbuffer";
}

Channel channel_for(std::uint32_t id, std::string_view topic, const TopicType& type) {
  // As a recording's channel carries the type (the profile owns the mapping); the protocol only
  // carries a binary schema as base64.
  auto carried = recorder::profile::channel_type(type);
  Channel c;
  c.id = id;
  c.topic = std::string(topic);
  c.encoding = std::move(carried.message_encoding);
  if (!carried.schema) return c;
  const auto& schema = *carried.schema;
  c.schema_name = schema.name;
  c.schema_encoding = schema.encoding;
  c.schema = binary_schema_encoding(schema.encoding)
                 ? base64_encode(std::span<const std::byte>(schema.data.data(), schema.data.size()))
                 : std::string(reinterpret_cast<const char*>(schema.data.data()), schema.data.size());
  return c;
}

std::string server_info_json(std::string_view name, std::string_view session_id) {
  return dumped({{"op", "serverInfo"},
                 {"name", name},
                 {"capabilities", json::array()},
                 {"metadata", json::object()},
                 {"sessionId", session_id}});
}

std::string advertise_json(const std::vector<Channel>& channels) {
  json list = json::array();
  for (const auto& c : channels) {
    json entry = {{"id", c.id}, {"topic", c.topic}, {"encoding", c.encoding}, {"schemaName", c.schema_name},
                  {"schema", c.schema}};
    if (!c.schema_encoding.empty()) entry["schemaEncoding"] = c.schema_encoding;
    list.push_back(std::move(entry));
  }
  return dumped({{"op", "advertise"}, {"channels", std::move(list)}});
}

std::string unadvertise_json(const std::vector<std::uint32_t>& channel_ids) {
  return dumped({{"op", "unadvertise"}, {"channelIds", channel_ids}});
}

std::string status_json(StatusLevel level, std::string_view message) {
  return dumped({{"op", "status"}, {"level", static_cast<int>(level)}, {"message", message}});
}

std::array<std::byte, kMessageHeaderBytes> message_header(std::uint32_t subscription_id, std::uint64_t receive_ns) {
  std::array<std::byte, kMessageHeaderBytes> h{};
  h[0] = std::byte{1};
  for (int i = 0; i < 4; ++i) h[1 + i] = static_cast<std::byte>((subscription_id >> (8 * i)) & 0xff);
  for (int i = 0; i < 8; ++i) h[5 + i] = static_cast<std::byte>((receive_ns >> (8 * i)) & 0xff);
  return h;
}

ClientRequest parse_client_request(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return BadRequest{"not JSON"};
  if (!j.is_object()) return BadRequest{"not a JSON object"};
  const auto op = j.find("op");
  if (op == j.end() || !op->is_string()) return BadRequest{"no string 'op'"};
  const auto& name = op->get_ref<const std::string&>();
  if (name == "subscribe") return parse_subscribe(j);
  if (name == "unsubscribe") return parse_unsubscribe(j);
  return UnsupportedRequest{name};
}

}  // namespace cerulion::view
